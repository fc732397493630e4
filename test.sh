#!/usr/bin/env bash
# The whole test suite. Sets up .venv on first use. Extra arguments go to pytest.
# `./test.sh --fast` leaves out the long end-to-end tests marked `slow` (pytest -m "not slow").
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh test
args=()
for arg in "$@"; do
    if [ "$arg" = "--fast" ]; then
        args+=(-m "not slow")
    else
        args+=("$arg")
    fi
done
exec .venv/bin/python -m pytest -n 2 ${args[@]+"${args[@]}"}

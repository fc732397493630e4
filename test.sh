#!/usr/bin/env bash
# The whole test suite. Sets up .venv on first use. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh test
exec .venv/bin/python -m pytest -n 2 "$@"

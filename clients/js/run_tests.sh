#!/usr/bin/env bash
# The JavaScript reference client's tests: installs the npm packages when needed, then node --test.
# HEARTS_GOLDEN_DIR (optional) points at golden vectors from `python -m export.fixtures DIR`;
# by default the committed test/fixtures are used.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
exec node --test test/

#!/usr/bin/env bash
# The main job on its built-in default: a random-play demo game, then the engine benchmark
# (beside OpenSpiel's hearts). Sets up .venv on first use. Extra arguments go to `hearts demo`.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh bench
exec .venv/bin/hearts demo "$@"

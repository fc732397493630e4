#!/usr/bin/env bash
# The main job on its built-in default: an arena leaderboard of the built-in bots (random, easy,
# normal, hard) and the shipped trained policy (ppo-classic) on 2,000 fixed duplicate deals with
# seats rotated, written to results/arena (table, Markdown, CSV, JSON and a PNG plot).
# Sets up .venv on first use (with the CPU torch wheel the trained policy needs).
# Extra arguments go to `hearts arena` (see `hearts arena --help`).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh train
exec .venv/bin/hearts arena --out results/arena "$@"

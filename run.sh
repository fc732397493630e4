#!/usr/bin/env bash
# The main job on its built-in default: an arena leaderboard of the built-in bots (random, easy,
# normal, hard) and the shipped trained policy (ppo-classic): a round-robin of the five tables of
# four of them, 400 fixed duplicate deals at each table, each deal played 4 times with the seats
# rotated (8,000 games, about 10 s), ranked by penalty points per hand; written to results/arena
# (table, Markdown, CSV, JSON and a PNG plot).
# Sets up .venv on first use (with the CPU torch wheel the trained policy needs).
# Extra arguments go to `hearts arena` (see `hearts arena --help`).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh train
echo "(the hearts and tensorboard commands live in .venv: run 'source .venv/bin/activate' in a new shell)" >&2
exec .venv/bin/hearts arena --out results/arena "$@"

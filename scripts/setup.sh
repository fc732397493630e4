#!/usr/bin/env bash
# Create .venv (if needed) and install the project with the given extras, e.g. `scripts/setup.sh test`.
# Re-runs pip only when pyproject.toml or the extras changed, so repeated commands start fast.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
stamp_want="$(sha256sum pyproject.toml | cut -c1-16) extras=${extras}"
if [ ! -f .venv/.setup-stamp ] || ! grep -qxF "$stamp_want" .venv/.setup-stamp; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    target="."
    [ -n "$extras" ] && target=".[${extras}]"
    .venv/bin/python -m pip install --quiet -e "$target"
    echo "$stamp_want" >> .venv/.setup-stamp
fi

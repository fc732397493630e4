#!/usr/bin/env bash
# What the browser tests need beyond Python: Debian's chromium (the export parity check in
# tests/test_export.py and the web game in tests/test_serve_browser.py, which Playwright drives
# without downloading a browser), and the JavaScript client's npm packages (clients/js/setup.sh).
# Node.js 20 and npm come with the machine. Safe to re-run: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "setup_clients: chromium is missing and cannot be installed here (apt-get install chromium);" \
             "the browser test will be skipped" >&2
    fi
fi
if command -v npm >/dev/null 2>&1; then
    clients/js/setup.sh
else
    echo "setup_clients: npm is missing; the JavaScript client tests will be skipped" >&2
fi

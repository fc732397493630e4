#!/usr/bin/env bash
# Install the client's npm packages (onnxruntime-web, and onnxruntime-node for the tests) when
# node_modules is missing or older than package-lock.json. onnxruntime-node's post-install step
# downloads extra binaries (it fails offline): ONNXRUNTIME_NODE_INSTALL=skip skips it, its CPU
# binaries are bundled in the package. A lock keeps parallel test workers from installing twice.
set -euo pipefail
cd "$(dirname "$0")"
exec 9>.setup.lock
flock 9
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi

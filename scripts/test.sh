#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/make-samples.sh
swift build --build-tests
swift test --skip-build --parallel "$@"

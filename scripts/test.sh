#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/make-samples.sh
swift build --build-tests
# Serial: several suites present frames on the real clock, and CPU-heavy suites running beside them
# would starve the cooperative thread pool on a 2-core machine (see docs/architecture.md, known limits).
swift test --skip-build --no-parallel "$@"
# The API documentation of every library (DocC), warnings as errors: broken symbol links fail (about 1 min).
if [[ $# -eq 0 ]]; then scripts/docs.sh; fi
# The web client's JavaScript modules, with the coordinator vectors the Swift tests also run (Node's own runner).
if [[ $# -eq 0 ]]; then node --test Tests/Web/; fi
# The page in headless Chromium (Playwright for Python on Debian's chromium) against the debug build's relay,
# with mpv and headless members: joins, sync, failures, the secret never sent (Tests/Browser, about 80 s).
if [[ $# -eq 0 ]]; then COPLAY_BIN="$(swift build --show-bin-path)/coplay" python3 -m unittest discover -s Tests/Browser -v; fi

#!/usr/bin/env bash
# The main job on a fresh machine: installs what is missing, builds coplay, runs the demo
# (an embedded relay and three players in one process, a scripted tour, a live sync summary).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/make-samples.sh
swift build -c release --product coplay
"$(swift build -c release --show-bin-path)/coplay" demo samples/cfr-25.mp4 samples/cfr-60.mp4 "$@"

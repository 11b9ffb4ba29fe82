#!/usr/bin/env bash
# The main job on a fresh machine: installs what is missing, builds coplay, runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/make-samples.sh
swift build -c release --product coplay
bin=$(swift build -c release --show-bin-path)/coplay

# Until `coplay demo` exists: serve the reference clock on loopback and query it.
port=${COPLAY_DEMO_PORT:-12123}
"$bin" time serve --listen "127.0.0.1:$port" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 0.5
"$bin" time query "127.0.0.1:$port" --samples 8 "$@"

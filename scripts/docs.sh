#!/usr/bin/env bash
# Builds the DocC documentation of every library product (swift-docc-plugin), warnings as errors:
# a broken ``Symbol`` link or an undocumented parameter fails. Archives land in
# .build/plugins/Swift-DocC/outputs/<Module>.doccarchive. Runs after `swift build` (it reuses that build).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(ClockSync MediaProbe GroupSessions SessionRelay SessionRelayPostgres PlaybackCoordinator MPVControl GroupChat BenchmarkSupport)
args=()
for target in "${targets[@]}"; do args+=(--target "$target"); done
swift package generate-documentation "${args[@]}" --warnings-as-errors "$@"

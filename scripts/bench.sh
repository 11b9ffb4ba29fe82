#!/usr/bin/env bash
# Builds and runs the Benchmarks/ package (ordo-one/benchmark) in release mode.
# Not part of scripts/test.sh: a cold build of the package and its dependencies takes 10+ minutes
# on a 2-core machine. See docs/benchmarks.md, "Benchmarks/ package".
#
#   scripts/bench.sh                                   # every target (a few minutes once built)
#   scripts/bench.sh --target RelayBenchmarks          # one target; any `benchmark` arguments work
#   scripts/bench.sh baseline update main              # save a named baseline (Benchmarks/.benchmarkBaselines/)
#   scripts/bench.sh baseline compare main             # this run against it
#   scripts/bench.sh --resolve-only                    # only check that the package resolves (CI-safe, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cd Benchmarks
if [[ "${1:-}" == "--resolve-only" ]]; then
  swift package resolve
  exit 0
fi
# The plugin writes baselines into the package directory; the relay benchmarks use loopback sockets.
exec swift package --allow-writing-to-package-directory benchmark "$@"

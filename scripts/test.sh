#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says how long it took (on stderr), so a slow CI run shows where the time went.
stage() { local name=$1 start=$SECONDS; shift; "$@"; echo "test.sh: $name took $((SECONDS - start)) s (total $SECONDS s)" >&2; }
# A test stage with a time budget (seconds): a hung test stops its stage, which then names the tests
# still running (scripts/unfinished-tests.py), instead of the run waiting silently for CI's limit.
# Each budget is several times the stage's usual length on the 2-core machine.
watched() {
  local budget=$1; shift
  local log status
  log=$(mktemp)
  set +e
  timeout --kill-after=30 "$budget" "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -eq 124 || $status -eq 137 ]]; then
    echo "test.sh: stopped after its budget of $budget s: $*" >&2
    scripts/unfinished-tests.py "$log" >&2
  fi
  rm -f "$log"
  return "$status"
}
stage "install-deps" scripts/install-deps.sh
stage "make-samples" scripts/make-samples.sh
stage "build" swift build --build-tests
# Two passes. The modules whose tests assert sub-millisecond agreement on the real clock (frames presented
# by headless players, mpv, the coplay processes) run one test at a time and alone: on a 2-core machine any
# test beside them moves their figures. Everything else runs in parallel: child processes go through
# swift-subprocess (nothing blocks the cooperative pool), simulations run on manual clocks, servers take
# ports from the kernel. With arguments (e.g. --filter NAME), one serial run as before.
# The randomized group model (PlaybackCoordinatorTests.GroupModelTests, about 80 s) runs on a simulated clock
# but computes without pause: beside the parallel pass it took the cores from tests that wait on real time
# (outbox races, relay fleets timed out), so it runs in the serial pass, alone, with its module.
REAL_TIME='CoplayCLITests|PlaybackIntegrationTests|PlaybackCoordinatorTests|MPVControlTests|SyncBenchTests'
if [[ $# -eq 0 ]]; then
  stage "parallel tests" watched 900 swift test --skip-build --skip "$REAL_TIME"
  stage "real-time tests (serial)" watched 2700 swift test --skip-build --no-parallel --filter "$REAL_TIME"
else
  swift test --skip-build --no-parallel "$@"
fi
# The API documentation of every library (DocC), warnings as errors: broken symbol links fail (about 1 min).
if [[ $# -eq 0 ]]; then stage "docs" scripts/docs.sh; fi
# The web client's JavaScript modules, with the coordinator vectors the Swift tests also run (Node's own runner).
if [[ $# -eq 0 ]]; then stage "node tests" watched 600 node --test Tests/Web/; fi
# The page in headless Chromium (Playwright for Python on Debian's chromium) against the debug build's relay,
# with mpv and headless members: joins, sync, failures, the secret never sent (Tests/Browser, about 80 s).
if [[ $# -eq 0 ]]; then
  COPLAY_BIN="$(swift build --show-bin-path)/coplay" stage "browser tests" watched 1500 python3 -m unittest discover -s Tests/Browser -v
fi

#!/usr/bin/env bash
# A long session's retained keys, with real processes: a relay (with Prometheus metrics), a host playing
# a clip, then N one-shot `coplay control suspend` members in turn (each a new participant, so each a new
# retained suspension slot at the relay), then a late `coplay join`. The relay keeps at most 256 retained
# keys per session; suspension slots are `evictable` (docs/protocol.md, "Data frames"), so every suspend
# should be confirmed and the relay should count evictions instead of `quota_exceeded` errors.
#
#   scripts/retained-slots.sh [N] [COPLAY]      N one-shot suspends (default 270), COPLAY the binary
#                                               (default: the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-270}
coplay=${2:-"$(swift build -c release --show-bin-path)/coplay"}
media="$PWD/samples/cfr-25.mp4"
[[ -x $coplay ]] || { echo "no coplay binary at $coplay (swift build -c release --product coplay)" >&2; exit 2; }
[[ -f $media ]] || { echo "no $media (scripts/make-samples.sh)" >&2; exit 2; }
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
relay_port=$(free_port)
metrics_port=$(free_port)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$coplay" serve --listen "127.0.0.1:$relay_port" --memory-only --metrics "127.0.0.1:$metrics_port" > "$work/serve.log" 2>&1 &
pids+=($!)
sleep 1
"$coplay" host "$media" --relay "127.0.0.1:$relay_port" --name host --invite-file "$work/invite" > "$work/host.out" 2> "$work/host.err" &
pids+=($!)
for _ in $(seq 1 100); do [[ -s $work/invite ]] && break; sleep 0.1; done
[[ -s $work/invite ]] || { echo "the host did not write its invite" >&2; exit 1; }
"$coplay" control --invite-file "$work/invite" play > /dev/null

failed=0
for i in $(seq 1 "$count"); do
  if ! "$coplay" control --invite-file "$work/invite" suspend 0.05 > /dev/null 2> "$work/control.err"; then
    failed=$((failed + 1))
    echo "suspend $i failed: $(tail -1 "$work/control.err")"
  fi
  (( i % 50 == 0 )) && echo "$i of $count suspends, $failed failed" >&2
done
echo "one-shot suspends: $count, failed: $failed"
curl -s "http://127.0.0.1:$metrics_port/metrics" | grep -E '^coplay_relay_(retained_evicted_total|errors_total)' || true
# A late joiner still receives the group's state (the clip has ended by now: it holds the end).
timeout 8 "$coplay" join --invite-file "$work/invite" "$media" --name late > "$work/late.out" 2>&1 || true
echo "late joiner: $(grep -o '"type":"[a-zA-Z]*"' "$work/late.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
[[ $failed -eq 0 ]]

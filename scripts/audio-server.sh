#!/usr/bin/env bash
# Runs a private PulseAudio server with a null sink ("room"), for mpv --ao=pulse without a desktop
# (as root too: no D-Bus, no session). The null sink consumes sound on a real timer, so mpv runs on
# an audio clock (its current-ao is pulse); `parec -d room.monitor` records what was played.
#
#   scripts/audio-server.sh DIR          # runs in the foreground until killed; clients use
#                                        #   PULSE_SERVER=unix:DIR/native
#   scripts/audio-server.sh DIR &        # in the background; DIR/native appears when it is ready
#
# `coplay bench` starts its own (the mpv-audio scenarios) and so do the tests that need one.
set -euo pipefail
dir=${1:?usage: scripts/audio-server.sh DIR}
command -v pulseaudio >/dev/null || { echo "audio-server: pulseaudio not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
mkdir -p "$dir"
export PULSE_RUNTIME_PATH=$dir
exec pulseaudio -n --daemonize=no --exit-idle-time=-1 --use-pid-file=no --log-target=stderr \
  -L "module-native-protocol-unix socket=$dir/native auth-anonymous=1" \
  -L "module-null-sink sink_name=room"

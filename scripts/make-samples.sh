#!/usr/bin/env bash
# Generates the sample media in samples/ with the ffmpeg CLI and lavfi test sources (testsrc2, sine).
#
# Idempotent: a file that already exists is left alone (delete it, or samples/*, to regenerate).
# The files are not committed: every machine generates its own, and MediaProbe's tests compare
# MediaProbe with that same machine's ffprobe, so the FFmpeg version does not matter.
#
#   scripts/make-samples.sh            # all samples, into samples/
#   SAMPLES_DIR=/tmp/s scripts/make-samples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${SAMPLES_DIR:-samples}
mkdir -p "$out"
command -v ffmpeg >/dev/null || { echo "make-samples: ffmpeg not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

ff=(ffmpeg -nostdin -hide_banner -loglevel error -y)
# Small, fast, deterministic video: 320x240, x264 "veryfast" keeps B-frames (so decode order != presentation order).
x264=(-c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -threads 1 -bitexact)
aac=(-c:a aac -b:a 48k -ac 2)

# make NAME CMD...: runs CMD writing to a temporary file, renamed to NAME only when CMD succeeds.
make() {
  local name=$1; shift
  local dst="$out/$name"
  [[ -s "$dst" ]] && return 0
  local tmp="$out/.tmp-$$-$name"
  if "$@" "$tmp"; then
    mv -f "$tmp" "$dst"
    echo "make-samples: $dst" >&2
  else
    rm -f "$tmp"
    echo "make-samples: failed to make $dst" >&2
    return 1
  fi
}
video() { echo "testsrc2=size=320x240:rate=$1:duration=$2"; }
tone() { echo "sine=frequency=$1:sample_rate=48000:duration=$2"; }

# Constant frame rates, one per common rate, across containers.
make cfr-23.976.mp4 "${ff[@]}" -f lavfi -i "$(video 24000/1001 3)" -f lavfi -i "$(tone 440 3)" \
  "${x264[@]}" "${aac[@]}" -shortest -f mp4
make cfr-24.mkv "${ff[@]}" -f lavfi -i "$(video 24 3)" -f lavfi -i "$(tone 330 3)" \
  "${x264[@]}" "${aac[@]}" -metadata:s:a:0 language=fra -shortest -f matroska
make cfr-25.mp4 "${ff[@]}" -f lavfi -i "$(video 25 3)" "${x264[@]}" -f mp4
make cfr-29.97.mov "${ff[@]}" -f lavfi -i "$(video 30000/1001 3)" -f lavfi -i "$(tone 550 3)" \
  "${x264[@]}" "${aac[@]}" -metadata:s:a:0 language=eng -shortest -f mov
make cfr-30.webm "${ff[@]}" -f lavfi -i "$(video 30 3)" -f lavfi -i "$(tone 660 3)" \
  -c:v libvpx -deadline realtime -cpu-used 8 -b:v 200k -threads 1 -c:a libopus -b:a 48k -shortest -f webm
make cfr-50.ts "${ff[@]}" -f lavfi -i "$(video 50 2)" -f lavfi -i "$(tone 770 2)" \
  "${x264[@]}" "${aac[@]}" -shortest -f mpegts
make cfr-59.94.ts "${ff[@]}" -f lavfi -i "$(video 60000/1001 2)" "${x264[@]}" -f mpegts
make cfr-60.mp4 "${ff[@]}" -f lavfi -i "$(video 60 2)" -f lavfi -i "$(tone 880 2)" \
  "${x264[@]}" "${aac[@]}" -shortest -f mp4

# Variable frame rate: 2 s at 24 fps, then 1 s at 60 fps, then frames 100 ms apart (millisecond timestamps).
vfr_pts='if(lt(N,48),N*1000/24,if(lt(N,108),2000+(N-48)*1000/60,3000+(N-108)*100))/1000/TB'
make vfr.mkv "${ff[@]}" -f lavfi -i "$(video 60 4)" -vf "settb=1/1000,setpts='$vfr_pts'" -frames:v 120 \
  "${x264[@]}" -fps_mode vfr -f matroska
make vfr.mp4 "${ff[@]}" -f lavfi -i "$(video 60 4)" -vf "settb=1/1000,setpts='$vfr_pts'" -frames:v 120 \
  "${x264[@]}" -fps_mode vfr -video_track_timescale 1000 -f mp4

# A non-zero start time: timestamps offset by 10 s.
make start-10s.mkv "${ff[@]}" -f lavfi -i "$(video 25 2)" -f lavfi -i "$(tone 440 2)" \
  "${x264[@]}" "${aac[@]}" -shortest -output_ts_offset 10 -f matroska

# An edit list: a stream copy cut between keyframes keeps the frames from the previous keyframe
# (needed to decode) and writes an edit list that hides them.
src="$out/.tmp-$$-edit-source.mp4"
if [[ ! -s "$out/edit-list.mp4" ]]; then
  "${ff[@]}" -f lavfi -i "$(video 25 5)" "${x264[@]}" -g 25 -f mp4 "$src"
  make edit-list.mp4 "${ff[@]}" -ss 1.5 -i "$src" -t 2 -c copy -f mp4
  rm -f "$src"
fi

# Audio only.
make tone.mp3 "${ff[@]}" -f lavfi -i "$(tone 440 3)" -c:a libmp3lame -b:a 64k -f mp3
make tone.flac "${ff[@]}" -f lavfi -i "$(tone 440 3)" -c:a flac -f flac
make tone.wav "${ff[@]}" -f lavfi -i "$(tone 440 2)" -c:a pcm_s16le -f wav
make tone.opus "${ff[@]}" -f lavfi -i "$(tone 440 3)" -c:a libopus -b:a 48k -f opus

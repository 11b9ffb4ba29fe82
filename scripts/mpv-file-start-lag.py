#!/usr/bin/env python3
"""Measure how late mpv's picture and sound begin at a start from a file's beginning, and what an
`audio-delay` set ahead of the start does to them.

Starts its own mpv (`--vo=null --ao=AO --keep-open=always --hr-seek=yes --video-timing-offset=0
--af=scaletempo2`, paused, no config) on MEDIA (a file with a picture and sound), then N starts,
alternating `audio-delay` DELAY and 0: set the delay, exact seek to 0 (or, with --reload, load the file
afresh), wait, unpause, and poll `time-pos` and `audio-pts` every 2 ms for 0.45 s. A start's picture lag
is the least (time since the unpause write - time-pos) after the first 0.1 s: how far the picture runs
behind a timeline that began at the write; the sound lag is the same with `audio-pts`. CLOCK_MONOTONIC.

    python3 scripts/mpv-file-start-lag.py MEDIA --delay -0.03 --starts 6
    PULSE_SERVER=unix:DIR/native python3 scripts/mpv-file-start-lag.py MEDIA --ao pulse   # scripts/audio-server.sh DIR

Measured 28 Nov 2026 (mpv 0.35, the benchmark's media-90s-audio.mp4: H.264 25 fps + AAC), docs/mpv.md
("Starts at a file's beginning"): with delay 0 the picture 35.6-37.3 ms and the sound 30.6-31.3 ms late
at every start, `--ao=null` and PulseAudio alike; with `audio-delay -0.03` set before the seek or the
load, the picture 0.8-1.4 ms; set between the seek and the start, about a third of it took.
"""
import argparse
import json
import os
import socket
import subprocess
import tempfile
import time


class MPV:
    """One mpv with a JSON IPC connection (request/reply, events skipped)."""

    def __init__(self, ao):
        self.socket_path = os.path.join(tempfile.mkdtemp(prefix="mpv-start-lag-"), "mpv.sock")
        self.process = subprocess.Popen([
            "mpv", "--no-config", "--idle=yes", "--pause", "--vo=null", f"--ao={ao}", "--keep-open=always",
            "--hr-seek=yes", "--video-timing-offset=0", "--af=scaletempo2",
            f"--input-ipc-server={self.socket_path}", "--really-quiet",
        ])
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket_path):
            if time.monotonic() > deadline:
                raise SystemExit("mpv did not open its IPC socket")
            time.sleep(0.02)
        self.connection = socket.socket(socket.AF_UNIX)
        self.connection.connect(self.socket_path)
        self.stream = self.connection.makefile("rwb")
        self.request = 0

    def command(self, *arguments):
        self.request += 1
        line = json.dumps({"command": list(arguments), "request_id": self.request}) + "\n"
        self.stream.write(line.encode())
        self.stream.flush()
        while True:
            reply = json.loads(self.stream.readline())
            if reply.get("request_id") == self.request:
                return reply

    def quit(self):
        try:
            self.command("quit")
        except (OSError, ValueError):
            pass
        self.process.wait(timeout=10)


def start(mpv, media, delay, reload):
    """One start from the file's beginning with `audio-delay` = delay; (picture lag, sound lag) in ms."""
    mpv.command("set_property", "audio-delay", delay)
    if reload:
        mpv.command("loadfile", media)
        time.sleep(0.8)
    mpv.command("seek", 0, "absolute+exact")
    time.sleep(0.4)
    began = time.monotonic()
    mpv.command("set_property", "pause", False)
    picture, sound = [], []
    while (elapsed := time.monotonic() - began) < 0.45:
        position = mpv.command("get_property", "time-pos").get("data")
        audio = mpv.command("get_property", "audio-pts").get("data")
        if elapsed > 0.1:
            if position is not None:
                picture.append(elapsed - position)
            if audio is not None:
                sound.append(elapsed - audio)
        time.sleep(0.002)
    mpv.command("set_property", "pause", True)
    return (min(picture) * 1e3 if picture else None, min(sound) * 1e3 if sound else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("media")
    parser.add_argument("--delay", type=float, default=-0.03, help="audio-delay of every other start (s)")
    parser.add_argument("--starts", type=int, default=6)
    parser.add_argument("--ao", default="null")
    parser.add_argument("--reload", action="store_true", help="load the file afresh before each start")
    options = parser.parse_args()
    mpv = MPV(options.ao)
    try:
        mpv.command("loadfile", options.media)
        time.sleep(0.8)
        for number in range(options.starts):
            delay = options.delay if number % 2 == 0 else 0.0
            picture, sound = start(mpv, options.media, delay, options.reload)
            show = lambda value: "-" if value is None else f"{value:.1f}"
            print(f"start {number + 1}: audio-delay {delay:+.3f} s: picture {show(picture)} ms, sound {show(sound)} ms late")
    finally:
        mpv.quit()


if __name__ == "__main__":
    main()

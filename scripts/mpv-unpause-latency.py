#!/usr/bin/env python3
"""Measure how precisely mpv starts moving after `set_property pause false`.

Starts its own mpv (`--vo=null --ao=null --video-timing-offset=0 --hr-seek=yes --keep-open=always`,
paused, no config) on MEDIA, then N times: pause, exact seek to 0, wait 0.4 s, unpause, and poll
`time-pos` on a second IPC connection until it moves. A start's lag is the midpoint of the last poll
before the change and the first after it, minus the write of the unpause, minus the position gained (a
frame interval): how long after the write mpv's clock started. CLOCK_MONOTONIC throughout. Prints
mean, standard deviation, min and max (ms), then every start.

    python3 scripts/mpv-unpause-latency.py samples/cfr-25.mp4 20
    python3 scripts/mpv-unpause-latency.py clip-with-audio.mp4 20 --mpv-arg=--af=scaletempo2

docs/benchmarks.md ("The queue scenario", where the mpv start jitter comes from) quotes its figures:
0.22 ms, standard deviation 0.05 ms, on samples/cfr-25.mp4 on an idle machine.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time


class Connection:
    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_id = 0

    def request(self, command: list) -> tuple[dict, float, float]:
        """The reply to `command`, with the monotonic instants of the write and of the reply."""
        self.next_id += 1
        sent = time.clock_gettime(time.CLOCK_MONOTONIC)
        self.sock.sendall((json.dumps({"command": command, "request_id": self.next_id}) + "\n").encode())
        while True:
            message = json.loads(self.reader.readline())
            if message.get("request_id") == self.next_id:
                return message, sent, time.clock_gettime(time.CLOCK_MONOTONIC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("media")
    parser.add_argument("starts", type=int, nargs="?", default=20)
    parser.add_argument("--mpv-arg", action="append", default=[], help="another mpv option (repeatable)")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="mpv-unpause-")
    path = os.path.join(directory, "mpv.sock")
    mpv = subprocess.Popen(
        ["mpv", "--no-config", "--vo=null", "--ao=null", "--video-timing-offset=0", "--hr-seek=yes",
         "--keep-open=always", "--pause", f"--input-ipc-server={path}", *args.mpv_arg, args.media],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if time.monotonic() > deadline or mpv.poll() is not None:
                raise SystemExit(f"mpv did not open its IPC socket for {args.media}")
            time.sleep(0.05)
        time.sleep(0.5)
        control, poll = Connection(path), Connection(path)
        lags = []
        for _ in range(args.starts):
            control.request(["set_property", "pause", True])
            control.request(["seek", 0, "absolute+exact"])
            time.sleep(0.4)
            start = poll.request(["get_property", "time-pos"])[0].get("data")
            _, written, _ = control.request(["set_property", "pause", False])
            before = None
            while True:
                reply, sent, received = poll.request(["get_property", "time-pos"])
                position = reply.get("data")
                now = (sent + received) / 2
                if position is not None and start is not None and position > start + 1e-4:
                    change = now if before is None else (before + now) / 2
                    lags.append(((change - written) - (position - start)) * 1000)
                    break
                if received - written > 1:
                    break
                before = now
            time.sleep(0.2)
    finally:
        mpv.terminate()
        mpv.wait()
    if not lags:
        raise SystemExit("mpv never moved after an unpause")
    print(f"start lag (ms): n {len(lags)}, mean {statistics.mean(lags):.3f}, sd {statistics.pstdev(lags):.3f}, "
          f"min {min(lags):.3f}, max {max(lags):.3f}")
    print(" ".join(f"{lag:.2f}" for lag in lags))


if __name__ == "__main__":
    main()

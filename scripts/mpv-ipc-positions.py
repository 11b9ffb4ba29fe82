#!/usr/bin/env python3
"""Print every change of what an mpv shows, polled through its IPC socket, with CLOCK_REALTIME.

An independent observer of a running mpv (the one a person attached `coplay join --mpv-socket` to,
or one of the queue benchmark's): it asks mpv, every ~2 ms, for `time-pos`, `playlist-pos`,
`estimated-frame-number`, `pause` and `path` (one pipelined batch of requests), and prints a line
whenever an answer changes; mpv's events (`start-file`, `file-loaded`, `playback-restart`,
`end-file`, ...) are printed as they are read. Each line starts with CLOCK_REALTIME seconds: for a
poll, the midpoint of writing the batch and reading its last reply, then the batch's round trip
in ms. Around a queue transition this shows the previous entry's frames changing up to the switch,
what mpv does meanwhile, and the next entry's first positions; the figures in the closing notes of
issue 24 and in docs/benchmarks.md ("What mpv shows around a transition") came from it.

    python3 scripts/mpv-ipc-positions.py /tmp/mpv.sock 12 > positions.txt        # 12 seconds
    python3 scripts/mpv-ipc-positions.py /tmp/mpv.sock 12 --interval 0.001       # every ~1 ms

Lines: `T RTT_MS poll time-pos=… playlist-pos=… frame=… pause=… path=…` and `T - event NAME {…}`.
"""
import argparse
import json
import socket
import time

PROPERTIES = ["time-pos", "playlist-pos", "estimated-frame-number", "pause", "path"]
NAMES = {"time-pos": "time-pos", "playlist-pos": "playlist-pos", "estimated-frame-number": "frame", "pause": "pause", "path": "path"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("socket")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--interval", type=float, default=0.002, help="seconds between polls (default 0.002)")
    arguments = parser.parse_args()
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(arguments.socket)
    replies = connection.makefile("rb")
    deadline = time.time() + arguments.seconds
    request = 0
    last = None
    while time.time() < deadline:
        first = request + 1
        batch = []
        for name in PROPERTIES:
            request += 1
            batch.append(json.dumps({"command": ["get_property", name], "request_id": request}) + "\n")
        sent = time.time()
        connection.sendall("".join(batch).encode())
        values = {}
        while len(values) < len(PROPERTIES):
            line = replies.readline()
            if not line:
                raise SystemExit("mpv closed the connection")
            reply = json.loads(line)
            if "event" in reply:
                print(f"{time.time():.4f} - event {reply['event']} {json.dumps({k: v for k, v in reply.items() if k != 'event'})}", flush=True)
                continue
            number = reply.get("request_id")
            if isinstance(number, int) and first <= number <= request:
                values[PROPERTIES[number - first]] = reply.get("data") if reply.get("error") == "success" else None
        received = time.time()
        now = tuple(values[name] for name in PROPERTIES)
        if now != last:
            fields = " ".join(f"{NAMES[name]}={values[name]}" for name in PROPERTIES)
            print(f"{(sent + received) / 2:.4f} {(received - sent) * 1000:.2f} poll {fields}", flush=True)
            last = now
        time.sleep(arguments.interval)


if __name__ == "__main__":
    main()

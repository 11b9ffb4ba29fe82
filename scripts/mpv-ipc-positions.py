#!/usr/bin/env python3
"""Print every change of an mpv's `time-pos` and `path`, polled through its IPC socket, with CLOCK_REALTIME.

An independent observer of a running mpv (the one a person attached `coplay join --mpv-socket` to):
it asks mpv, every ~2 ms, where it is and which file it plays, and prints a line whenever the answer
changes. Around a queue transition this shows the previous entry's frames changing up to the switch
and the next entry's first positions; the figures in the closing notes of issue 24 came from it.

    python3 scripts/mpv-ipc-positions.py /tmp/mpv.sock 12 > positions.txt   # 12 seconds
"""
import json
import socket
import sys
import time


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: mpv-ipc-positions.py SOCKET SECONDS")
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(sys.argv[1])
    replies = connection.makefile("rb")
    deadline = time.time() + float(sys.argv[2])
    request = 0

    def ask(name):
        nonlocal request
        request += 1
        connection.sendall((json.dumps({"command": ["get_property", name], "request_id": request}) + "\n").encode())
        while True:  # events and other clients' replies are skipped
            reply = json.loads(replies.readline() or "{}")
            if not reply:
                sys.exit("mpv closed the connection")
            if reply.get("request_id") == request:
                return reply.get("data")

    last = None
    while time.time() < deadline:
        now = (ask("time-pos"), ask("path"))
        if now != last:
            print(f"{time.time():.4f} {now[0]} {now[1]}", flush=True)
            last = now
        time.sleep(0.002)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A relay fleet losing the node that serves a playing session, measured.

Starts a private PostgreSQL 15 (Debian's binaries, in a temporary directory; as the `postgres` user
when run as root), three `coplay serve --store` nodes on loopback, `coplay host` with the fleet's
addresses and three headless `coplay join --frames` players on a generated clip. Once they play, the
node that holds the session's lease is SIGKILLed. The script reports how long each player's
connection took to resume (from its log line "resumed the session"), and the players' skew (per frame
presented by every player, the latest minus the earliest CLOCK_REALTIME presentation stamp) before the
kill and after it. Everything it starts is stopped at the end, on success or error.

Usage: scripts/fleet-failover.py [--coplay PATH] [--play-seconds N] [--after-seconds N]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PG = "/usr/lib/postgresql/15/bin"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self, base):
        self.base = base
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(base, "postgres", "postgres")
        self.run(f"{PG}/initdb", "-D", f"{base}/data", "-U", "coplay", "--auth=trust", "--no-sync", "--no-instructions")
        self.run(f"{PG}/pg_ctl", "-D", f"{base}/data", "-l", f"{base}/server.log", "-w", "-t", "30", "-o",
                 f"-k {base} -p {self.port} -c listen_addresses=127.0.0.1 -c max_connections=200", "start")
        self.run(f"{PG}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "coplay", "-d", "postgres", "-q",
                 "-c", "CREATE DATABASE coplay")
        self.url = f"postgresql://coplay@127.0.0.1:{self.port}/coplay"

    def run(self, *args):
        command = (["/usr/sbin/runuser", "-u", "postgres", "--"] if self.as_postgres else []) + list(args)
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=60).stdout

    def query(self, sql):
        return self.run(f"{PG}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "coplay", "-d", "coplay",
                        "-At", "-c", sql).strip()

    def stop(self):
        try:
            self.run(f"{PG}/pg_ctl", "-D", f"{self.base}/data", "-m", "fast", "-w", "-t", "30", "stop")
        except Exception as error:  # already stopped, or never started
            print(f"fleet-failover: stopping PostgreSQL: {error}", file=sys.stderr)


class Child:
    """A coplay process whose stdout and stderr lines are collected by threads."""

    def __init__(self, args, name):
        self.name = name
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.out, self.err = [], []
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self.pump, args=(stream, sink), daemon=True).start()

    @staticmethod
    def pump(stream, sink):
        for line in stream:
            sink.append((time.time(), line.rstrip("\n")))

    def kill(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass


def stop_children(children):
    """Stops every child (newest first), killing those that do not exit within 5 s."""
    for child in reversed(children):
        child.kill()
    for child in children:
        try:
            child.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill(signal.SIGKILL)


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def percentile(values, p):
    """Nearest rank, as everywhere in coplay's reports."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def skews(players, since, until):
    stamps = {}
    for name, child in players.items():
        for _, line in child.out:
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            if event.get("type") == "frame" and since <= event["realtime"] < until:
                stamps.setdefault((event.get("item"), event["index"]), {})[name] = event["realtime"]
    return [(max(s.values()) - min(s.values())) * 1000 for s in stamps.values() if len(s) == len(players)]


def summary(values):
    if not values:
        return "no frame presented by every player"
    return (f"p50 {percentile(values, 50):.3f} / p99 {percentile(values, 99):.3f} / max {max(values):.3f} ms "
            f"over {len(values)} frames")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coplay", default=os.environ.get("COPLAY_BIN", ".build/debug/coplay"))
    parser.add_argument("--play-seconds", type=float, default=10, help="playing before the kill (default 10)")
    parser.add_argument("--after-seconds", type=float, default=15, help="measured after the kill (default 15)")
    args = parser.parse_args()
    if not os.path.exists(f"{PG}/initdb"):
        sys.exit(f"fleet-failover: PostgreSQL 15 not found in {PG} (apt-get install postgresql)")
    coplay = os.path.abspath(args.coplay)
    base = tempfile.mkdtemp(prefix="coplay-fleet-")
    os.chmod(base, 0o755)
    children, postgres = [], None
    try:
        media = os.path.join(base, "clip.mp4")
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t",
                        str(args.play_seconds + args.after_seconds + 30), "-c:v", "libx264", "-g", "25", media],
                       check=True, timeout=120)
        pgdir = os.path.join(base, "pg")
        os.mkdir(pgdir, 0o700)
        postgres = Postgres(pgdir)
        ports = [free_port() for _ in range(3)]
        nodes = {}
        for port in ports:
            node = Child([coplay, "serve", "--listen", f"127.0.0.1:{port}", "--store", postgres.url,
                          "--log-level", "notice"], f"node {port}")
            children.append(node)
            nodes[f"127.0.0.1:{port}"] = node
        for port in ports:
            wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 60, f"node {port}")
        fleet = ",".join(f"127.0.0.1:{port}" for port in ports)
        host = Child([coplay, "host", media, "--relay", fleet, "--name", "host"], "host")
        children.append(host)
        wait_for(lambda: host.out, 60, "the invite")
        invite = host.out[0][1]
        players = {}
        for name in ("p1", "p2", "p3"):
            player = Child([coplay, "join", invite, media, "--name", name, "--frames", "--log-level", "info"], name)
            children.append(player)
            players[name] = player
        wait_for(lambda: all(any('"stopped"' in line for _, line in p.out) for p in players.values()), 60, "players ready")
        subprocess.run([coplay, "control", invite, "play"], check=True, capture_output=True, timeout=60)
        started = time.time()
        time.sleep(args.play_seconds)
        owner = postgres.query("SELECT address FROM coplay_leases")
        print(f"fleet-failover: 3 nodes ({fleet}), the session's lease held by {owner}; SIGKILL at +{args.play_seconds:.0f} s")
        killed = time.time()
        nodes[owner].kill(signal.SIGKILL)
        time.sleep(args.after_seconds)
        new_owner = postgres.query("SELECT address FROM coplay_leases")
        for name, player in players.items():
            resumed = [t for t, line in player.err if "resumed the session" in line and t > killed]
            print(f"  {name}: connection resumed {resumed[0] - killed:.2f} s after the kill" if resumed
                  else f"  {name}: no resume logged")
        print(f"  lease now held by {new_owner}")
        print(f"  skew before the kill: {summary(skews(players, started + 1, killed))}")
        print(f"  skew after the kill:  {summary(skews(players, killed, time.time()))}")
        frames_after = {name: sum(1 for _, line in p.out if '"frame"' in line and json.loads(line)["realtime"] > killed + 5)
                        for name, p in players.items()}
        print(f"  frames presented from 5 s after the kill on: {frames_after}")
        gaps = {}
        for name, player in players.items():
            stamps = sorted(json.loads(line)["realtime"] for _, line in player.out if '"frame"' in line)
            gaps[name] = max((b - a for a, b in zip(stamps, stamps[1:]) if a > killed - 1), default=0) * 1000
        print("  longest gap between two presented frames around the kill: "
              + ", ".join(f"{name} {gap:.1f} ms" for name, gap in gaps.items()))
    finally:
        stop_children(children)
        if postgres:
            postgres.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

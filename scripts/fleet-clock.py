#!/usr/bin/env python3
"""Where a relay fleet's members get their clock, and what a failover does to it, measured.

Starts what scripts/fleet-failover.py starts (a private PostgreSQL 15, three `coplay serve --store`
nodes on loopback, `coplay host --relay N1,N2,N3`, three headless `coplay join --frames` players),
with the players at `--log-level debug` so that every update of their reference clock is logged
("reference clock updated", with the estimate's offset and error bound). It measures:

1. the time exchange itself: `coplay time query` against each node in turn (`--rounds` rounds of
   `--samples` requests), giving each node's offset from this machine's clock and the differences
   between nodes;
2. the players' clock estimates before and after the node holding the session's lease is
   SIGKILLed: how many updates each player's clock took before and after the kill, its offset and
   drift estimates just before and after (the step at failover, if any), the players' skew (per
   frame presented by every player, the latest minus the earliest CLOCK_REALTIME presentation
   stamp) before the kill, in the 5 s after it and later, and each player's presentation minus the
   frame's scheduled reference instant per period (on one machine: how far its reference clock and
   wake-ups are from the nodes' UTC; on a build without time-server failover, with
   --after-seconds 300 and a dead time server, how far a free-running clock wanders), and with
   --after-seconds above 150 the skew from 120 s after the kill until p4 starts. Members move to the
   next node of their invite when their time server stops answering, so it also reports, per
   player, when its time server changed ("time server changed" in its log, and the `timeSource`
   event), the correction at the new node's first update and the largest in the 5 s after the
   change (the `residual` of its clock updates: how far its clock read from the new estimate, to be
   slewed in), how many clock updates it took in the 10 s after the kill and in all;
3. a late joiner (p4) started after the kill: which time server it can use (the first node of its
   invite that answers) and its skew against the three players that synchronised before the kill.

With `--players-first second` the players' invite lists the nodes from the second one on, so their
time server (the first node of the invite that answers) is not the node that owns the session.
Every surviving node prints how many NTP requests it answered when it stops, which shows which
nodes the members' time clients used. Everything it starts is stopped at the end.

Usage: scripts/fleet-clock.py [--coplay PATH] [--players-first first|second] [--rounds N]
                              [--after-seconds N] [--keep DIR]
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

_spec = importlib.util.spec_from_file_location("fleet_failover", os.path.join(os.path.dirname(__file__), "fleet-failover.py"))
ff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ff)

CLOCK_LINE = re.compile(r"reference clock (updated|adopted an estimate|stepped)")
FIELD = re.compile(r"\b(offset|errorBound|driftPPM|correction|moved|residual)=(-?[0-9.]+(?:e-?[0-9]+)?)")
SOURCE_LINE = re.compile(r"time server changed")
SOURCE_FIELD = re.compile(r"\b(from|to|unanswered)=(\S+)")
SOURCE_REASON = re.compile(r"\breason=(.*?) (?:to|unanswered)=")  # a reason has spaces ("no answer")


def clock_updates(child):
    """(arrival time, kind, {field: value}) for every reference-clock log line of a player."""
    updates = []
    for t, line in child.err:
        match = CLOCK_LINE.search(line)
        if match:
            updates.append((t, match.group(1), {k: float(v) for k, v in FIELD.findall(line)}))
    return updates


def source_changes(child):
    """(arrival time, {from, to, reason, unanswered}) for every change of time server a player logged."""
    changes = []
    for t, line in child.err:
        if SOURCE_LINE.search(line):
            fields = dict(SOURCE_FIELD.findall(line))
            reason = SOURCE_REASON.search(line)
            fields["reason"] = reason.group(1) if reason else "?"
            changes.append((t, fields))
    return changes


def time_source_events(child):
    """The `timeSource` JSON Lines events a player printed: (realtime, detail)."""
    events = []
    for _, line in child.out:
        if line.startswith("{") and '"timeSource"' in line:
            event = json.loads(line)
            events.append((event["realtime"], event.get("detail")))
    return events


def frame_stamps(child):
    stamps = {}
    for _, line in child.out:
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("type") == "frame":
                stamps[(event.get("item"), event["index"])] = event["realtime"]
    return stamps


def skew_summary(players, since, until):
    per = {name: frame_stamps(child) for name, child in players.items()}
    common = [key for key, t in per[next(iter(per))].items()
              if since <= t < until and all(key in s for s in per.values())]
    values = [(max(per[n][k] for n in per) - min(per[n][k] for n in per)) * 1000 for k in common]
    return ff.summary(values)


def lateness(child, since, until):
    """Median and p99 of (CLOCK_REALTIME at presentation minus the frame's scheduled reference instant), ms:
    how far the player's presentations lie from the reference timescale, which on one machine is this
    machine's UTC within the nodes' anchor error."""
    values = []
    for _, line in child.out:
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("type") == "frame" and since <= event["realtime"] < until and "referenceTime" in event:
                values.append((event["realtime"] - event["referenceTime"]) * 1000)
    if not values:
        return "-"
    return f"{ff.percentile(values, 50):+.3f} / {ff.percentile(values, 99):+.3f}"


def relative(players, name, since, until):
    """Mean and extremes of `name`'s presentation stamp minus the mean of the others', per frame (ms)."""
    per = {n: frame_stamps(c) for n, c in players.items()}
    others = [n for n in per if n != name]
    diffs = [(t - sum(per[o][k] for o in others) / len(others)) * 1000 for k, t in per[name].items()
             if since <= t < until and all(k in per[o] for o in others)]
    if not diffs:
        return "no common frames"
    return (f"mean {sum(diffs) / len(diffs):+.3f} ms, min {min(diffs):+.3f}, max {max(diffs):+.3f} "
            f"over {len(diffs)} frames")


def time_query(coplay, address, samples):
    result = subprocess.run([coplay, "time", "query", address, "--samples", str(samples), "--interval", "0.05",
                             "--timeout", "0.5", "--json"], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        return None
    return json.loads(result.stdout)


def query_nodes(coplay, addresses, rounds, samples, label):
    rows = {address: [] for address in addresses}
    for _ in range(rounds):
        for address in addresses:
            answer = time_query(coplay, address, samples)
            if answer:
                rows[address].append(answer)
    print(f"fleet-clock: `coplay time query ADDRESS --samples {samples} --interval 0.05 --json`, {rounds} rounds, "
          f"{label}:")
    means = {}
    for address, answers in rows.items():
        if not answers:
            print(f"  {address}: no answer")
            continue
        offsets = [a["offset"] * 1e6 for a in answers]
        means[address] = sum(offsets) / len(offsets)
        print(f"  {address}: offset {', '.join(f'{o:+.1f}' for o in offsets)} µs (mean {means[address]:+.1f}); "
              f"best delay {min(a['delay'] for a in answers) * 1e6:.1f} µs; error bound "
              f"{max(a['errorBound'] for a in answers) * 1e6:.1f} µs at most")
    if len(means) > 1:
        first = next(iter(means))
        print("  between nodes (mean offset minus the first's): "
              + ", ".join(f"{a} {m - means[first]:+.1f} µs" for a, m in means.items() if a != first))
    return means


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coplay", default=os.environ.get("COPLAY_BIN", ".build/debug/coplay"))
    parser.add_argument("--players-first", choices=["first", "second"], default="first",
                        help="the node the players' invite names first (their time server): the host's first, "
                             "which owns the session, or the second")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of `coplay time query` per node (default 3)")
    parser.add_argument("--samples", type=int, default=32, help="requests per `coplay time query` (default 32)")
    parser.add_argument("--play-seconds", type=float, default=10, help="playing before the kill (default 10)")
    parser.add_argument("--after-seconds", type=float, default=10, help="after the kill, before p4 joins (default 10)")
    parser.add_argument("--late-seconds", type=float, default=15, help="measured after p4 plays (default 15)")
    parser.add_argument("--keep", metavar="DIR", help="write every process's output (stdout, stderr) into DIR")
    args = parser.parse_args()
    if not os.path.exists(f"{ff.PG}/initdb"):
        sys.exit(f"fleet-clock: PostgreSQL 15 not found in {ff.PG} (apt-get install postgresql)")
    coplay = os.path.abspath(args.coplay)
    base = tempfile.mkdtemp(prefix="coplay-fleet-clock-")
    os.chmod(base, 0o755)
    children, postgres, nodes = [], None, {}
    try:
        media = os.path.join(base, "clip.mp4")
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t",
                        str(args.play_seconds + args.after_seconds + args.late_seconds + 60), "-c:v", "libx264",
                        "-g", "25", media], check=True, timeout=120)
        pgdir = os.path.join(base, "pg")
        os.mkdir(pgdir, 0o700)
        postgres = ff.Postgres(pgdir)
        ports = [ff.free_port() for _ in range(3)]
        addresses = [f"127.0.0.1:{port}" for port in ports]
        for address in addresses:
            nodes[address] = ff.Child([coplay, "serve", "--listen", address, "--store", postgres.url,
                                       "--log-level", "info"], f"node {address}")
            children.append(nodes[address])
        for port in ports:
            ff.wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 60, f"node {port}")
        print(f"fleet-clock: load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
              f"(2 cores) at the start")
        query_nodes(coplay, addresses, args.rounds, args.samples, "three live nodes")
        fleet = ",".join(addresses)
        host = ff.Child([coplay, "host", media, "--relay", fleet, "--name", "host"], "host")
        children.append(host)
        ff.wait_for(lambda: host.out, 60, "the invite")
        invite = host.out[0][1]
        player_invite = invite
        if args.players_first == "second":
            rotated = ",".join(addresses[1:] + addresses[:1])
            player_invite = invite.replace(fleet, rotated, 1)
            assert player_invite != invite, "the invite does not list the fleet as given"
        players = {}

        def join(name):
            player = ff.Child([coplay, "join", player_invite, media, "--name", name, "--frames", "--log-level", "debug"],
                              name)
            children.append(player)
            players[name] = player
            return player

        for name in ("p1", "p2", "p3"):
            join(name)
        ff.wait_for(lambda: all(any('"stopped"' in line for _, line in p.out) for p in players.values()), 90,
                    "players ready")
        subprocess.run([coplay, "control", invite, "play"], check=True, capture_output=True, timeout=60)
        started = time.time()
        time.sleep(args.play_seconds)
        owner = postgres.query("SELECT address FROM coplay_leases")
        time_node = player_invite.split("//", 1)[1].split(",", 1)[0]
        print(f"fleet-clock: players' invite lists {time_node} first (their time server); the session's lease is "
              f"held by {owner}; SIGKILL of {owner} at +{args.play_seconds:.0f} s")
        killed = time.time()
        nodes[owner].kill(signal.SIGKILL)
        time.sleep(args.after_seconds)
        new_owner = postgres.query("SELECT address FROM coplay_leases")
        print(f"  lease now held by {new_owner}")
        for name, player in players.items():
            updates = clock_updates(player)
            before = [u for u in updates if u[0] < killed]
            after = [u for u in updates if u[0] >= killed]
            changes = [c for c in source_changes(player) if c[0] >= killed]
            for t, fields in changes:
                # The correction the switch brought: how far the clock read from the new node's first
                # estimates (slewed in at up to 5 ms/s), and whether it stepped.
                first = next((u for u in updates if u[0] >= t), None)
                window = [abs(u[2]["residual"]) for u in updates if t <= u[0] < t + 5 and "residual" in u[2]]
                stepped = [u for u in updates if t <= u[0] < t + 5 and u[1] == "stepped"]
                print(f"  {name}: time server changed {t - killed:+.2f} s after the kill, from {fields.get('from')} to "
                      f"{fields.get('to')} ({fields['reason']}, "
                      f"{fields.get('unanswered', '?')} unanswered); correction at the first update from the new node "
                      + (f"{first[2].get('residual', float('nan')) * 1e6:+.1f} µs" if first else "none")
                      + (f", largest in the 5 s after the change {max(window) * 1e6:.1f} µs" if window else "")
                      + f", steps {len(stepped)}")
            events = [e for e in time_source_events(player) if e[0] >= killed]
            if events:
                print(f"  {name}: timeSource events: " + "; ".join(f"{t - killed:+.2f} s {d}" for t, d in events))
            residuals = [abs(u[2]["residual"]) for u in after if "residual" in u[2]]
            print(f"  {name}: {len([u for u in after if u[0] < killed + 10])} clock updates in the 10 s after the kill, "
                  f"{len(after)} in all; largest correction slewed in at any update after the kill "
                  + (f"{max(residuals) * 1e6:.1f} µs" if residuals else "none"))
            steps = [u for u in updates if u[1] == "stepped"]
            last = before[-1][2].get("offset") if before else None
            first = after[0][2].get("offset") if after else None
            step = (f"{(first - last) * 1e6:+.1f} µs" if last is not None and first is not None else "none (no update)")
            print(f"  {name}: clock updates {len(before)} before the kill (last offset "
                  f"{last * 1e6 if last is not None else float('nan'):+.1f} µs, error bound "
                  f"{before[-1][2].get('errorBound', float('nan')) * 1e6 if before else float('nan'):.1f} µs, drift "
                  f"{before[-1][2].get('driftPPM', float('nan')) if before else float('nan'):+.2f} ppm), "
                  f"{len(after)} in the {args.after_seconds:.0f} s after it; first update after minus last before: "
                  f"{step}; steps logged: {len(steps)}")
        survivors = [a for a in addresses if a != owner]
        query_nodes(coplay, survivors, args.rounds, args.samples, "the two surviving nodes, after the kill")
        # A member joining now finds the first node of its invite dead and synchronises with the next.
        p4_started = time.time()
        p4 = join("p4")
        ff.wait_for(lambda: any('"frame"' in line for _, line in p4.out), 120, "p4 presenting")
        p4_playing = time.time()
        time.sleep(args.late_seconds)
        ended = time.time()
        p4_updates = clock_updates(p4)
        first_p4 = p4_updates[0][2].get("offset") if p4_updates else None
        print(f"  p4 (joined {p4_started - killed:.1f} s after the kill): presenting {p4_playing - p4_started:.1f} s "
              f"after its start; first clock estimate offset "
              f"{first_p4 * 1e6 if first_p4 is not None else float('nan'):+.1f} µs, {len(p4_updates)} updates")
        trio = {n: players[n] for n in ("p1", "p2", "p3")}
        print(f"  skew p1-p3 before the kill:        {skew_summary(trio, started + 1, killed)}")
        print(f"  skew p1-p3 in the 5 s after it:    {skew_summary(trio, killed, killed + 5)}")
        print(f"  skew p1-p3 from 5 s after it until p4 starts: {skew_summary(trio, killed + 5, p4_started)}")
        print(f"  skew p1-p3 in the last 30 s before p4 starts: {skew_summary(trio, p4_started - 30, p4_started)}")
        if p4_started > killed + 150:
            print(f"  skew p1-p3 from 120 s after the kill until p4 starts: {skew_summary(trio, killed + 120, p4_started)}")
        print(f"  skew p1-p3 while p4 starts and plays:         {skew_summary(trio, p4_started, ended)}")
        print(f"  skew p1-p4 once p4 plays:          {skew_summary(players, p4_playing + 1, ended)}")
        print(f"  p4's presentation minus p1-p3's:   {relative(players, 'p4', p4_playing + 1, ended)}")
        windows = [("before the kill", started + 1, killed), ("0-5 s after", killed, killed + 5),
                   ("5 s after - p4", killed + 5, p4_started), ("last 5 s before p4", p4_started - 5, p4_started),
                   ("with p4", p4_started, ended)]
        print("  presentation minus scheduled reference instant, p50 / p99 ms (" +
              "; ".join(w[0] for w in windows) + "):")
        for name, player in players.items():
            print(f"    {name}: " + "; ".join(lateness(player, a, b) for _, a, b in windows))
        print(f"fleet-clock: load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
              f"at the end")
    finally:
        ff.stop_children(children)
        time.sleep(0.2)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for child in children:
                label = child.name.replace(" ", "-").replace(":", "_")
                for suffix, lines in (("out", child.out), ("err", child.err)):
                    with open(os.path.join(args.keep, f"{label}.{suffix}"), "w") as file:
                        file.writelines(f"{t:.6f} {line}\n" for t, line in lines)
        for address, node in nodes.items():
            listening = [line for _, line in node.err if "time server listening" in line]
            uncertainty = re.search(r"anchorUncertainty=(\S+)", listening[0]) if listening else None
            if uncertainty:
                print(f"  node {address}: timescale anchored with an uncertainty of {uncertainty.group(1)}")
            answered = [line for _, line in node.err if "time server stopped" in line]
            warned = [line for _, line in node.err if "hasn't been called" in line]
            if answered:
                print(f"  node {address} stopped: {answered[-1].split(': ', 1)[-1]}"
                      + (f"; postgres-nio warned: {warned[0]}" if warned else ""))
        if postgres:
            postgres.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

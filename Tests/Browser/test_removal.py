"""A page follows a host's removal of someone (docs/protocol.md "Removing a member", docs/web.md).

- ``test_page_moves_to_the_successor_and_plays_on``: `coplay host --control hosts`, a page with the
  controller invite, a headless `coplay join` member bob; `coplay control INVITE remove bob`: the page
  opens the invite sealed to its sealing key, moves to the successor session and keeps presenting frames
  on the group's timeline through the switch (the figure is printed), holds the successor's controller
  invite (its address bar too: a reload rejoins the successor), and a pause by the host there stops it
  on the host's frame. bob stops with its message.
- ``test_removed_page_stops_with_the_message``: the page (a viewer) is the one removed: its player stops,
  it says who removed it, and it does not reconnect.
"""

import json
import subprocess
import time
import urllib.parse

import support
from support import BrowserTestCase, page_link

FPS = 25


class RemovalTests(BrowserTestCase):
    def invite(self, invite: str, *args: str) -> str:
        """`coplay invite INVITE ARGS`: its last line."""
        result = subprocess.run([self.coplay.binary, "invite", invite, *args], capture_output=True, text=True, timeout=30,
                                stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, f"coplay invite {' '.join(args)}: {result.stderr.strip()}")
        return [line for line in result.stdout.splitlines() if line.strip()][-1].strip()

    def remove(self, invite: str, name: str) -> dict:
        """`coplay control INVITE remove NAME --name hana`: its output, and the successor's invites."""
        out = self.coplay.control(invite, "remove", name, "--name", "hana", timeout=90)
        lines = out.splitlines()
        controller = next(line for line in lines if line.startswith("controller invite: ")).split(": ", 1)[1]
        viewer = next(line for line in lines if line.startswith("viewer invite: ")).split(": ", 1)[1]
        return {"out": out, "controller": controller, "viewer": viewer, "session": controller.split("/")[3].split("?")[0]}

    def test_page_moves_to_the_successor_and_plays_on(self):
        relay = self.coplay.serve()
        clip = support.clip("removal", 30)
        host = self.coplay.host(relay, clip, "--control", "hosts", "--frames")
        bob = self.coplay.join(self.invite(host.invite, "--viewer"), clip, "bob")
        media = self.media_server(clip.parent)
        # The host's link carries the controller invite (its seed): the page holds the host key.
        page = self.open_page(page_link(host.link, media=media.url(clip.name), name="ana"))
        page.wait("p.joined && p.phase === 'joined' && p.chat && p.chat.key !== null && p.roles && p.roles.host", 30, "the controller page to join")
        old_session = page.js("() => window.coplayPage.sessionId")
        page.wait("['host', 'bob'].every((n) => document.getElementById('people').innerText.includes(n))", 15, "the people list")

        marks = host.process.event_count()
        self.coplay.control(host.invite, "play")
        play = host.process.wait_event(lambda e: e.get("type") == "play", 15, "the host's play", marks)
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 2", 20, "the page to play for 2 s")

        revision = page.wait("p.sync.motionRevision", 5, "the page's motion")
        removed_at_ms = time.time() * 1000
        removal = self.remove(host.invite, "bob")
        print(f"\ncoplay control remove: {removal['out'].splitlines()[0]}")
        self.assertIn("ana", removal["out"].splitlines()[0], "the page moved with the others")
        self.assertNotIn("ana announced no sealing key", removal["out"])

        # The page moves: a new session, the successor's controller invite (it held the old one's seed).
        page.wait(f"p.sessionId === '{removal['session']}' && p.phase === 'joined' && p.joined", 30, "the page in the successor")
        self.assertNotEqual(old_session, removal["session"])
        page.wait("p.notices.all.includes('bob was removed; moved to a new session')", 5, "the notice of the move")
        self.assertNotIn("ana joined", page.js("() => window.coplayPage.notices.all"), "the page's own join is no news")
        moved = page.events("moved")
        self.assertEqual([(e.get("originatorName"), e.get("detail")) for e in moved], [("bob", "moved")], moved)
        page.wait("p.roles && p.roles.host && p.roles.controls", 10, "the page to hold the successor's host key")
        fragment = urllib.parse.parse_qs(page.js("() => location.hash").lstrip("#"))
        self.assertEqual(fragment["invite"][0], removal["controller"], "the address bar names the successor's controller invite")
        self.assertEqual((fragment["name"][0], fragment["media"][0]), ("ana", media.url(clip.name)))

        # bob was removed: it says so and stops (status 3).
        support.wait_until(lambda: not bob.alive(), 20, "bob to stop", lambda: bob.tail())
        self.assertIn("you were removed from this session by hana", bob.output())

        # The page kept presenting frames on the group's timeline through the switch.
        time.sleep(3)
        page.wait("p.sync && p.sync.playing", 5, "the page still playing")
        if support.SCREENSHOTS:
            page.screenshot("web-removal-moved.png")
        played = page.js("""([fromMs, itemTime, referenceMs]) => window.coplayPage.samples()
            .map((s) => ({...s, refMs: s.wallMs + s.referenceOffsetMs}))
            .filter((s) => s.refMs >= fromMs)
            .map((s) => ({refMs: s.refMs, mediaTime: s.mediaTime, playing: !s.paused && !s.seeking,
                          errorMs: (s.mediaTime - (itemTime + (s.refMs - referenceMs) / 1000)) * 1000}))""",
                         [removed_at_ms - 1500, play["itemTime"], play["referenceTime"] * 1000])
        self.assertGreater(len(played), 3 * FPS, f"frames presented from 1.5 s before the removal: {len(played)}")
        errors = sorted(p["errorMs"] for p in played)
        gaps = [round(b["refMs"] - a["refMs"], 1) for a, b in zip(played, played[1:])]
        p50 = errors[len(errors) // 2]
        print(f"page frames from 1.5 s before the removal to 3 s after the move: {len(played)}, error vs the group's timeline "
              f"min {errors[0]:+.1f} ms, p50 {p50:+.1f} ms, max {errors[-1]:+.1f} ms; longest gap between frames {max(gaps):.1f} ms")
        # Generous (the machine may be busy: a starved page presents late, skips frames and restarts its
        # element to catch up, with or without a move): frames kept coming after the move, most within 5
        # frames of the timeline, the median within 2.
        moved_ms = moved[0]["realtime"] * 1000
        self.assertGreaterEqual(len([p for p in played if p["refMs"] > moved_ms + 500]), 10, f"frames after the move: gaps {gaps}")
        near = [p for p in played if abs(p["errorMs"]) < 5000 / FPS]
        self.assertGreaterEqual(len(near), 0.8 * len(played), f"frames more than 5 frames off the group's timeline: {errors}")
        self.assertLess(abs(p50), 2000 / FPS, f"the median frame is off the group's timeline: {errors}")
        # What the load cannot blur: the successor's restate changed nothing the player follows (its motion
        # is still the one of the old session's play: no restart, no seek for the move).
        self.assertEqual(page.js("() => window.coplayPage.sync.motionRevision"), revision, "the move changed the player's motion")

        # A pause by the host in the successor stops the page on the host's frame.
        marks = host.process.event_count()
        stopped = len(page.events("stopped"))
        self.coplay.control(removal["controller"], "pause")
        host_stop = host.process.wait_event(lambda e: e.get("type") == "stopped", 15, "the host to stop", marks)
        page.wait(f"p.group.rate === 0 && p.events.filter((e) => e.type === 'stopped').length > {stopped}", 15, "the page to stop")
        page_stop = page.events("stopped")[stopped]
        self.assertEqual(page_stop.get("index"), host_stop.get("index"), f"page {page_stop}, host {host_stop}")
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

        # A reload rejoins the successor (the address bar names it).
        page.page.reload(wait_until="load")
        page.wait(f"p.sessionId === '{removal['session']}' && p.joined && p.phase === 'joined'", 30, "the reloaded page in the successor")
        page.wait("p.group && p.group.rate === 0", 15, "the reloaded page to find the group paused")

    def test_removed_page_stops_with_the_message(self):
        relay = self.coplay.serve()
        clip = support.clip("removal", 30)
        host = self.coplay.host(relay, clip, "--control", "hosts")
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(self.invite(host.invite, "--viewer", "--link"), media=media.url(clip.name), name="vic"))
        page.wait("p.joined && p.phase === 'joined' && p.chat && p.chat.key !== null", 30, "the viewer page to join")
        self.coplay.control(host.invite, "play")
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 1", 20, "the page to play")

        removal = self.remove(host.invite, "vic")
        self.assertIn("removed vic", removal["out"])
        page.wait("p.phase === 'removed'", 20, "the page to stop as removed")
        page.wait("document.getElementById('video').paused", 5, "the page's video paused")
        banner = page.js("() => document.getElementById('banner').innerText")
        self.assertIn("You were removed from this session by hana", banner)
        self.assertIn("you were removed from this session by hana", page.js("() => window.coplayPage.notices.all"))
        self.assertEqual([e.get("originatorName") for e in page.events("removed")], ["hana"])
        if support.SCREENSHOTS:
            page.screenshot("web-removal-removed.png")
        # It does not reconnect, nor follow the others.
        sockets = len(page.websockets)
        time.sleep(3)
        self.assertEqual(page.js("() => window.coplayPage.phase"), "removed")
        self.assertEqual(len(page.websockets), sockets, "the removed page opened another connection")
        self.assertFalse(page.js("() => window.coplayPage.joined"))
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)
        print(f"\nremoved page: {json.dumps(banner)}")

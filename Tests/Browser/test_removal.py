"""A page follows a host's removal of someone (docs/protocol.md "Removing a member", docs/web.md).

- ``test_page_moves_to_the_successor_and_plays_on``: `coplay host --control hosts`, a page with the
  controller invite, a headless `coplay join` member bob; `coplay control INVITE remove bob`: the page
  opens the invite sealed to its sealing key, moves to the successor session and keeps presenting frames
  on the group's timeline through the switch (the figure is printed), holds the successor's controller
  invite (its address bar too: a reload rejoins the successor), and a pause by the host there stops it
  on the host's frame. bob stops with its message.
  Its panels show the successor: the session id in the top bar, the people there (not bob).
- ``test_viewer_page_moves_and_stays_a_viewer``: the same with a page holding a viewer invite (`coplay
  invite INVITE --viewer --link`): it moves, holds the successor's viewer invite, its controls stay off with
  the hint, a pause it forces past its own gate there changes nothing, it stays on the group's timeline
  through the switch and stops on the host's frame when the host pauses there.
- ``test_removed_page_stops_with_the_message``: the page (a viewer) is the one removed: its player stops,
  it says who removed it, it does not reconnect, and its panels show nothing live.
- ``test_page_left_behind_stops_and_says_why``: a page whose browser has no X25519 in WebCrypto (an init
  script takes it away, as in browsers before it shipped) announces no sealing key, so the removal of bob
  holds no invite for it: it stops at once, says it was left behind, why and what to do (ask a host for a
  new link), opens no other connection and its panels show nothing live.
"""

import json
import subprocess
import time
import urllib.parse

import support
from support import BrowserTestCase, page_link

FPS = 25
HINT = "only hosts control this session"

# A browser without X25519 in WebCrypto (Chromium before 133, Firefox before 130): generateKey refuses it
# as such a browser does, before the page's scripts run.
NO_X25519 = """(() => {
  const generateKey = SubtleCrypto.prototype.generateKey;
  SubtleCrypto.prototype.generateKey = function (algorithm, ...rest) {
    const name = typeof algorithm === "string" ? algorithm : algorithm?.name;
    if (String(name).toUpperCase() === "X25519") return Promise.reject(new DOMException("Algorithm: Unrecognized name", "NotSupportedError"));
    return generateKey.call(this, algorithm, ...rest);
  };
})();"""

# The page's panels as drawn: the top bar's session, the sync card, the people list, the chat box, the controls.
PANEL = """() => {
  const $ = (id) => document.getElementById(id);
  return {
    subtitle: $('subtitle').textContent, status: $('status-text').textContent,
    people: [...document.querySelectorAll('#people li')].map((li) => li.classList.contains('empty') ? li.textContent
      : li.querySelector('.name').firstChild.textContent),
    peopleCount: $('people-count').textContent,
    live: $('sync-card').dataset.live, syncError: $('sync-error').textContent, syncLabel: $('sync-label').textContent,
    clockOffset: $('clock-offset').textContent, clockError: $('clock-error').textContent, group: $('group-state').textContent,
    chatDisabled: $('chat-input').disabled && $('chat-send').disabled,
    play: $('play').disabled, hint: !$('control-hint').hidden, playTitle: $('play').title,
  };
}"""


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

    def panel(self, page) -> dict:
        return page.js(PANEL)

    def assert_panel_shows(self, page, session: str, people: list[str]):
        """The top bar names `session` (its first 4 bytes) and the people list is `people` (in any order)."""
        wanted = sorted(people)
        shows = lambda p: f"session {session[:8]}" in p["subtitle"] and sorted(p["people"]) == wanted and p["peopleCount"] == str(len(wanted)) \
            and p["live"] == "true"
        support.wait_until(lambda: shows(self.panel(page)), 15, f"the panel to show the session {session[:8]} with {wanted}",
                           lambda: json.dumps(self.panel(page)))
        return self.panel(page)

    def assert_clock_follows_the_successor(self, page):
        """The clock's requests go over the successor's connection now: replies arrive there (bounded by
        the poll scheduler's interval, a few seconds this early), and the panel shows its figures."""
        replies = page.wait("p.clock.replies > 0 && p.clock.synced && p.clock", 40, "a time reply over the successor's connection")
        panel = self.panel(page)
        self.assertNotEqual((panel["clockOffset"], panel["clockError"]), ("—", "—"), panel)
        print(f"{page.name}: clock in the successor: {replies['replies']} time repl(y/ies), offset {panel['clockOffset']}, error {panel['clockError']}")

    def assert_panel_not_live(self, page, status: str):
        """Out of the session: nothing in the panels pretends to follow one."""
        panel = self.panel(page)
        self.assertEqual(panel["status"], status, panel)
        self.assertEqual((panel["live"], panel["syncError"], panel["syncLabel"], panel["clockOffset"], panel["clockError"], panel["group"]),
                         ("false", "—", "not in a session", "—", "—", "—"), panel)
        self.assertEqual((panel["people"], panel["peopleCount"]), (["Not in a session"], ""), panel)
        self.assertTrue(panel["chatDisabled"], panel)
        self.assertTrue(panel["play"], panel)
        self.assertFalse(panel["hint"], f"a page out of the session shows no role hint: {panel}")
        return panel

    def assert_in_step(self, page, play: dict, removed_at_ms: float, moved: dict):
        """The page presented frames on the group's timeline from 1.5 s before the removal to now (generous
        bounds: a busy machine starves the page; the figures are printed)."""
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
        print(f"{page.name}: frames from 1.5 s before the removal to 3 s after the move: {len(played)}, error vs the group's timeline "
              f"min {errors[0]:+.1f} ms, p50 {p50:+.1f} ms, max {errors[-1]:+.1f} ms; longest gap between frames {max(gaps):.1f} ms")
        # Generous (the machine may be busy: a starved page presents late, skips frames and restarts its
        # element to catch up, with or without a move): frames kept coming after the move, most within 5
        # frames of the timeline, the median within 2.
        moved_ms = moved["realtime"] * 1000
        self.assertGreaterEqual(len([p for p in played if p["refMs"] > moved_ms + 500]), 10, f"frames after the move: gaps {gaps}")
        near = [p for p in played if abs(p["errorMs"]) < 5000 / FPS]
        self.assertGreaterEqual(len(near), 0.8 * len(played), f"frames more than 5 frames off the group's timeline: {errors}")
        self.assertLess(abs(p50), 2000 / FPS, f"the median frame is off the group's timeline: {errors}")

    def assert_stops_with_the_host(self, page, host, invite: str):
        """A pause by the host in the successor (with `invite`) stops the page on the host's frame."""
        marks = host.process.event_count()
        stopped = len(page.events("stopped"))
        self.coplay.control(invite, "pause")
        host_stop = host.process.wait_event(lambda e: e.get("type") == "stopped", 15, "the host to stop", marks)
        page.wait(f"p.group.rate === 0 && p.events.filter((e) => e.type === 'stopped').length > {stopped}", 15, "the page to stop")
        page_stop = page.events("stopped")[stopped]
        self.assertEqual(page_stop.get("index"), host_stop.get("index"), f"page {page_stop}, host {host_stop}")

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

        # Its panels show the successor: its session id in the top bar, the people there (bob is not).
        panel = self.assert_panel_shows(page, removal["session"], ["ana", "host"])
        self.assertNotIn(f"session {old_session[:8]}", panel["subtitle"])

        # The page kept presenting frames on the group's timeline through the switch.
        time.sleep(3)
        page.wait("p.sync && p.sync.playing", 5, "the page still playing")
        if support.SCREENSHOTS:
            page.screenshot("web-removal-moved.png")
        self.assert_in_step(page, play, removed_at_ms, moved[0])
        self.assert_clock_follows_the_successor(page)
        # What the load cannot blur: the successor's restate changed nothing the player follows (its motion
        # is still the one of the old session's play: no restart, no seek for the move).
        self.assertEqual(page.js("() => window.coplayPage.sync.motionRevision"), revision, "the move changed the player's motion")

        # A pause by the host in the successor stops the page on the host's frame.
        self.assert_stops_with_the_host(page, host, removal["controller"])
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
        # It does not reconnect, nor follow the others, and its panels show no session.
        sockets = len(page.websockets)
        time.sleep(3)
        self.assertEqual(page.js("() => window.coplayPage.phase"), "removed")
        self.assertEqual(len(page.websockets), sockets, "the removed page opened another connection")
        self.assertFalse(page.js("() => window.coplayPage.joined"))
        panel = self.assert_panel_not_live(page, "Removed")
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)
        print(f"\nremoved page: {json.dumps(banner)}; panel {json.dumps(panel)}")

    def test_viewer_page_moves_and_stays_a_viewer(self):
        relay = self.coplay.serve()
        clip = support.clip("removal", 30)
        host = self.coplay.host(relay, clip, "--control", "hosts")
        bob = self.coplay.join(self.invite(host.invite, "--viewer"), clip, "bob")
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(self.invite(host.invite, "--viewer", "--link"), media=media.url(clip.name), name="vic"))
        page.wait("p.joined && p.phase === 'joined' && p.chat && p.chat.key !== null && p.chat.sealing && p.roles && !p.roles.controls", 30,
                  "the viewer page to join")
        old_session = page.js("() => window.coplayPage.sessionId")
        self.assert_panel_shows(page, old_session, ["vic", "host", "bob"])
        before = self.panel(page)
        self.assertEqual((before["play"], before["hint"], before["playTitle"]), (True, True, HINT), before)

        marks = host.process.event_count()
        self.coplay.control(host.invite, "play")
        play = host.process.wait_event(lambda e: e.get("type") == "play", 15, "the host's play", marks)
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 2", 20, "the page to play for 2 s")

        removed_at_ms = time.time() * 1000
        removal = self.remove(host.invite, "bob")
        print(f"\ncoplay control remove: {removal['out'].splitlines()[0]}")
        self.assertIn("vic", removal["out"].splitlines()[0], "the viewer page moved with the others")

        # It moves, with the successor's viewer invite (no seed: it held none), and stays a viewer there.
        page.wait(f"p.sessionId === '{removal['session']}' && p.phase === 'joined' && p.joined", 30, "the page in the successor")
        self.assertNotEqual(old_session, removal["session"])
        page.wait("p.notices.all.includes('bob was removed; moved to a new session')", 5, "the notice of the move")
        moved = page.events("moved")
        self.assertEqual([(e.get("originatorName"), e.get("detail")) for e in moved], [("bob", "moved")], moved)
        fragment = urllib.parse.parse_qs(page.js("() => location.hash").lstrip("#"))
        self.assertEqual(fragment["invite"][0], removal["viewer"], "the address bar names the successor's viewer invite")
        self.assertNotEqual(removal["viewer"], removal["controller"])
        page.wait("p.roles && !p.roles.controls && !p.roles.host && p.chat.sealing", 10, "the page a viewer in the successor")
        panel = self.assert_panel_shows(page, removal["session"], ["vic", "host"])
        self.assertEqual((panel["play"], panel["hint"], panel["playTitle"], panel["status"]), (True, True, HINT, "Joined"), panel)
        support.wait_until(lambda: not bob.alive(), 20, "bob to stop", lambda: bob.tail())

        # In step through the switch.
        time.sleep(3)
        page.wait("p.sync && p.sync.playing", 5, "the page still playing")
        if support.SCREENSHOTS:
            page.screenshot("web-removal-viewer-moved.png")
        self.assert_in_step(page, play, removed_at_ms, moved[0])
        self.assert_clock_follows_the_successor(page)

        # A pause it forces past its own gate in the successor counts nowhere; the host's pause stops it.
        marks = host.process.event_count()
        page.js("() => window.coplayPage.control.forcedPause()")
        time.sleep(2)
        self.assertEqual([e for e in host.process.events[marks:] if e.get("type") in ("pause", "rate")], [], "the host took the viewer's pause")
        self.assertEqual(page.js("() => window.coplayPage.group.rate"), 1)
        self.assert_stops_with_the_host(page, host, removal["controller"])
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

    def test_page_left_behind_stops_and_says_why(self):
        relay = self.coplay.serve()
        clip = support.clip("removal", 30)
        host = self.coplay.host(relay, clip, "--control", "hosts")
        bob = self.coplay.join(self.invite(host.invite, "--viewer"), clip, "bob")
        media = self.media_server(clip.parent)
        page = self.browser.page(self, "lee")
        page.page.add_init_script(NO_X25519)
        page.goto(page_link(self.invite(host.invite, "--viewer", "--link"), media=media.url(clip.name), name="lee"))
        # It joins and chats (its identity is announced), with no sealing key.
        page.wait("p.joined && p.phase === 'joined' && p.chat && p.chat.key !== null", 30, "the page to join")
        chat = page.js("() => window.coplayPage.chat")
        self.assertEqual((chat["sealing"], "Unrecognized name" in (chat["sealingError"] or "")), (False, True), chat)
        old_session = page.js("() => window.coplayPage.sessionId")
        self.assert_panel_shows(page, old_session, ["lee", "host", "bob"])
        self.coplay.control(host.invite, "play")
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 1", 20, "the page to play")

        removal = self.remove(host.invite, "bob")
        print(f"\ncoplay control remove: {removal['out']}")
        self.assertIn("note: lee announced no sealing key", removal["out"])
        self.assertNotIn("lee", removal["out"].splitlines()[0], "the page moved")

        # It stops at once, says what happened, why, and what to do.
        page.wait("p.phase === 'leftBehind'", 20, "the page to stop as left behind")
        page.wait("document.getElementById('video').paused", 5, "the page's video paused")
        banner = page.js("() => document.getElementById('banner').innerText")
        self.assertIn("Left behind", banner)
        self.assertIn("A host removed bob and moved everyone else to a new session", banner)
        self.assertIn("no X25519", banner)
        self.assertIn("ask a host for a new link", banner)
        self.assertEqual(page.js("() => document.querySelectorAll('#banner-actions button').length"), 0, "no retry: the old invite leads nowhere")
        self.assertEqual(page.js("() => [document.getElementById('picker-title').textContent, document.getElementById('picker').hidden]"),
                         ["Left behind", False])
        self.assertIn("bob was removed; this page was left behind", page.js("() => window.coplayPage.notices.all"))
        moved = page.events("moved")
        self.assertEqual([(e.get("originatorName"), e.get("detail")) for e in moved], [("bob", "left behind")], moved)
        self.assertEqual(page.js("() => window.coplayPage.sessionId"), old_session, "the page moved")
        if support.SCREENSHOTS:
            page.screenshot("web-removal-left-behind.png")
        # It opens no other connection, follows nothing, and its panels show no session, also after the
        # old session's end (which does not turn it into "Session over").
        sockets = len(page.websockets)
        support.wait_until(lambda: not bob.alive(), 20, "bob to stop", lambda: bob.tail())
        time.sleep(3)
        self.assertEqual(page.js("() => window.coplayPage.phase"), "leftBehind")
        self.assertEqual(len(page.websockets), sockets, "the page left behind opened another connection")
        self.assertFalse(page.js("() => window.coplayPage.joined"))
        self.assertIn("Left behind", page.js("() => document.getElementById('banner').innerText"))
        panel = self.assert_panel_not_live(page, "Left behind")
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)
        print(f"left-behind page: {json.dumps(banner)}; panel {json.dumps(panel)}")

"""Pages in a session where only hosts control (docs/protocol.md "Roles", docs/web.md).

- ``test_viewer_page_controls_only_after_a_grant`` needs coplay with roles (`coplay host --control hosts`,
  `coplay invite INVITE --viewer [--link]`, `coplay control INVITE grant|revoke NAME`): a viewer page's
  controls are off with the hint, its queue's too (add, remove, move, drag, jump, repeat, shuffle, previous /
  next) while it can still choose its own copy of an entry it lacks, a pause it forces past its own gate changes no player (the host, a
  headless member, the page), after `grant` its pause button pauses everyone, after `revoke` it is off again.
- ``test_controller_page_and_viewer_page`` needs only the page and a relay: the test makes the hosts
  session's invites itself (a fixed host key in the host's browser invite, its seed in the controller
  page's), so a controller page signs with the host key and a viewer page follows it and changes nothing.
"""

import subprocess
import time
import urllib.parse

import support
from support import BrowserTestCase, page_link

# The host key of seed 32 × 0x07 (the same as Tests/Web/hostinvite.test.mjs and InviteTests.swift).
HOST_SEED = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc"
HOST_KEY = "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
HINT = "only hosts control this session"


def with_host_key(link: str, seed: str | None) -> str:
    """A page link whose invite names HOST_KEY (`&host=`), with `.SEED` after its secret when `seed` is given."""
    page, fragment = link.split("#", 1)
    parameters = urllib.parse.parse_qs(fragment, keep_blank_values=True)
    invite = parameters["invite"][0]
    before, secret = invite.split("#", 1)
    before += ("&" if "?" in before else "?") + f"host={HOST_KEY}"
    invite = f"{before}#{secret}" + (f".{seed}" if seed else "")
    rest = "&".join(f"{k}={urllib.parse.quote(v[0], safe='')}" for k, v in parameters.items() if k != "invite")
    return f"{page}#invite={urllib.parse.quote(invite, safe='')}" + (f"&{rest}" if rest else "")


class RolesTests(BrowserTestCase):
    def viewer_controls(self, page) -> dict:
        return page.js("""() => ({
            play: document.getElementById('play').disabled, seek: document.getElementById('seek').disabled,
            rate: document.getElementById('rate').disabled, time: document.getElementById('time').disabled,
            hint: document.getElementById('control-hint').hidden ? null : document.getElementById('control-hint').innerText.trim(),
            title: document.getElementById('play').title })""")

    def assert_viewer(self, page, what: str):
        page.wait("p.roles !== null && !p.roles.controls", 10, f"the page without control ({what})")
        controls = page.wait(f"""(() => {{ const c = {{ play: document.getElementById('play').disabled,
            hint: !document.getElementById('control-hint').hidden }}; return c.play && c.hint ? c : null; }})()""",
                             10, f"the controls off with the hint ({what})")
        self.assertTrue(controls)
        state = self.viewer_controls(page)
        self.assertEqual(state, {"play": True, "seek": True, "rate": True, "time": True, "hint": HINT, "title": HINT}, what)

    def queue_controls(self, page) -> dict:
        """The queue panel's controls as drawn: each row's buttons and whether it can be dragged, the add
        button, repeat, shuffle, previous / next, and the hint under the queue."""
        return page.js("""() => {
            const b = (el) => ({disabled: el.disabled, title: el.title});
            const add = document.getElementById('queue-add');
            const hint = document.getElementById('queue-hint');
            return {
                rows: [...document.querySelectorAll('#queue .queue-row')].map((li) => ({
                    draggable: li.draggable, playing: li.dataset.playing === 'true',
                    buttons: [...li.querySelectorAll('button')].map((el) => ({...b(el), kind: el.className})) })),
                add: {ariaDisabled: add.getAttribute('aria-disabled'), title: add.title, input: document.getElementById('queue-file').disabled,
                      opacity: Number(getComputedStyle(add).opacity), cursor: getComputedStyle(add).cursor},
                repeat: b(document.getElementById('queue-repeat')), shuffle: b(document.getElementById('queue-shuffle')),
                next: b(document.getElementById('next')), previous: b(document.getElementById('previous')),
                hint: hint.hidden ? null : hint.innerText.trim(),
                hintShown: !hint.hidden && hint.getBoundingClientRect().height > 0 };
        }""")

    def assert_viewer_queue(self, page, what: str):
        """Every control of the group's queue off on a viewer page, each titled with the hint, the hint under the queue."""
        page.wait("document.querySelectorAll('#queue .queue-row').length >= 2", 15, f"the queue's rows ({what})")
        q = self.queue_controls(page)
        self.assertEqual((q["hint"], q["hintShown"]), (HINT, True), f"{what}: the hint under the queue: {q}")
        self.assertEqual((q["add"]["ariaDisabled"], q["add"]["input"], q["add"]["title"]), ("true", True, HINT), f"{what}: add videos: {q['add']}")
        self.assertLess(q["add"]["opacity"], 0.6, f"{what}: add videos looks off: {q['add']}")
        self.assertEqual(q["add"]["cursor"], "not-allowed", q["add"])
        for name in ("repeat", "shuffle"):
            self.assertTrue(q[name]["disabled"], f"{what}: {name}: {q[name]}")
            self.assertTrue(q[name]["title"].endswith(HINT), f"{what}: {name}: {q[name]}")
        for name in ("next", "previous"):
            self.assertEqual(q[name], {"disabled": True, "title": HINT}, f"{what}: {name}")
        for row in q["rows"]:
            self.assertFalse(row["draggable"], f"{what}: a row can be dragged: {row}")
            for button in row["buttons"]:
                self.assertTrue(button["disabled"], f"{what}: a row's button is on: {row}")
                if not (row["playing"] and "queue-pos" in button["kind"]):  # the playing entry's marker says "Playing now"
                    self.assertEqual(button["title"], HINT, f"{what}: {row}")
        # The remove, move and jump buttons are there (and off), not missing.
        kinds = {button["kind"] for row in q["rows"] for button in row["buttons"]}
        self.assertTrue({"mini up", "mini down", "mini remove", "queue-pos"} <= kinds, kinds)

    def test_controller_page_and_viewer_page(self):
        relay = self.coplay.serve()
        clip = support.clip("roles", 30)
        host = self.coplay.host(relay, clip)
        media = self.media_server(clip.parent)
        controller = self.open_page(with_host_key(page_link(host.link, media=media.url(clip.name), name="hana"), HOST_SEED), name="controller")
        controller.wait("p.joined && p.phase === 'joined'", 30, "the controller page to join")
        viewer_link = with_host_key(page_link(host.link, media=media.url(clip.name), name="vic"), None)
        self.assertNotIn(HOST_SEED, urllib.parse.unquote(viewer_link))
        viewer = self.open_page(viewer_link, name="viewer")
        viewer.wait("p.joined && p.phase === 'joined'", 30, "the viewer page to join")

        # The controller page holds the host key: it controls; the viewer does not.
        controller.wait("p.roles && p.roles.controls && p.roles.host", 10, "the controller page to control")
        self.assertFalse(self.viewer_controls(controller)["play"])
        self.assertIsNone(self.viewer_controls(controller)["hint"])
        self.assert_viewer(viewer, "before any command")

        # The controller plays (its button): the viewer follows the signed command.
        controller.page.click("#play")
        viewer.wait("p.group && p.group.rate === 1 && p.group.itemTime > 2", 20, "the viewer to follow the controller's play")
        time.sleep(0.5)
        viewer.screenshot("web-roles-viewer.png")

        # The viewer's keyboard and hook commands are refused on the page, with the hint in its log.
        viewer.page.keyboard.press("k")
        viewer.js("() => window.coplayPage.control.pause()")
        viewer.wait(f"document.getElementById('log').innerText.includes('Not sent: {HINT}')", 5, "the refusal in the log")

        # Forced past its own gate (unsigned, and signed with its own key): the controller ignores both.
        revision = controller.js("() => window.coplayPage.group.revision")
        before = controller.js("() => window.coplayPage.roles.ignored")
        viewer.js("() => window.coplayPage.control.forcedPause()")
        controller.wait(f"(p.roles.ignored.unsigned ?? 0) > {before.get('unsigned', 0)} && (p.roles.ignored.noControl ?? 0) > {before.get('noControl', 0)}",
                        10, "the controller to ignore the forced pause (unsigned, noControl)")
        time.sleep(1)
        for page in (controller, viewer):
            group = page.js("() => window.coplayPage.group")
            self.assertEqual(group["rate"], 1, f"{page.name}: {group}")
            self.assertEqual(group["revision"], revision, f"{page.name}: {group}")
        pauses = [e for e in controller.events("pause") if e.get("originator") == "vic"]
        self.assertEqual(pauses, [], "the controller page took the viewer's pause")

        # The controller pauses: both stop at the same item time.
        controller.page.click("#play")
        controller.wait("p.group.rate === 0", 10, "the controller's pause")
        viewer.wait("p.group.rate === 0", 10, "the viewer to follow the pause")
        self.assertAlmostEqual(controller.js("() => window.coplayPage.group.itemTime"), viewer.js("() => window.coplayPage.group.itemTime"), delta=0.001)
        for page in (controller, viewer):
            self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

    def test_viewer_page_controls_only_after_a_grant(self):
        """Needs coplay with roles: `host --control hosts`, `invite --viewer --link`, `control … grant/revoke`."""
        relay = self.coplay.serve()
        clip = support.clip("roles", 30)
        second = support.clip("roles-b", 6)
        host = self.coplay.host(relay, clip, str(second), "--control", "hosts")
        self.assertIn("&host=", host.invite)
        viewer_invite = self.invite(host.invite, "--viewer")
        viewer_link = self.invite(host.invite, "--viewer", "--link")
        self.assertTrue(viewer_link.startswith("http"), viewer_link)
        self.assertIn(".", host.secret, "the controller invite carries the host seed")
        self.assertNotIn(host.secret.split(".", 1)[1], urllib.parse.unquote(viewer_link), "the viewer link carries the host seed")
        carl = self.coplay.join(viewer_invite, clip, "carl", "--item", str(second))
        media = self.media_server(clip.parent)
        # The page has a copy of the first entry only (its media= URL).
        page = self.open_page(page_link(viewer_link, media=media.url(clip.name), name="bob"))
        page.wait("p.joined && p.phase === 'joined' && p.chat && p.chat.key !== null", 30, "the viewer page to join")
        self.assert_viewer(page, "a viewer invite")
        self.assert_viewer_queue(page, "a viewer invite")

        self.coplay.control(host.invite, "play")
        page.wait("p.group && p.group.rate === 1 && p.group.itemTime > 2", 20, "the page to follow the host's play")
        if support.SCREENSHOTS:
            try:  # for the picture: the page measured in step
                page.wait("p.sync && p.sync.playing && p.sync.errorMs !== null", 5, "the page's first measurement")
            except AssertionError:
                print(f"\nscreenshot: the page not measured yet: {page.js('() => window.coplayPage.sync')}")
            page.screenshot("web-roles-viewer.png")
        # A click on its queue's buttons changes nothing (they are off).
        entries = page.js("() => window.coplayPage.queue.rows.map((r) => r.id)")
        page.page.click("#queue .queue-row:nth-child(2) .mini.remove", force=True)
        page.page.click("#queue .queue-row:nth-child(2) .queue-pos", force=True)

        # A pause forced past the page's gate changes no player.
        marks = {"host": host.process.event_count(), "carl": carl.event_count()}
        revision = page.js("() => window.coplayPage.group.revision")
        page.js("() => window.coplayPage.control.forcedPause()")
        time.sleep(2)
        for name, process in (("host", host.process), ("carl", carl)):
            later = process.events[marks[name]:]
            self.assertEqual([e for e in later if e.get("type") in ("pause", "rate")], [], f"{name} took the viewer's pause")
        group = page.js("() => window.coplayPage.group")
        self.assertEqual((group["rate"], group["revision"]), (1, revision), group)

        self.assertEqual(page.js("() => window.coplayPage.queue.rows.map((r) => r.id)"), entries)
        self.assertEqual(page.js("() => window.coplayPage.queue.playing"), entries[0])

        # Granted: the page's controls come on, a notice says so, and its pause button pauses everyone.
        self.coplay.control(host.invite, "grant", "bob")
        page.wait("p.roles.controls && !document.getElementById('play').disabled && document.getElementById('control-hint').hidden", 15,
                  "the grant to enable the page's controls")
        q = self.queue_controls(page)
        self.assertEqual((q["hint"], q["add"]["ariaDisabled"], q["add"]["input"], q["repeat"]["disabled"], q["shuffle"]["disabled"]),
                         (None, "false", False, False, False), q)
        self.assertTrue(all(not b["disabled"] for row in q["rows"] for b in row["buttons"] if "remove" in b["kind"]), q["rows"])
        self.assertNotIn(HINT, [q["add"]["title"], q["repeat"]["title"], q["next"]["title"]], q)
        page.wait("p.notices.all.includes('bob may control the session now')", 5, "the notice of the grant")
        page.page.click("#play")
        host.process.wait_event(lambda e: e.get("type") == "pause" and e.get("originator") == "bob", 15, "bob's pause at the host")
        carl.wait_event(lambda e: e.get("type") == "pause" and e.get("originator") == "bob", 15, "bob's pause at carl")
        page.wait("p.group.rate === 0", 10, "the page paused")

        # Revoked: off again, and the next command counts nowhere.
        self.coplay.control(host.invite, "revoke", "bob")
        self.assert_viewer(page, "after revoke")
        self.assert_viewer_queue(page, "after revoke")
        page.wait("p.notices.all.includes('bob no longer controls the session')", 5, "the notice of the revocation")
        self.coplay.control(host.invite, "play")
        page.wait("p.group.rate === 1", 10, "the host's play")
        marks = {"host": host.process.event_count(), "carl": carl.event_count()}
        page.js("() => window.coplayPage.control.forcedPause()")
        time.sleep(2)
        for name, process in (("host", host.process), ("carl", carl)):
            later = process.events[marks[name]:]
            self.assertEqual([e for e in later if e.get("type") in ("pause", "rate")], [], f"{name} took the revoked page's pause")
        self.assertEqual(page.js("() => window.coplayPage.group.rate"), 1)

        # The host moves the group to the second entry, which the page has no copy of: choosing its own
        # copy is still the viewer's to do (its own, not the group's), and it is in step on it.
        self.coplay.control(host.invite, "next")
        page.wait(f"p.queue.missing !== null && p.queue.missing.title === '{second.name}'", 20, "the viewer to miss the second entry")
        page.wait("!document.getElementById('picker').hidden", 10, "the picker for the viewer's own copy")
        page.page.set_input_files("#file", [str(second)])
        page.wait(f"p.queue.missing === null && p.queue.rows.find((r) => r.playing)?.title === '{second.name}' && p.queue.rows.find((r) => r.playing).hasCopy"
                  " && p.sync && p.sync.playing", 20, "the viewer playing its own copy of the second entry")
        self.assert_viewer_queue(page, "on its own copy of the second entry")
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

    def invite(self, invite: str, *args: str) -> str:
        """`coplay invite INVITE ARGS`: its last line."""
        result = subprocess.run([self.coplay.binary, "invite", invite, *args], capture_output=True, text=True, timeout=30,
                                stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, f"coplay invite {' '.join(args)}: {result.stderr.strip()}")
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        return lines[-1].strip()

"""Notices over the video: a page shows "alice paused at 0:0…" when `coplay control pause --name alice`
pauses everyone, and a one-shot command is not announced as a person joining and leaving (not in the
notices, not in the page's log, not in the host's events); the level select keeps only commands or none."""

import time

import support
from support import BrowserTestCase, page_link


class PageNoticesTests(BrowserTestCase):
    def test_notices_over_the_video_and_one_shot_commands_under_their_name(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(host.link, media=media.url(clip.name), name="bea"))
        page.wait("p.joined && p.phase === 'joined'", 30, "the page to join")

        # A player that joins is announced, by name, once.
        carl = self.coplay.join(host.invite, clip, "carl")
        page.wait("p.notices.all.includes('carl joined')", 15, "the notice of carl joining")

        self.coplay.control(host.invite, "play", "--name", "alice")
        page.wait("p.notices.all.includes('alice played from 0:00')", 10, "the notice of alice's play")
        page.wait("p.group.itemTime > 2", 10, "a few seconds of playback")
        self.coplay.control(host.invite, "pause", "--name", "alice")
        page.wait("p.notices.shown.some((t) => t.startsWith('alice paused at 0:0'))", 10, "the notice of alice's pause")
        time.sleep(0.4)  # past the notice's fade-in
        page.screenshot("web-notice.png")

        carl.stop()
        page.wait("p.notices.all.includes('carl left')", 15, "the notice of carl leaving")
        time.sleep(2)  # long after the one-shot member left
        notices = page.js("() => window.coplayPage.notices.all")
        self.assertFalse([t for t in notices if "alice joined" in t or "alice left" in t or "control" in t], notices)
        membership = [e for e in page.events() if e.get("type") in ("joined", "left")]
        self.assertFalse([e for e in membership if e.get("originator") in ("alice", "control") or e.get("originatorName") == "alice"], membership)
        log = page.js("() => document.getElementById('log').innerText")
        self.assertNotIn("alice joined", log)
        self.assertNotIn("alice left", log)
        self.assertIn("alice", log, "the log names the command's originator")
        people = page.js("() => document.getElementById('people').innerText")
        self.assertNotIn("alice", people)
        hosts = [e for e in host.process.events_of("joined") + host.process.events_of("left") if e.get("originator") in ("alice", "control")]
        self.assertEqual(hosts, [], "the host announced a one-shot member")
        pause = [e for e in host.process.events_of("pause") if e.get("originator") == "alice"]
        self.assertTrue(pause, "the host's pause event names alice")

        # Only commands, then none.
        page.js("() => { const s = document.getElementById('notice-level'); s.value = 'commands'; s.dispatchEvent(new Event('change')); }")
        dave = self.coplay.join(host.invite, clip, "dave")
        page.wait("document.getElementById('people').innerText.includes('dave')", 15, "dave in the people list")
        self.coplay.control(host.invite, "seek", "5", "--name", "alice")
        page.wait("p.notices.all.includes('alice moved to 0:05')", 10, "the notice of alice's seek")
        self.assertNotIn("dave joined", page.js("() => window.coplayPage.notices.all"))
        page.js("() => { const s = document.getElementById('notice-level'); s.value = 'off'; s.dispatchEvent(new Event('change')); }")
        count = len(page.js("() => window.coplayPage.notices.all"))
        self.coplay.control(host.invite, "seek", "7", "--name", "alice")
        page.wait("p.group.itemTime >= 6.9", 10, "the seek to 7")
        time.sleep(0.5)
        self.assertEqual(len(page.js("() => window.coplayPage.notices.all")), count, "notices with the level off")
        dave.stop()
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

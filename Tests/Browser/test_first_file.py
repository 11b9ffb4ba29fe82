"""A page joins a session without the session's first file: with only later entries of `coplay host A B C` it
joins while the group plays A, says which entries it has and where it joins, sits A out (the others do not
wait) and shows B's first frame in step with a headless member; with none of the entries it says what the
session plays and what the person gave, and a file chosen then plays."""

import support
from support import BrowserTestCase, page_link

FRAME_MS = 1000 / 25


class FirstFileTests(BrowserTestCase):
    def test_page_with_only_later_entries_joins_sits_out_the_first_and_plays_the_second_in_step(self):
        relay = self.coplay.serve()
        # A is long enough for the page to join while the group plays it (a loaded machine included).
        first, second, third = support.clip("fa", 25), support.clip("fb", 4), support.clip("fc", 3)
        host = self.coplay.host(relay, first, str(second), str(third))
        ben = self.coplay.join(host.invite, first, "ben", "--item", str(second), "--item", str(third), "--frames")
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' && !document.getElementById('picker').hidden", 20, "the file picker")
        self.coplay.control(host.invite, "play")
        ben.wait_event(lambda e: e.get("type") == "frame", 15, "ben to play A")
        # This person has the second and the third file, not the first (the session's).
        page.page.set_input_files("#file", [str(second), str(third)])
        page.wait("p.joined && p.coverage && p.coverage.notice !== null", 30, "the page to join and review its files against the queue")
        notice = page.js("() => window.coplayPage.coverage.notice")
        print(f"\n  page: {notice['short']}")
        self.assertEqual(notice["kind"], "partial", notice)
        self.assertEqual((notice["have"], notice["total"]), (2, 3), notice)
        self.assertIn("You have 2 of the 3 entries; the group plays “fa.mp4” now, you join at “fb.mp4”", notice["short"])
        state = page.state()
        self.assertEqual(state["status"], "Joined", state)
        self.assertIn("You have 2 of the 3 entries", state["banner"] or "", state)
        self.assertIn("you join at “fb.mp4”", state["banner"] or "", state)
        # It sits A out with the existing prompt and suspension; nobody waits for it.
        page.wait("p.queue.missing !== null && p.queue.missing.title === 'fa.mp4'", 15, "the page to sit out fa")
        picker = page.js("() => document.getElementById('picker').innerText")
        self.assertIn("Choose your copy of “fa.mp4” (0:25)", picker)
        # It names the first entry the page has (not the one it sits out) as where it joins.
        self.assertIn("when the group reaches “fb.mp4”, which you have.", picker)
        self.assertNotIn("“fa.mp4”, which you have", picker)
        self.assertEqual([r["hasCopy"] for r in page.js("() => window.coplayPage.queue.rows")], [False, True, True])
        page.screenshot("web-first-file-partial.png")
        began = ben.wait_event(lambda e: e.get("type") == "suspensionBegan" and e.get("reason") == "coordinatedPlaybackNotPossible",
                               15, "ben to see the page's suspension")
        self.assertFalse(began.get("waits"), f"nobody waits for a missing copy: {began}")
        self.assertFalse(page.js("() => window.coplayPage.group.waiting"), "the group does not wait")
        self.assertFalse(page.js("() => window.coplayPage.samples().some((s) => !s.paused)"), "the page shows no frames of A")
        waited = [e for e in ben.events_of("suspensionBegan") if e.get("waits") and e.get("originatorName") == "ana"]
        self.assertEqual(waited, [], "the page sitting A out made the group wait")

        # At A's end the group moves to B: the page plays it from its first frame, in step.
        page.wait("p.queue.missing === null && p.queue.rows.find((r) => r.playing)?.title === 'fb.mp4' && p.sync && p.sync.playing", 40,
                  "the page to play fb")
        ben.wait_event(lambda e: e.get("type") == "suspensionEnded" and e.get("reason") == "coordinatedPlaybackNotPossible",
                       10, "ben to see the page's suspension end")
        self.assertTrue(page.js("() => document.getElementById('picker').hidden"), "the prompt is gone")
        change = [e for e in page.events("itemChanged") if e.get("reason") == "end"][-1]
        instant_ms = change["referenceTime"] * 1000
        page.wait(f"p.samples().some((s) => !s.paused && s.wallMs + s.referenceOffsetMs >= {instant_ms} - 50 && s.mediaTime < 0.5)", 10,
                  "fb's first frames")
        frames = page.js("""(instant) => window.coplayPage.samples()
            .filter((s) => !s.paused && s.wallMs + s.referenceOffsetMs >= instant - 50 && s.mediaTime < 0.5)
            .map((s) => ({mediaTime: s.mediaTime, errorMs: s.wallMs + s.referenceOffsetMs - instant - s.mediaTime * 1000}))""", instant_ms)
        page_first = frames[0]
        # ben's first frame of fb: shown at its scheduled instant plus its wake-up lateness, against the group's instant for its pts.
        ben_frames = [e for e in ben.events_of("frame") if e.get("referenceTime") is not None and e.get("pts") is not None
                      and e["referenceTime"] * 1000 >= instant_ms - 50 and e["pts"] < 0.5]
        self.assertTrue(ben_frames, "ben presented fb's first frames")
        ben_first = min(ben_frames, key=lambda e: e["referenceTime"])
        ben_error_ms = ben_first["referenceTime"] * 1000 + (ben_first.get("errorMs") or 0) - instant_ms - ben_first["pts"] * 1000
        offset = page_first["errorMs"] - ben_error_ms
        print(f"  page: fb's first frame at {page_first['mediaTime']:.3f} s, {page_first['errorMs']:+.1f} ms from the group's instant "
              f"for it; ben's {ben_error_ms:+.3f} ms; page - ben {offset:+.1f} ms; first frames {[round(f['errorMs'], 1) for f in frames[:8]]}")
        # Generous (a loaded machine): within two frame intervals of the headless member.
        self.assertLess(abs(offset), 2 * FRAME_MS, f"the page's first frames of fb: {frames[:8]}, ben's {ben_first}")
        self.assertFalse([line for line in page.console if line.startswith("pageerror")], page.console)

    def test_page_with_one_file_of_a_later_entry_joins_and_plays_it_when_the_group_reaches_it(self):
        relay = self.coplay.serve()
        first, second, third = support.clip("sa", 6), support.clip("sb", 4), support.clip("sc", 3)
        host = self.coplay.host(relay, first, str(second), str(third))
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' && !document.getElementById('picker').hidden", 20, "the file picker")
        # One file, the queue's second entry: the retained copy of the queue (read before joining) lists it.
        page.page.set_input_files("#file", str(second))
        page.wait("p.joined && p.coverage && p.coverage.notice !== null", 30, "the page to join and review its file against the queue")
        notice = page.js("() => window.coplayPage.coverage.notice")
        print(f"\n  page: {notice['short']}")
        self.assertEqual((notice["kind"], notice["have"], notice["total"]), ("partial", 1, 3), notice)
        self.assertIn("you join at “sb.mp4”", notice["short"])
        log = page.js("() => window.coplayPage.events.map((e) => e.text ?? '')")
        self.assertTrue(any("is not “sa.mp4”, the video the session started with, but entry 2 of the group's queue (“sb.mp4”)" in line
                            for line in log), log)
        host.process.wait_event(lambda e: e.get("type") == "joined" and e.get("originator") != "host", 10, "the page's join")
        page.screenshot("web-first-file-one.png")
        self.coplay.control(host.invite, "play")
        page.wait("p.queue.missing === null && p.queue.rows.find((r) => r.playing)?.title === 'sb.mp4' && p.sync && p.sync.playing", 40,
                  "the page to play sb when the group reaches it")
        page.wait("p.samples().some((s) => !s.paused && s.mediaTime > 0.2)", 10, "sb's frames")
        self.assertFalse([line for line in page.console if line.startswith("pageerror")], page.console)

    def test_page_with_none_of_the_entries_says_so_and_can_choose_again(self):
        relay = self.coplay.serve()
        first, second, third = support.clip("na", 20), support.clip("nb", 4), support.clip("nc", 3)
        host = self.coplay.host(relay, first, str(second), str(third))
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' && !document.getElementById('picker').hidden", 20, "the file picker")
        # Clips of the same length and rate are the same bytes: these differ from the session's.
        others = [support.clip("other-x", 2, 30), support.clip("other-y", 6, 30)]
        page.page.set_input_files("#file", [str(path) for path in others])
        page.wait("p.coverage && p.coverage.notice !== null", 30, "the page to review its files against the queue")
        notice = page.js("() => window.coplayPage.coverage.notice")
        print(f"\n  page: {notice['title']}: {notice['text']}")
        self.assertEqual(notice["kind"], "none", notice)
        state = page.state()
        self.assertEqual(state["status"], "Wrong video", state)
        banner = state["banner"] or ""
        self.assertIn("None of these files is in this session", banner, state)
        self.assertIn("“na.mp4”, “nb.mp4” and “nc.mp4”", banner, state)
        self.assertIn("“other-x.mp4” and “other-y.mp4”", banner, state)
        self.assertEqual(page.js("() => window.coplayPage.lastError.title"), "None of these files is in this session")
        # The picker asks again, with the same words (not for one entry).
        page.wait("!document.getElementById('picker').hidden", 10, "the picker offered again")
        picker = page.js("() => document.getElementById('picker').innerText")
        self.assertIn("None of these files is in this session", picker)
        self.assertFalse(page.js("() => window.coplayPage.samples().some((s) => !s.paused)"), "nothing plays")
        page.screenshot("web-first-file-none.png")

        # Choosing one of the entries then: the page says which it has, and plays it when the group does.
        page.page.set_input_files("#file", [str(second)])
        page.wait("p.coverage.notice !== null && p.coverage.notice.kind === 'partial' && p.phase === 'joined'", 20,
                  "the page to take the second file")
        self.assertIn("You have 1 of the 3 entries", page.js("() => window.coplayPage.coverage.notice.short"))
        self.assertNotIn("None of these files", page.state()["banner"] or "", "the refusal is gone")
        self.coplay.control(host.invite, "jump", "2")
        page.wait("p.queue.missing === null && p.queue.rows.find((r) => r.playing)?.title === 'nb.mp4'", 20, "the page on nb")
        self.coplay.control(host.invite, "play")
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 0.5", 20, "the page to play nb")
        self.assertFalse([line for line in page.console if line.startswith("pageerror")], page.console)

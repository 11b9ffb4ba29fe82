"""The page in a session with a queue (`coplay host A B --repeat all`): it shows the queue, edits it (adds a
file, moves an entry, removes one) as every member sees it, and moves to the next entry at the end of one
on the shared clock, in step with a headless member."""

import json

import support
from support import BrowserTestCase, page_link, wait_until

FPS = 25


class QueueTests(BrowserTestCase):
    def test_page_shows_edits_and_transitions_a_queue_in_step(self):
        relay = self.coplay.serve()
        # Three clips of different lengths (different files, different stream identities).
        first, second, third = support.clip("qa", 3), support.clip("qb", 4), support.clip("qc", 3, 30)
        host = self.coplay.host(relay, first, str(second), "--repeat", "all")
        ben = self.coplay.join(host.invite, first, "ben", "--item", str(second), "--item", str(third), "--frames")
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' || !document.getElementById('picker').hidden", 20, "the file picker")
        # The person picks two files at once: the session's and the second entry's.
        page.page.set_input_files("#file", [str(first), str(second)])
        page.wait("p.joined && p.queue && p.queue.rows.length === 2", 30, "the page to join and show the host's queue")

        # Entries name who added them (by name once the host's first presence report came).
        page.wait("p.queue.rows.every((r) => r.addedBy === 'host')", 10, "the entries added by the host, by name")
        queue = page.js("() => window.coplayPage.queue")
        self.assertEqual([r["title"] for r in queue["rows"]], ["qa.mp4", "qb.mp4"])
        self.assertEqual([r["addedBy"] for r in queue["rows"]], ["host", "host"])
        self.assertEqual([r["duration"] for r in queue["rows"]], ["0:03", "0:04"])
        self.assertTrue(all(r["hasCopy"] for r in queue["rows"]), f"the page has both copies: {queue}")
        self.assertEqual(queue["repeatMode"], "all")
        page.wait("document.querySelectorAll('#queue .queue-row').length === 2", 5, "two rows in the panel")

        # Add a file from the panel: a third entry, added by this page, that every member sees.
        page.page.set_input_files("#queue-file", [str(third)])
        page.wait("p.queue.rows.length === 3", 15, "the added entry")
        self.assertEqual(page.js("() => window.coplayPage.queue.rows[2].addedBy"), "you")
        self.assertEqual(page.js("() => window.coplayPage.queue.rows[2].title"), "qc.mp4")
        listed = lambda: json.loads(subprocess_queue(self, host.invite))
        wait_until(lambda: [e["title"] for e in listed()["entries"]] == ["qa.mp4", "qb.mp4", "qc.mp4"], 15,
                   "`coplay queue` to list the page's entry", lambda: json.dumps(listed()))

        # Move it up (the row's button), then remove the second file's entry (its row's button).
        page.page.hover("#queue .queue-row:nth-child(3)")
        page.page.click("#queue .queue-row:nth-child(3) .mini.up")
        page.wait("p.queue.rows.map((r) => r.title).join() === 'qa.mp4,qc.mp4,qb.mp4'", 10, "qc moved up")
        page.page.hover("#queue .queue-row:nth-child(3)")
        page.page.click("#queue .queue-row:nth-child(3) .mini.remove")
        page.wait("p.queue.rows.map((r) => r.title).join() === 'qa.mp4,qc.mp4'", 10, "qb removed")
        wait_until(lambda: [e["title"] for e in listed()["entries"]] == ["qa.mp4", "qc.mp4"], 15,
                   "every member to have the edited queue", lambda: json.dumps(listed()))

        # Play: qa (3 s), then qc (3 s, 30 fps), then qa again (repeat all), each change on the shared clock.
        self.coplay.control(host.invite, "play")
        page.wait("p.queue.playing !== null && p.queue.rows.find((r) => r.playing)?.title === 'qc.mp4'", 20, "the page to move to qc")
        page.wait("p.sync && p.sync.playing && p.group.itemTime > 0.5", 10, "the page to play qc")
        page.screenshot("web-queue.png")
        if support.SCREENSHOTS:
            # The panel alone, as people look at it.
            directory = support.Path(support.SCREENSHOTS)
            directory = directory if directory.is_absolute() else support.ROOT / directory
            page.page.locator("#queue-card").screenshot(path=str(directory / "web-queue-panel.png"))
        changes = [e for e in page.events("itemChanged") if e.get("reason") == "end"]
        self.assertTrue(changes, f"an itemChanged at the end of qa: {page.events('itemChanged')}")
        change = changes[-1]
        instant_ms = change["referenceTime"] * 1000
        # The page's first frames of qc against the group's timeline (rVFC, on the reference clock).
        frames = page.js("""(instant) => window.coplayPage.samples()
            .filter((s) => !s.paused && s.wallMs + s.referenceOffsetMs >= instant - 50 && s.mediaTime < 0.5)
            .map((s) => ({mediaTime: s.mediaTime, errorMs: s.wallMs + s.referenceOffsetMs - instant - s.mediaTime * 1000}))""",
                         instant_ms)
        self.assertTrue(frames, "the page presented qc's first frames")
        first_frame = frames[0]
        print(f"\n  page: qc's first presented frame at {first_frame['mediaTime']:.3f} s, "
              f"{first_frame['errorMs']:+.1f} ms from the group's instant for it; first frames {[round(f['errorMs'], 1) for f in frames[:8]]}")
        # Generous (a loaded machine): within two frame intervals of the group's timeline.
        self.assertLess(abs(first_frame["errorMs"]), 2000 / 30, f"the page's first frames of qc: {frames[:8]}")
        # The headless member's first frame of qc, at the same instant.
        ben_frames = [e for e in ben.events_of("frame") if e.get("referenceTime") is not None
                      and abs(e["referenceTime"] * 1000 - instant_ms) < 200]
        self.assertTrue(ben_frames, "ben presented frames at the transition")
        ben_first = min((e for e in ben_frames if e["referenceTime"] * 1000 >= instant_ms - 1), key=lambda e: e["referenceTime"])
        print(f"  ben: first frame after the transition at {ben_first['referenceTime'] * 1000 - instant_ms:+.3f} ms (item {ben_first.get('item', '?')[:12]})")
        self.assertLess(abs(ben_first["referenceTime"] * 1000 - instant_ms), 1.0, f"ben's first frame of qc: {ben_first}")

        # And back to qa at the end of qc (repeat all): the page follows again.
        page.wait("p.queue.rows.find((r) => r.playing)?.title === 'qa.mp4' && p.sync && p.sync.playing", 20,
                  "the page back on qa (repeat all)")
        self.assertIsNone(page.js("() => window.coplayPage.queue.missing"))
        self.assertFalse([line for line in page.console if line.startswith("pageerror")], page.console)

    def test_page_missing_an_entry_lets_the_others_go_on_and_rejoins_on_the_next(self):
        relay = self.coplay.serve()
        first, second, third = support.clip("ma", 3), support.clip("mb", 4), support.clip("mc", 5)
        host = self.coplay.host(relay, first, str(second), str(third))
        ben = self.coplay.join(host.invite, first, "ben", "--item", str(second), "--item", str(third), "--frames")
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' || !document.getElementById('picker').hidden", 20, "the file picker")
        # This person has the first and the third file, not the second.
        page.page.set_input_files("#file", [str(first), str(third)])
        page.wait("p.joined && p.queue && p.queue.rows.length === 3", 30, "the page to join and show the queue")
        self.assertEqual([r["hasCopy"] for r in page.js("() => window.coplayPage.queue.rows")], [True, False, True])
        self.coplay.control(host.invite, "play")
        # On mb the page names the entry and asks for it; the others play on without waiting.
        page.wait("p.queue.missing !== null && p.queue.missing.title === 'mb.mp4'", 20, "the page to miss mb")
        picker = page.js("() => document.getElementById('picker').innerText")
        self.assertIn("Choose your copy of “mb.mp4” (0:04)", picker)
        self.assertIn("others go on without waiting", picker)
        page.screenshot("web-queue-missing.png")
        began = ben.wait_event(lambda e: e.get("type") == "suspensionBegan" and e.get("reason") == "coordinatedPlaybackNotPossible",
                               10, "ben to see the page's suspension")
        self.assertFalse(began.get("waits"), f"nobody waits for a missing copy: {began}")
        self.assertFalse(page.js("() => window.coplayPage.group.waiting"), "the group does not wait")
        # On mc the page is back in step, its suspension over.
        page.wait("p.queue.missing === null && p.queue.rows.find((r) => r.playing)?.title === 'mc.mp4' && p.sync && p.sync.playing", 20,
                  "the page back on mc")
        ben.wait_event(lambda e: e.get("type") == "suspensionEnded" and e.get("reason") == "coordinatedPlaybackNotPossible",
                       10, "ben to see the page's suspension end")
        self.assertTrue(page.js("() => document.getElementById('picker').hidden"), "the picker is gone")
        change = [e for e in page.events("itemChanged") if e.get("reason") == "end"][-1]
        instant_ms = change["referenceTime"] * 1000
        page.wait(f"p.samples().some((s) => !s.paused && s.wallMs + s.referenceOffsetMs >= {instant_ms} - 50 && s.mediaTime < 0.5)", 10,
                  "mc's first frames")
        frames = page.js("""(instant) => window.coplayPage.samples()
            .filter((s) => !s.paused && s.wallMs + s.referenceOffsetMs >= instant - 50 && s.mediaTime < 0.5)
            .map((s) => ({mediaTime: s.mediaTime, errorMs: s.wallMs + s.referenceOffsetMs - instant - s.mediaTime * 1000}))""", instant_ms)
        print(f"\n  page back on mc: first frame {frames[0]['mediaTime']:.3f} s, {frames[0]['errorMs']:+.1f} ms from the group's instant for it")
        self.assertLess(abs(frames[0]["errorMs"]), 2000 / 25, f"the page's first frames of mc: {frames[:8]}")


def subprocess_queue(test, invite: str) -> str:
    """`coplay queue INVITE --json` (what a CLI member sees)."""
    import subprocess
    result = subprocess.run([test.coplay.binary, "queue", invite, "--json"], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise AssertionError(f"coplay queue failed: {result.stderr.strip()}")
    return result.stdout

"""What goes wrong, as a person sees it on the page: a wrong secret, the wrong media, a relay that goes
away (and comes back), and WebSocket garbage from someone else (only that connection is closed)."""

import struct
import time
import urllib.parse

import support
from support import BrowserTestCase, RawWebSocket, page_link, relay_frame, wait_until

ERROR_FRAME = 0x0A


def tamper(link: str) -> str:
    """The link with the invite's secret changed (its first character: the last one carries padding bits)."""
    head, secret = link.rsplit("%23", 1)
    return f"{head}%23{'B' if secret[0] != 'B' else 'C'}{secret[1:]}"


def close_code(payload: bytes):
    return struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None


class FailureTests(BrowserTestCase):
    def test_wrong_secret_is_refused_with_a_clear_message(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(tamper(host.link), media=media.url(clip.name)))
        page.wait("p.phase === 'error' && p.lastError !== null", 15, "the page to give up")
        state = page.state()
        self.assertEqual(state["lastError"]["title"], "Wrong secret", state)
        self.assertIn("Wrong secret", state["banner"] or "", state)
        self.assertEqual(state["status"], "Not connected", state)
        self.assertFalse(state["joined"], state)
        self.assertEqual(len([e for e in page.events() if e.get("kind") == "bad"]), 1, f"said once: {page.events()}")
        self.assertFalse(page.js("() => document.getElementById('video').hasAttribute('src')"), "nothing plays")
        self.assertIn("Wrong secret", page.js("() => document.getElementById('picker').innerText"))
        # The session is untouched: nobody joined it.
        time.sleep(0.5)
        self.assertEqual([e for e in host.process.events_of("joined") if e.get("originator") != "host"], [])

    def test_links_the_page_cannot_use_say_why(self):
        relay = self.coplay.serve()
        chacha = self.coplay.start("host", "host", str(support.sample("cfr-25.mp4")), "--relay", relay.address,
                                   "--cipher", "chacha20-poly1305")
        invite = chacha.wait_line(lambda l: l.startswith("coplay://"), 30, "the invite line")
        chacha.wait_line(lambda l: "browsers cannot join" in l, 10, "the note instead of a page link")
        cases = [
            (relay.origin + "/", "No invite in this link"),
            (relay.origin + "/#invite=" + urllib.parse.quote(invite, safe=""), "This invite is not for browsers"),
            (relay.origin + "/#invite=coplay%3A%2F%2Fnowhere", "This invite is not valid"),
        ]
        for link, title in cases:
            with self.subTest(title=title):
                page = self.open_page(link)
                page.wait("p.lastError !== null", 10, f"the page to say {title!r}")
                state = page.state()
                self.assertEqual(state["lastError"]["title"], title, state)
                self.assertIn(title, state["banner"] or "", state)
                self.assertEqual(page.websockets, [], "nothing is sent to the relay for a link the page cannot use")

    def test_mismatched_media_is_not_joined_and_another_file_can_be_chosen(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        page = self.open_page(host.link)  # no media in the link: the page asks for a file
        page.wait("p.phase === 'media' && !document.getElementById('picker').hidden", 15, "the file picker")
        wrong = support.sample("cfr-25.mp4")
        page.page.set_input_files("#file", str(wrong))
        page.wait("p.phase === 'mismatch'", 15, "the mismatch")
        state = page.state()
        self.assertFalse(state["joined"], state)
        self.assertIn("This is not the session's media", state["banner"] or "", state)
        self.assertIn("cfr-25.mp4", state["banner"], state)
        self.assertEqual(state["status"], "Wrong video", state)
        self.assertFalse(page.js("() => document.getElementById('video').hasAttribute('src')"), "the wrong video is not shown")
        self.assertFalse(page.js("() => document.getElementById('picker').hidden"), "the picker is offered again")
        page.screenshot("web-mismatch.png")
        time.sleep(0.5)
        self.assertEqual([e for e in host.process.events_of("joined") if e.get("originator") != "host"], [],
                         "a page with the wrong media does not join")

        page.page.set_input_files("#file", str(clip))
        page.wait("p.joined && p.phase === 'joined'", 20, "the page to join with the right file")
        self.assertIsNone(page.state()["banner"])
        host.process.wait_event(lambda e: e.get("type") == "joined" and e.get("originator") != "host", 10, "the page's join")

    def test_mismatched_media_url_says_so(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        media = self.media_server(support.SAMPLES)
        page = self.open_page(page_link(host.link, media=media.url("cfr-24.mkv")))
        page.wait("p.phase === 'mismatch'", 15, "the mismatch")
        state = page.state()
        self.assertIn("This is not the session's media", state["banner"] or "", state)
        self.assertIn("cfr-24.mkv", state["banner"], state)

    def test_relay_restart_resumes_and_a_closed_relay_is_reported(self):
        data = self.workdir / "relay-data"
        relay = self.coplay.serve("--data-dir", str(data))
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(host.link, media=media.url(clip.name), name="ana"))
        page.wait("p.joined", 30, "the page to join")
        waiting = self.open_page(host.link, "picker-page")  # a second page, still choosing its file
        waiting.wait("p.phase === 'media'", 15, "the second page's picker")
        self.coplay.control(host.invite, "play")
        page.wait("p.sync && p.sync.playing", 10, "the page to play")

        # The relay restarts on the same port (sessions kept in --data-dir): the page resumes.
        relay.process.stop()
        page.wait("p.phase === 'reconnecting'", 5, "the page to say it is reconnecting")
        self.assertIn("Reconnecting", page.state()["banner"] or "")
        waiting.wait("p.phase === 'error' && p.lastError !== null", 5, "the unjoined page to report the lost relay")
        self.assertIn("relay", waiting.state()["lastError"]["title"].lower(), waiting.state())
        relay = self.coplay.serve("--data-dir", str(data), port=relay.port)
        page.wait("p.phase === 'joined' && p.joined", 15, "the page to resume")
        self.assertIsNone(page.state()["banner"])
        self.assertTrue(any("Reconnected" in (e.get("text") or "") for e in page.events()), page.events())
        self.coplay.control(host.invite, "pause")
        page.wait("p.group.rate === 0 && !p.sync.playing", 10, "the resumed page to follow a pause")

        # The relay goes away for good: the page says so (reconnecting at once, given up after 30 s).
        started = time.monotonic()
        relay.process.stop()
        page.wait("p.phase === 'reconnecting'", 5, "the page to say it is reconnecting")
        page.wait("p.phase === 'error' && p.lastError !== null", 40, "the page to give up on the relay")
        elapsed = time.monotonic() - started
        state = page.state()
        self.assertEqual(state["lastError"]["title"], "Relay closed", state)
        self.assertIn("Relay closed", state["banner"] or "", state)
        self.assertLess(elapsed, 36, "the page gives up about 30 s after the relay went away")
        self.assertTrue(state["paused"], "a page that lost the group stops playing")

    def test_websocket_garbage_closes_only_that_connection(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        media = self.media_server(clip.parent)
        page = self.open_page(page_link(host.link, media=media.url(clip.name), name="ana"))
        page.wait("p.joined", 30, "the page to join")
        self.coplay.control(host.invite, "play")
        page.wait("p.sync && p.sync.playing", 10, "the page to play")
        participant = page.js("() => window.coplayPage.participantId")

        # A text message: closed with 1003.
        text = RawWebSocket(relay.port)
        self.addCleanup(text.close)
        text.send(0x1, b"hello relay")
        messages = list(text.messages())
        self.assertTrue(messages and messages[-1][0] == 0x8, f"a close message: {messages}")
        self.assertEqual(close_code(messages[-1][1]), 1003, messages)

        # A binary message that is not one frame (a length below the 36-byte header): an error frame, then 1002.
        binary = RawWebSocket(relay.port)
        self.addCleanup(binary.close)
        binary.send(0x2, struct.pack(">I", 4) + b"junk")
        messages = list(binary.messages())
        self.assertEqual(close_code(messages[-1][1]), 1002, messages)
        errors = [m for op, m in messages if op == 0x2 and len(m) >= 6 and m[5] == ERROR_FRAME]
        self.assertEqual(len(errors), 1, f"one error frame before the close: {messages}")

        # Bytes after a well-formed frame: 1002 as well.
        trailing = RawWebSocket(relay.port)
        self.addCleanup(trailing.close)
        trailing.send(0x2, relay_frame(0x0B) + b"\x00")
        messages = list(trailing.messages())
        self.assertEqual(close_code(messages[-1][1]), 1002, messages)

        # The same from inside the page (a second WebSocket of its own): the browser sees 1003.
        code = page.js("""() => new Promise((resolve) => {
            const ws = new WebSocket(`ws://${location.host}/ws`);
            ws.onopen = () => ws.send("not a frame");
            ws.onclose = (e) => resolve(e.code);
            setTimeout(() => resolve("no close"), 5000); })""")
        self.assertEqual(code, 1003)

        # The page's own session carried on: same member, still playing, still following commands.
        state = page.state()
        self.assertEqual(state["phase"], "joined", state)
        self.assertTrue(state["sync"]["playing"], state)
        self.assertEqual(page.js("() => window.coplayPage.participantId"), participant)
        self.assertFalse(any("Reconnected" in (e.get("text") or "") for e in page.events()), "the page's connection was not touched")
        self.coplay.control(host.invite, "pause")
        page.wait("p.group.rate === 0 && p.events.some((e) => e.type === 'stopped' && e.itemTime > 0)", 10,
                  "the page to follow a pause")
        log = relay.process.output()
        self.assertIn("connection closed", log)
        self.assertTrue(host.process.alive())


if __name__ == "__main__":
    import unittest
    unittest.main()

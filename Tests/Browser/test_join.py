"""A page joins a session that `coplay host` created, plays on `coplay control`, and never lets the
invite's secret reach a server: not in a request, not in a WebSocket message, not in the relay's log."""

import support
from support import BrowserTestCase, RecordingProxy, page_link, secret_forms


class PageJoinTests(BrowserTestCase):
    def test_page_joins_plays_and_the_secret_stays_in_the_browser(self):
        relay = self.coplay.serve()
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip)
        self.assertIn("#invite=", host.link)
        self.assertTrue(host.link.startswith(relay.origin + "/#"), host.link)

        # Everything the relay receives from the browser passes through this proxy.
        proxy = RecordingProxy(relay.port)
        self.addCleanup(proxy.close)
        media = self.media_server(clip.parent)
        link = page_link(host.link, origin=proxy.origin, media=media.url(clip.name), name="ana")
        page = self.open_page(link)

        page.wait("p.joined && p.phase === 'joined'", 30, "the page to join")
        self.assertEqual(page.js("() => document.getElementById('status-text').textContent"), "Joined")
        page.wait("document.getElementById('people').innerText.includes('host')", 10, "the host in the people list")
        clock = page.js("() => window.coplayPage.clock")
        self.assertTrue(clock["synced"], clock)
        self.assertLess(abs(clock["offsetMs"]), 5, f"the relay runs on this machine's clock: {clock}")

        self.coplay.control(host.invite, "play")
        page.wait("p.group && p.group.rate === 1 && p.sync && p.sync.playing", 10, "the page to play")
        page.wait("p.sync.errorMs !== null && Math.abs(p.sync.errorMs) < 20", 10, "a sync error under 20 ms")
        playing = page.state()
        self.assertFalse(playing["paused"], playing)
        self.assertGreater(playing["currentTime"], 0, playing)
        commands = [e for e in page.events("play") if e.get("originator") == "control"]
        self.assertTrue(commands, f"the log names `coplay control` as the originator: {page.events()}")
        page.wait("document.getElementById('people').innerText.includes('in sync')", 10, "members shown in sync")
        page.wait("p.group.itemTime > 2.5", 10, "a few seconds of playback")

        self.coplay.control(host.invite, "pause")
        page.wait("p.group.rate === 0 && p.events.some((e) => e.type === 'stopped')", 10, "the page to pause")

        # The secret never reached a server, in any form.
        forms = secret_forms(host.secret)
        heads, payloads = proxy.decoded()
        self.assertTrue(any(h.startswith("GET / ") for h in heads), heads)
        self.assertTrue(any(h.startswith("GET /ws ") for h in heads), heads)
        self.assertGreater(len(payloads), 10, "the page's WebSocket messages were recorded")
        for stream in proxy.received():
            for form in forms:
                self.assertNotIn(form, stream, "the secret was sent to the relay")
        for payload in payloads:
            for form in forms:
                self.assertNotIn(form, payload, "the secret was in a WebSocket message")
        for url in page.requests + page.websockets + media.server.requests:
            for form in forms:
                self.assertNotIn(form.decode("latin-1"), url, f"the secret was in a request: {url}")
        relay_log = relay.process.output()
        self.assertIn("path=/ ", relay_log, "the relay logs its HTTP requests at debug level")
        for form in forms:
            self.assertNotIn(form.decode("latin-1"), relay_log, "the secret is in the relay's log")
        self.assertEqual([c for c in page.console if c.startswith("pageerror")], [], page.console)

    def test_a_page_on_another_machine_needs_https(self):
        """WebCrypto exists only in secure contexts: localhost, or https. The same page from the machine's
        network address over http says so; over https (here a TLS-terminating proxy in front of the relay,
        self-signed) it joins."""
        address = support.lan_address()
        if address is None:
            self.skipTest("no network address besides loopback")
        relay = self.coplay.serve(host="0.0.0.0")
        clip = support.clip("clip-20s")
        host = self.coplay.host(relay, clip, relay_address=f"127.0.0.1:{relay.port}")

        plain = self.open_page(page_link(host.link, origin=f"http://{address}:{relay.port}"), "http-page")
        plain.wait("p.lastError !== null", 10, "the page to say it needs https")
        self.assertEqual(plain.state()["lastError"]["title"], "This page needs a secure connection")
        self.assertFalse(plain.js("() => window.isSecureContext"))
        self.assertEqual(plain.websockets, [])

        proxy = RecordingProxy(relay.port, host=address, tls=support.self_signed_context(self.workdir, address))
        self.addCleanup(proxy.close)
        secure = self.open_page(page_link(host.link, origin=proxy.origin, name="remote"), "https-page",
                                ignore_https_errors=True)
        secure.wait("p.phase === 'media'", 15, "the file picker over https")
        self.assertTrue(secure.js("() => window.isSecureContext"))
        secure.page.set_input_files("#file", str(clip))
        secure.wait("p.joined", 20, "the page to join over https / wss")
        self.assertTrue(secure.websockets and secure.websockets[0].startswith(f"wss://{address}:{proxy.port}/ws"),
                        secure.websockets)
        self.coplay.control(host.invite, "play")
        secure.wait("p.sync && p.sync.playing", 10, "the page to play")


if __name__ == "__main__":
    import unittest
    unittest.main()

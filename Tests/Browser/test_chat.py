"""The chat on the page: a `coplay chat` message appears in the page's chat box under its sender's name, a
message typed into the box reaches a command-line member as a `chat` event, a page that joins later sees the
earlier messages, and the box refuses a sixth message within 10 s with the reason."""

import support
from support import BrowserTestCase, page_link, wait_until


class ChatTests(BrowserTestCase):
    def test_chat_between_the_page_and_the_command_line(self):
        relay = self.coplay.serve()
        clip = support.clip("chat", 20)
        host = self.coplay.host(relay, clip)
        page = self.open_page(page_link(host.link, name="ana"))
        page.wait("p.phase === 'media' || !document.getElementById('picker').hidden", 20, "the file picker")
        page.page.set_input_files("#file", [str(clip)])
        page.wait("p.joined && p.chat && p.chat.key !== null", 30, "the page to join with its chat key")

        # A message from the command line, under its sender's name.
        sent = self.coplay.chat(host.invite, "hello page 👋", "bob")
        self.assertEqual(sent.returncode, 0, sent.stderr)
        page.wait("p.chat.entries.some((e) => e.who === 'bob' && e.text === 'hello page 👋')", 15, "bob's message in the box")
        page.wait("[...document.querySelectorAll('#chat li')].some((li) => li.textContent.includes('bob') && li.textContent.includes('hello page 👋'))",
                  5, "bob's message drawn")

        # Typed into the box: the host (JSON Lines) receives it under the page's name, with the page's key.
        page.page.fill("#chat-input", "  hi from the page\nsecond line  ")
        page.page.press("#chat-input", "Enter")
        event = host.process.wait_event(lambda e: e.get("type") == "chat" and e.get("originator") == "ana", 15, "the page's message at the host")
        self.assertEqual(event["text"], "hi from the page second line")
        page.wait("p.chat.entries.some((e) => e.own && e.text === 'hi from the page second line')", 5, "the page's own message")
        self.assertEqual(page.js("() => document.getElementById('chat-input').value"), "")
        page.screenshot("web-chat.png")

        # A page that joins later gets the messages from before it, marked as history.
        late = self.open_page(page_link(host.link, name="cy"), name="late")
        late.wait("p.phase === 'media' || !document.getElementById('picker').hidden", 20, "the late page's picker")
        late.page.set_input_files("#file", [str(clip)])
        late.wait("p.joined && p.chat && p.chat.entries.length >= 2", 30, "the late page's history")
        history = late.js("() => window.coplayPage.chat.entries")
        self.assertEqual([(e["who"], e["text"], e["history"]) for e in history[:2]],
                         [("bob", "hello page 👋", True), ("ana", "hi from the page second line", True)])

        # The sending limit: 5 messages of one key in 10 s. The page sent one; four more go, the sixth is refused.
        for index in range(4):
            page.js("(text) => window.coplayPage.control.chat(text)", f"quick {index}")
        page.page.fill("#chat-input", "one too many")
        page.page.press("#chat-input", "Enter")
        page.wait("!document.getElementById('chat-note').hidden", 10, "the refusal under the box")
        note = page.js("() => document.getElementById('chat-note').textContent")
        self.assertRegex(note, r"^chat: at most 5 messages in 10 s: wait \d+\.\d s$")
        self.assertEqual(page.js("() => document.getElementById('chat-input').value"), "one too many", "the text stays to send later")
        # Nothing the page ignored: every message checked out.
        self.assertEqual(page.js("() => window.coplayPage.chat.ignored"), {})
        wait_until(lambda: len(host.process.events_of("chat")) >= 6, 10, "the page's five messages at the host",
                   lambda: str(host.process.events_of("chat")))
        # `coplay chat` is not a person: the page's log has no line of it joining or leaving (its join
        # line waits 3 s for a name and is dropped when it leaves unnamed).
        wait_until(lambda: all(e["type"] != "joined" or e["originator"] in ("ana", "host", "cy")
                               for e in page.js("() => window.coplayPage.events")), 5, "the log's join lines",
                   lambda: str([(e["type"], e.get("originator"), e.get("text")) for e in page.js("() => window.coplayPage.events")]))
        members = [(e["type"], e["originator"]) for e in page.js("() => window.coplayPage.events") if e["type"] in ("joined", "left")]
        self.assertTrue(all(who in ("ana", "host", "cy") for _, who in members), f"join and leave lines: {members}")
        self.assertIn(("joined", "cy"), members)

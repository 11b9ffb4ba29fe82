#!/usr/bin/env python3
"""Drives headless Chromium pages that join a coplay session, for `coplay bench --scenario browser`.

    scripts/browser-driver.py --link 'http://127.0.0.1:PORT/#invite=...' --media clip.mp4 --page b1 [--page b2 ...]

For each --page NAME: its own Chromium process (so each has its own 60 Hz frame clock, as two people's
browsers would), opened on the link with `&media=<this driver's URL of the clip>&name=NAME` added to the
fragment. The clip is served by a small HTTP server on 127.0.0.1 started here, with what the
cross-origin isolated page needs: `Cross-Origin-Resource-Policy: cross-origin`, CORS
(`Access-Control-Allow-Origin: *`, `Access-Control-Expose-Headers: Content-Range`) and byte ranges.

Standard output is JSON Lines, one object per line, every one with `page` (the name) and `realtime`
(CLOCK_REALTIME seconds):

  {"type":"driver", "detail":"started", ...}                 once, with the media URL and Chromium's version
  {"type":"calibration", "offsetMs", "rttMs"}                 the page's clock (performance.timeOrigin +
                                                              performance.now()) minus CLOCK_REALTIME, from
                                                              the shortest of 25 round trips
  {"type":"status", "phase", "joined", "participantId", ...}  whenever the page's phase changes
  {"type":"ready", "frameInterval", "firstFrameTime", ...}   once joined, with the group's state and a picture
  {"type":"sample", "wallMs", "mediaTime", "clockMs", "currentTime", "rate", "trim", "paused", "seeking",
   "presentedFrames", "offsetMs"}                             one per requestVideoFrameCallback: wallMs is
                                                              performance.timeOrigin + expectedDisplayTime,
                                                              clockMs / currentTime the element's media clock
                                                              read in the callback (timeOrigin + now),
                                                              rate the element's playbackRate, trim the page's
                                                              correction factor in it (the group's rate is
                                                              rate / trim), offsetMs the page's reference clock
                                                              minus its own
  {"type":"element", "event", "wallMs", "currentTime", "rate"} the <video>'s play/pause/seeking/seeked/
                                                              ratechange/waiting/playing events
  {"type":"stopped", "referenceTime", "detail"}               the <video> paused (detail "waiting" when the
                                                              group waits for a suspended member)
  {"type":"play"|"pause"|"seek"|"rate"|..., ...}              the page's own events (window.coplayPage.events),
                                                              as coplay join prints them
  {"type":"error", "detail"}                                  a page that failed (its banner's text)

Experiments: COPLAY_BENCH_PLAYER_OVERRIDE='{"video": {"deadbandMs": 2}, "timing": {"settleMs": 200}}' (or
--player-override JSON) serves the page a player.js whose VideoPlayer is constructed with those THRESHOLDS /
TIMING overrides (the constructor's own `thresholds` / `timing` options; the files are not touched), and an
"element" object (e.g. {"preservesPitch": false}) is assigned to the page's <video> as soon as it exists. The
`driver` line says so, and the benchmark's notes repeat it: such rows do not measure the page as shipped.

Runs until SIGTERM or SIGINT (or until standard input closes, when it is a pipe). Exits 0 after
closing the browsers; 2 when Playwright is missing; 1 when a page cannot join within --timeout.
Uses the system Chromium (--chromium, default /usr/bin/chromium); never downloads a browser.
"""

import argparse
import json
import os
import select
import signal
import stat
import sys
import threading
import time

# Chromium's launch, the media server and the page link, shared with the browser tests (Tests/Browser):
# scripts/browserlib.py, beside this script (its directory is on sys.path when it runs as a script).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browserlib  # noqa: E402

# Injected into every page before its own scripts: samples the page's <video> with its own
# requestVideoFrameCallback (independent of the page's samples(), and with presentedFrames), records
# the element's events, and forwards the page hook's events once each.
INSTRUMENT = r"""
(() => {
  if (window.__coplayBench) return;
  const bench = { samples: [], element: [], seen: new Set(), video: null, lastPhase: null };
  window.__coplayBench = bench;
  const wall = () => performance.timeOrigin + performance.now();
  const hook = () => window.coplayPage;
  // BigInt (revisions) as text: neither JSON nor Playwright's serializer takes it.
  const plain = (key, value) => (typeof value === "bigint" ? value.toString() : value);
  function trim() {
    try { const s = hook()?.sync; return s && typeof s.trim === "number" ? s.trim : null; } catch { return null; }
  }
  function offsetMs() {
    try { const c = hook()?.clock; return c && c.synced ? c.offsetMs : null; } catch { return null; }
  }
  function attach(video) {
    if (bench.video === video) return;
    bench.video = video;
    const frame = (now, m) => {
      // The media clock itself, read beside its wall-clock instant (continuous, not on the frame clock).
      const t1 = performance.now();
      const currentTime = video.currentTime;
      const t2 = performance.now();
      bench.samples.push({
        clockMs: performance.timeOrigin + (t1 + t2) / 2, currentTime,
        wallMs: performance.timeOrigin + m.expectedDisplayTime,
        presentationMs: performance.timeOrigin + m.presentationTime,
        callbackMs: performance.timeOrigin + now,
        mediaTime: m.mediaTime, presentedFrames: m.presentedFrames,
        rate: video.playbackRate, trim: trim(), paused: video.paused, seeking: video.seeking, offsetMs: offsetMs(),
      });
      if (bench.samples.length > 20000) bench.samples.splice(0, 10000);
      video.requestVideoFrameCallback(frame);
    };
    video.requestVideoFrameCallback(frame);
    for (const name of ["play", "playing", "pause", "seeking", "seeked", "ratechange", "waiting", "stalled", "ended"]) {
      video.addEventListener(name, () => {
        const record = { event: name, wallMs: wall(), currentTime: video.currentTime, rate: video.playbackRate };
        if (name === "pause") {
          let waiting = false;
          try { waiting = !!hook()?.group?.waiting; } catch {}
          record.waiting = waiting;
          record.offsetMs = offsetMs();
        }
        bench.element.push(record);
      });
    }
  }
  function find() {
    const video = document.getElementById("video") || document.querySelector("video");
    if (video) attach(video);
    return video;
  }
  if (!find()) {
    document.addEventListener("DOMContentLoaded", find);
    const timer = setInterval(() => { if (find()) clearInterval(timer); }, 20);
  }
  bench.drain = () => {
    find();
    const page = hook();
    const out = { samples: bench.samples.splice(0), element: bench.element.splice(0), events: [], status: null };
    if (page) {
      let events = [];
      try { events = page.events; } catch {}
      // New events are at the end (the hook keeps the latest 500): walk back to the last one forwarded.
      const fresh = [];
      for (let i = events.length - 1; i >= 0; i--) {
        const key = JSON.stringify(events[i], plain);
        if (bench.seen.has(key)) break;
        fresh.push(key);
      }
      for (const key of fresh.reverse()) {
        bench.seen.add(key);
        out.events.push(JSON.parse(key));
      }
      const v = bench.video;
      let group = null, sync = null, clock = null, activity = null;
      try { group = page.group; } catch {}
      try { sync = page.sync; } catch {}
      try { clock = page.clock; } catch {}
      try { activity = page.activity; } catch {}
      group = group === null ? null : JSON.parse(JSON.stringify(group, plain));
      out.status = {
        phase: page.phase, joined: page.joined, participantId: page.participantId, lastError: page.lastError,
        group, sync, clock,
        frameInterval: activity?.frameInterval ?? null, firstFrameTime: activity?.firstFrameTime ?? null,
        duration: activity?.duration ?? null, item: activity?.item ?? null,
        readyState: v ? v.readyState : null, seeking: v ? v.seeking : null, paused: v ? v.paused : null,
        hasAudio: sync ? !!sync.hasAudio : null,
      };
    }
    return out;
  };
  bench.now = wall;
})();
"""

# The page's event fields worth forwarding (coplay join's JSON Lines names; docs/events.md).
EVENT_FIELDS = ("type", "realtime", "player", "originator", "item", "itemTime", "rate", "referenceTime", "revision",
                "reason", "waits", "timedOut", "index", "pts", "errorMs", "detail")
# Page events that are log decoration, not playback events.
SKIPPED_EVENT_TYPES = {"note"}


class Output:
    """Writes JSON Lines to stdout from any thread."""

    def __init__(self):
        self.lock = threading.Lock()

    def emit(self, page, kind, **fields):
        line = {"type": kind, "page": page, "realtime": fields.pop("realtime", time.time())}
        line.update(fields)
        text = json.dumps(line, separators=(",", ":"), allow_nan=False, default=str)
        with self.lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()


# MARK: - Experiments

def patched_player(source, override):
    """player.js with `VideoPlayer` constructed with `override`'s thresholds and timing (an experiment)."""
    marker = "export class VideoPlayer {"
    if marker not in source:
        raise ValueError("player.js has no `export class VideoPlayer {` to wrap")
    body = json.dumps(override)
    return source.replace(marker, "class ShippedVideoPlayer {") + f"""
// coplay bench experiment: thresholds / timing overridden by the browser driver.
const BENCH_OVERRIDE = {body};
export class VideoPlayer extends ShippedVideoPlayer {{
  constructor(options) {{
    super({{
      ...options,
      timing: {{ ...(options.timing ?? {{}}), ...(BENCH_OVERRIDE.timing ?? {{}}) }},
      thresholds: {{
        video: {{ ...THRESHOLDS.video, ...(BENCH_OVERRIDE.video ?? {{}}) }},
        audio: {{ ...THRESHOLDS.audio, ...(BENCH_OVERRIDE.audio ?? {{}}) }},
      }},
    }});
  }}
}}
"""


# MARK: - Pages

class Page:
    """One Chromium process with one page on the link."""

    def __init__(self, name, browser, out, override=None):
        self.name = name
        self.browser = browser
        self.out = out
        self.context = browser.new_context(viewport={"width": 960, "height": 600})
        self.context.add_init_script(INSTRUMENT)
        if override is not None and "element" in override:
            # Properties set on the page's <video> (e.g. {"preservesPitch": false}), as soon as it exists.
            self.context.add_init_script("(() => { const props = %s; const set = () => { const v = document.getElementById('video');"
                                         " if (!v) return false; Object.assign(v, props); return true; };"
                                         " if (!set()) { const t = setInterval(() => { if (set()) clearInterval(t); }, 10); } })();"
                                         % json.dumps(override["element"]))
        if override is not None:
            def serve_patched(route):
                response = route.fetch()
                route.fulfill(response=response, body=patched_player(response.text(), override))
            self.context.route("**/player.js", serve_patched)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: out.emit(name, "console", level="pageerror", text=str(error)[:500]))
        self.page.on("console", self.console)
        self.phase = None
        self.ready = False
        self.failed = False
        self.offset_ms = None  # page clock minus CLOCK_REALTIME (ms), from calibrate()
        self.page_stops = False  # whether the page's own events carry `stopped` (then no element-made ones)

    def console(self, message):
        if message.type in ("error", "warning"):
            self.out.emit(self.name, "console", level=message.type, text=message.text[:500])

    def open(self, url):
        self.page.goto(url, wait_until="load")

    def calibrate(self, rounds=25):
        """The page's clock minus CLOCK_REALTIME, from the round trip with the least delay."""
        best = None
        for _ in range(rounds):
            before = time.time_ns()
            page_ms = self.page.evaluate("() => performance.timeOrigin + performance.now()")
            after = time.time_ns()
            rtt = (after - before) / 1e6
            offset = page_ms - (before + after) / 2e6
            if best is None or rtt < best[1]:
                best = (offset, rtt)
        self.offset_ms = best[0]
        self.out.emit(self.name, "calibration", offsetMs=round(best[0], 4), rttMs=round(best[1], 4))

    def poll(self):
        data = self.page.evaluate("() => window.__coplayBench ? window.__coplayBench.drain() : null")
        if data is None:
            return
        emit = self.out.emit
        status = data.get("status")
        for s in data["samples"]:
            emit(self.name, "sample", realtime=s["wallMs"] / 1000, **s)
        for e in data["element"]:
            emit(self.name, "element", realtime=e["wallMs"] / 1000, **e)
            if e["event"] == "pause" and not self.page_stops:
                reference = None if e.get("offsetMs") is None else (e["wallMs"] + e["offsetMs"]) / 1000
                emit(self.name, "stopped", realtime=e["wallMs"] / 1000, referenceTime=reference,
                     detail="waiting" if e.get("waiting") else "paused", source="element")
        for e in data["events"]:
            kind = e.get("type")
            if kind in SKIPPED_EVENT_TYPES or kind is None:
                continue
            fields = {k: e[k] for k in EVENT_FIELDS if k in e and e[k] is not None}
            fields.pop("type", None)
            if "realtime" not in fields:
                fields["realtime"] = time.time()
            if kind == "stopped":
                self.page_stops = True
                fields["source"] = "page"
            emit(self.name, kind, **fields)
        if status is None:
            return
        if status["phase"] != self.phase:
            self.phase = status["phase"]
            emit(self.name, "status", phase=status["phase"], joined=status["joined"],
                 participantId=status["participantId"], lastError=status["lastError"])
            if status["phase"] in ("error", "mismatch", "ended") and not self.failed:
                self.failed = True
                error = status.get("lastError") or {}
                emit(self.name, "error", detail=f"{error.get('title', status['phase'])}: {error.get('text', '')}".strip())
        if not self.ready and status["joined"] and status["group"] is not None and (status["readyState"] or 0) >= 2 \
                and not status["seeking"] and status["sync"] is not None:
            self.ready = True
            emit(self.name, "ready", participantId=status["participantId"], item=status["item"],
                 frameInterval=status["frameInterval"], firstFrameTime=status["firstFrameTime"],
                 duration=status["duration"], hasAudio=status["hasAudio"], clock=status["clock"], group=status["group"])


# MARK: - Main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--link", required=True, help="the page link `coplay host` printed (http://H:P/#invite=...)")
    parser.add_argument("--media", required=True, help="the media file to serve to the pages")
    parser.add_argument("--page", action="append", required=True, help="a page's display name (repeatable: one browser each)")
    parser.add_argument("--chromium", default=browserlib.CHROMIUM,
                        help=f"the Chromium executable (default {browserlib.CHROMIUM}; or $COPLAY_CHROMIUM)")
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between reads of each page (default 0.25)")
    parser.add_argument("--timeout", type=float, default=90, help="seconds for every page to join (default 90)")
    parser.add_argument("--headed", action="store_true", help="show the browsers (needs a display)")
    parser.add_argument("--player-override", default=os.environ.get("COPLAY_BENCH_PLAYER_OVERRIDE"),
                        help="experiments: JSON {video, audio, timing} overrides of player.js's THRESHOLDS / TIMING")
    args = parser.parse_args()
    override = json.loads(args.player_override) if args.player_override else None

    out = Output()
    missing = browserlib.missing_browser(args.chromium)
    if missing is not None:
        print(f"browser-driver: {missing}", file=sys.stderr)
        return 2
    if "#" not in args.link:
        print("browser-driver: the link has no fragment (#invite=...)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
        watch_stdin = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
    except (OSError, ValueError):
        watch_stdin = False

    server = browserlib.MediaServer(os.path.dirname(os.path.abspath(args.media)), only=os.path.basename(args.media),
                                     no_store=True)
    media_url = server.url(os.path.basename(args.media))
    pages = []
    status = 0
    with sync_playwright() as playwright:
        try:
            for name in args.page:
                browser = browserlib.launch(playwright, args.chromium, headless=not args.headed)
                if not pages:
                    out.emit(name, "driver", detail="started", mediaURL=media_url, chromium=browser.version, pid=os.getpid(),
                             playerOverride=override)
                page = Page(name, browser, out, override)
                pages.append(page)
                page.open(browserlib.page_link(args.link, media=media_url, name=name))
                page.calibrate()
            deadline = time.monotonic() + args.timeout
            while not stop.is_set():
                started = time.monotonic()
                for page in pages:
                    page.poll()
                if not all(p.ready for p in pages) and time.monotonic() > deadline:
                    late = [p.name for p in pages if not p.ready]
                    print(f"browser-driver: pages {', '.join(late)} did not join within {args.timeout:.0f} s", file=sys.stderr)
                    status = 1
                    break
                if any(p.failed and not p.ready for p in pages):
                    failed = [p for p in pages if p.failed and not p.ready]
                    print(f"browser-driver: page {failed[0].name} failed: phase {failed[0].phase}", file=sys.stderr)
                    status = 1
                    break
                if watch_stdin:
                    readable, _, _ = select.select([sys.stdin], [], [], 0)
                    if readable and not os.read(sys.stdin.fileno(), 4096):
                        break
                remaining = args.poll - (time.monotonic() - started)
                if remaining > 0:
                    stop.wait(remaining)
            for page in pages:  # what came in since the last read
                try:
                    page.poll()
                except Exception:
                    pass
        except Exception as error:  # a browser that would not start, a page that crashed
            if not stop.is_set():
                print(f"browser-driver: {type(error).__name__}: {error}", file=sys.stderr)
                status = 1
        finally:
            for page in pages:
                try:
                    page.browser.close()
                except Exception:
                    pass
    server.close()
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Shared pieces of the browser tests: coplay processes, a recording proxy, a raw WebSocket client and
headless Chromium (Playwright for Python on Debian's /usr/bin/chromium). Chromium's launch, the CORS
media server and the page link are scripts/browserlib.py's, which scripts/browser-driver.py uses too.

Every process a test starts is registered with the test (``self.addCleanup``) and terminated at
its end (SIGTERM, then SIGKILL after 5 s); every wait is bounded and fails with what it waited
for and what it saw.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from browserlib import CHROMIUM, MediaServer, launch, missing_browser, page_link  # noqa: E402,F401

SAMPLES = ROOT / "samples"
VIEWPORT = {"width": 1280, "height": 800}
# The page the relay serves: this tree's Web/static (COPLAY_WEB_ROOT=builtin: the copy built into coplay).
WEB_ROOT = os.environ.get("COPLAY_WEB_ROOT", str(ROOT / "Web" / "static"))
WEB_ROOT = None if WEB_ROOT == "builtin" else WEB_ROOT
# Screenshots for docs/web.md are written here when set (COPLAY_SCREENSHOTS=docs/images, see docs/web.md).
SCREENSHOTS = os.environ.get("COPLAY_SCREENSHOTS")


_binary: str | None = None


def coplay_binary() -> str:
    """A private copy of the coplay binary, made once per run: the shared .build may be relinked by a
    concurrent `swift build` while the tests run ("Text file busy", or a test mixing two builds)."""
    global _binary
    if _binary is not None:
        return _binary
    path = os.environ.get("COPLAY_BIN") or str(ROOT / ".build" / "debug" / "coplay")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"coplay binary not found at {path}: run `swift build` (or set COPLAY_BIN)")
    directory = Path(tempfile.mkdtemp(prefix="coplay-browser-bin-"))
    atexit.register(shutil.rmtree, directory, True)
    copy = directory / "coplay"
    deadline = time.monotonic() + 300
    while True:
        try:
            shutil.copy2(path, copy)
            subprocess.run([str(copy), "--version"], check=True, capture_output=True, timeout=60)
            break
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            # Being linked right now: wait for the build to finish.
            if time.monotonic() > deadline:
                raise AssertionError(f"cannot run a copy of {path}: {error}") from error
            time.sleep(2)
    _binary = str(copy)
    return _binary


def require_browser():
    """Fails with an install hint when Chromium or Playwright is missing."""
    reason = missing_browser(CHROMIUM)
    if reason is not None:
        raise AssertionError(reason)


def wait_until(predicate, timeout: float, what: str, describe=None, interval: float = 0.05):
    """Polls `predicate` until it returns a truthy value (returned) or fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f"; saw {describe()}" if describe is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{detail}")
        time.sleep(interval)


# MARK: Processes


class Process:
    """A child process whose output lines are collected by a thread (and parsed when JSON)."""

    def __init__(self, name: str, args: list[str], log_path: Path | None = None, cwd: str | None = None,
                 env_extra: dict | None = None):
        self.name = name
        self.args = args
        self.lines: list[str] = []
        self.events: list[dict] = []
        self.condition = threading.Condition()
        self.log = open(log_path, "w", encoding="utf-8") if log_path is not None else None
        env = dict(os.environ)
        env.pop("DISPLAY", None)  # mpv members run headless (--vo=null) whatever the machine has
        env.pop("WAYLAND_DISPLAY", None)
        env.update(env_extra or {})
        self.popen = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=cwd, env=env, start_new_session=True)
        self.reader = threading.Thread(target=self._read, name=f"read-{name}", daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.popen.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            event = None
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
            with self.condition:
                self.lines.append(line)
                if isinstance(event, dict):
                    self.events.append(event)
                self.condition.notify_all()
            if self.log is not None:
                self.log.write(line + "\n")
                self.log.flush()

    def output(self) -> str:
        with self.condition:
            return "\n".join(self.lines)

    def tail(self, count: int = 15) -> str:
        with self.condition:
            return "\n".join(self.lines[-count:])

    def wait_line(self, predicate, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        seen = 0
        with self.condition:
            while True:
                for line in self.lines[seen:]:
                    if predicate(line):
                        return line
                seen = len(self.lines)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.popen.poll() is not None and not self.reader.is_alive()):
                    break
                self.condition.wait(min(remaining, 0.2))
        raise AssertionError(
            f"{self.name}: timed out after {timeout:g} s waiting for {what} "
            f"(exit status {self.popen.poll()}); last output:\n{self.tail()}")

    def events_of(self, kind: str) -> list[dict]:
        with self.condition:
            return [e for e in self.events if e.get("type") == kind]

    def wait_event(self, predicate, timeout: float, what: str, after: int = 0) -> dict:
        """The first event (from index `after` of ``events``) for which `predicate` holds."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for event in self.events[after:]:
                    if predicate(event):
                        return event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.condition.wait(min(remaining, 0.2))
        raise AssertionError(
            f"{self.name}: timed out after {timeout:g} s waiting for {what} "
            f"(exit status {self.popen.poll()}); last output:\n{self.tail()}")

    def event_count(self) -> int:
        with self.condition:
            return len(self.events)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout: float = 5.0):
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait(5)
        else:
            # The process is gone; its session may still hold children (mpv).
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.reader.join(5)
        if self.popen.stdout is not None and not self.reader.is_alive():
            self.popen.stdout.close()
        if self.log is not None and not self.log.closed:
            self.log.close()


class Coplay:
    """Starts coplay processes for one test and stops them when it ends."""

    def __init__(self, test: unittest.TestCase, workdir: Path):
        self.test = test
        self.workdir = workdir
        self.binary = coplay_binary()
        self.count = 0
        # The members' signing keys (coplay keeps one per --name in its state directory) stay in the test's directory.
        self.env = {"XDG_STATE_HOME": str(workdir / "state")}

    def start(self, name: str, *args: str) -> Process:
        self.count += 1
        process = Process(name, [self.binary, *args], self.workdir / f"{self.count:02d}-{name}.log", env_extra=self.env)
        self.test.addCleanup(process.stop)
        return process

    def serve(self, *extra: str, port: int = 0, host: str = "127.0.0.1") -> "Relay":
        # The page as it is in this tree (the binary's built-in copy is only as new as its last build).
        web = ["--web-root", WEB_ROOT] if WEB_ROOT else []
        process = self.start("serve", "serve", "--listen", f"{host}:{port}", "--log-level", "debug", *web, *extra)
        line = process.wait_line(lambda l: l.startswith("coplay relay listening on "), 20, "the relay to listen")
        return Relay(process, line.split()[4])

    def host(self, relay: "Relay", media: Path, *extra: str, relay_address: str | None = None) -> "Host":
        process = self.start("host", "host", str(media), "--relay", relay_address or relay.address, "--name", "host", *extra)
        invite = process.wait_line(lambda l: l.startswith("coplay://"), 30, "the invite line")
        link = process.wait_line(lambda l: l.startswith("http://") or l.startswith("https://"), 10, "the page link line")
        return Host(process, invite, link)

    def join(self, invite: str, media: Path, name: str, *extra: str) -> Process:
        process = self.start(name, "join", invite, str(media), "--name", name, *extra)
        process.wait_event(lambda e: e.get("type") == "joined" and e.get("originator") in (name, None), 30,
                           f"{name} to join")
        return process

    def control(self, invite: str, *args: str, timeout: float = 30) -> str:
        result = subprocess.run([self.binary, "control", invite, *args], capture_output=True, text=True,
                                timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **self.env})
        if result.returncode != 0:
            raise AssertionError(f"coplay control {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout.strip()


    def chat(self, invite: str, text: str, name: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """`coplay chat INVITE TEXT --name NAME` (one message, then it leaves); the finished process."""
        return subprocess.run([self.binary, "chat", invite, text, "--name", name], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **self.env})


class Relay:
    def __init__(self, process: Process, address: str):
        self.process = process
        self.address = address
        self.port = int(address.rsplit(":", 1)[1])

    @property
    def origin(self) -> str:
        return f"http://{self.address}"


class Host:
    def __init__(self, process: Process, invite: str, link: str):
        self.process = process
        self.invite = invite
        self.link = link

    @property
    def secret(self) -> str:
        return self.invite.rsplit("#", 1)[1]


def secret_forms(secret: str) -> list[bytes]:
    """The invite secret as text (as printed, percent-encoded) and as its raw and hex bytes."""
    forms = {secret, urllib.parse.quote(secret, safe="")}
    raw = base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    found = [f.encode() for f in forms] + [raw, raw.hex().encode(), raw.hex().upper().encode()]
    found += [base64.b64encode(raw).rstrip(b"=")]
    return found


# MARK: Media


_clips: dict[str, Path] = {}
_clip_dir: Path | None = None


def clip(name: str, seconds: int = 20, rate: int = 25) -> Path:
    """A video-only constant-frame-rate test clip (testsrc2, H.264 in MP4, 320x240), made once per run."""
    global _clip_dir
    key = f"{name}-{seconds}-{rate}"
    if key in _clips:
        return _clips[key]
    if _clip_dir is None:
        _clip_dir = Path(tempfile.mkdtemp(prefix="coplay-browser-clips-"))
        atexit.register(shutil.rmtree, _clip_dir, True)
    if shutil.which("ffmpeg") is None:
        raise AssertionError("ffmpeg is missing (scripts/install-deps.sh installs it)")
    path = _clip_dir / f"{name}.mp4"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
         "-i", f"testsrc2=size=320x240:rate={rate}:duration={seconds}", "-c:v", "libx264", "-preset", "veryfast",
         "-crf", "30", "-pix_fmt", "yuv420p", "-g", str(rate), "-threads", "1", "-bitexact", "-movflags", "+faststart",
         str(path)], check=True, timeout=120)
    _clips[key] = path
    return path


def sample(name: str) -> Path:
    path = SAMPLES / name
    if not path.exists():
        subprocess.run([str(ROOT / "scripts" / "make-samples.sh")], check=True, timeout=300)
    return path


# MARK: A recording proxy


class RecordingProxy:
    """A TCP proxy in front of the relay that keeps every byte clients send to it, and reads them back
    as HTTP request heads and (unmasked) WebSocket payloads: all the relay ever received from the browser."""

    def __init__(self, target_port: int, host: str = "127.0.0.1", tls=None):
        """`tls`: an ssl.SSLContext to serve https / wss with (a TLS-terminating reverse proxy)."""
        self.target_port = target_port
        self.host = host
        self.tls = tls
        self.listener = socket.create_server((host, 0))
        self.port = self.listener.getsockname()[1]
        self.streams: list[bytearray] = []
        self.lock = threading.Lock()
        self.closed = False
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.tls is not None:
                try:
                    client.settimeout(5)
                    client = self.tls.wrap_socket(client, server_side=True)
                    client.settimeout(None)
                except (OSError, ValueError):
                    client.close()
                    continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            record = bytearray()
            with self.lock:
                self.streams.append(record)
                self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, record), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True).start()

    def _pump(self, source: socket.socket, destination: socket.socket, record):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if record is not None:
                    with self.lock:
                        record.extend(data)
                destination.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, destination):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def received(self) -> list[bytes]:
        with self.lock:
            return [bytes(r) for r in self.streams]

    def decoded(self) -> tuple[list[str], list[bytes]]:
        """(request heads, WebSocket payloads) clients sent, the payloads unmasked."""
        heads, payloads = [], []
        for stream in self.received():
            view = memoryview(stream)
            offset = 0
            while offset < len(stream):
                end = stream.find(b"\r\n\r\n", offset)
                if end < 0 or not stream[offset:offset + 1].isalpha():
                    break
                head = stream[offset:end].decode("latin-1")
                heads.append(head)
                offset = end + 4
                length = re.search(r"(?im)^content-length:\s*(\d+)", head)
                if length:
                    offset += int(length.group(1))
                if re.search(r"(?im)^upgrade:\s*websocket", head):
                    payloads += _unmask_frames(view[offset:])
                    break
        return heads, payloads

    def close(self):
        self.closed = True
        self.listener.close()
        with self.lock:
            for s in self.sockets:
                try:
                    s.close()
                except OSError:
                    pass


def lan_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None when it has only loopback."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def self_signed_context(directory: Path, address: str):
    """A server ssl.SSLContext with a fresh self-signed certificate for `address` (openssl CLI)."""
    import ssl
    if shutil.which("openssl") is None:
        raise AssertionError("openssl is missing (scripts/install-deps.sh installs it)")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=coplay-test", "-addext", f"subjectAltName=IP:{address}"],
        check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def _unmask_frames(data) -> list[bytes]:
    out = []
    offset = 0
    data = bytes(data)
    while offset + 2 <= len(data):
        length = data[offset + 1] & 0x7F
        masked = data[offset + 1] & 0x80
        pos = offset + 2
        if length == 126:
            length = struct.unpack(">H", data[pos:pos + 2])[0]
            pos += 2
        elif length == 127:
            length = struct.unpack(">Q", data[pos:pos + 8])[0]
            pos += 8
        key = data[pos:pos + 4] if masked else b"\0\0\0\0"
        pos += 4 if masked else 0
        if pos + length > len(data):
            break
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(data[pos:pos + length]))
        out.append(payload)
        offset = pos + length
    return out


# MARK: A raw WebSocket client


class RawWebSocket:
    """Just enough RFC 6455 to send the relay what a browser never would, and read how it answers."""

    def __init__(self, port: int, path: str = "/ws", timeout: float = 5):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall(
            (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.socket.recv(4096)
            if not chunk:
                raise AssertionError(f"the relay closed the WebSocket handshake: {self.buffer!r}")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.status = head.split(b"\r\n", 1)[0].decode()
        if " 101 " not in self.status + " ":
            raise AssertionError(f"WebSocket upgrade refused: {self.status}")

    def send(self, opcode: int, payload: bytes):
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        self.socket.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def messages(self):
        """(opcode, payload) until the connection ends; yields the close message too."""
        while True:
            try:
                first, second = self._read(2)
            except (EOFError, OSError):
                return
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            yield first & 0x0F, payload
            if first & 0x0F == 0x8:
                return

    def close(self):
        try:
            self.socket.close()
        except OSError:
            pass


def relay_frame(frame_type: int, payload: bytes = b"", session: bytes = bytes(16), sender: int = 1) -> bytes:
    """One relay frame with its length prefix (docs/protocol.md, "Framing")."""
    body = bytes([1, frame_type]) + b"\0\0" + session + struct.pack(">QQ", sender, 0) + payload
    return struct.pack(">I", len(body)) + body


# MARK: The browser


class Browser:
    """One headless Chromium for a test module; each page gets its own context."""

    def __init__(self):
        require_browser()
        from playwright.sync_api import sync_playwright
        self.manager = sync_playwright().start()
        try:
            self.browser = launch(self.manager, CHROMIUM)
        except Exception:
            self.manager.stop()
            raise

    def page(self, test: unittest.TestCase, name: str = "page", **options) -> "Page":
        context = self.browser.new_context(viewport=VIEWPORT, **options)
        test.addCleanup(context.close)
        return Page(context.new_page(), name)

    def close(self):
        try:
            self.browser.close()
        finally:
            self.manager.stop()


class Page:
    """A Playwright page with what the tests look at: requests, console errors, the `coplayPage` hook."""

    def __init__(self, page, name: str):
        self.page = page
        self.name = name
        self.requests: list[str] = []
        self.websockets: list[str] = []
        self.console: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("websocket", lambda ws: self.websockets.append(ws.url))
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        page.set_default_timeout(15_000)

    def goto(self, url: str):
        self.page.goto(url, wait_until="load")
        self.page.wait_for_function("() => window.coplayPage !== undefined", timeout=15_000)

    def js(self, expression: str, argument=None):
        return self.page.evaluate(expression, argument)

    def state(self) -> dict:
        return self.js("""() => { const p = window.coplayPage; if (!p) return {phase: "no hook"};
            const v = document.getElementById("video");
            return {phase: p.phase, joined: p.joined, lastError: p.lastError, clock: p.clock, sync: p.sync, group: p.group,
                    currentTime: v.currentTime, paused: v.paused,
                    banner: document.getElementById("banner").hidden ? null : document.getElementById("banner").innerText,
                    status: document.getElementById("status-text").textContent,
                    events: p.events.slice(-6).map((e) => e.text ?? e.type)}; }""")

    def describe(self) -> str:
        try:
            state = self.state()
        except Exception as error:  # the page may be gone
            state = f"(no state: {error})"
        console = "\n  ".join(self.console[-10:])
        return f"{self.name} state {json.dumps(state, default=str)}; console:\n  {console}"

    def wait(self, expression: str, timeout: float, what: str):
        """Polls a JavaScript expression (a function of the hook `p`) until truthy."""
        function = f"() => {{ const p = window.coplayPage; return p ? ({expression}) : null; }}"
        return wait_until(lambda: self.js(function), timeout, f"{self.name}: {what}", self.describe, 0.1)

    def events(self, kind: str | None = None) -> list[dict]:
        events = self.js("() => window.coplayPage.events")
        return [e for e in events if kind is None or e.get("type") == kind]

    def screenshot(self, name: str):
        if SCREENSHOTS:
            directory = Path(SCREENSHOTS)
            if not directory.is_absolute():
                directory = ROOT / directory
            directory.mkdir(parents=True, exist_ok=True)
            raw = directory / f".raw-{name}"
            self.page.screenshot(path=str(raw))
            # 128 colours without dithering: a quarter of the size, the same look for a page of flat colours.
            quantized = subprocess.run(
                ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(raw), "-vf",
                 "split[a][b];[a]palettegen=max_colors=128[p];[b][p]paletteuse=dither=none", str(directory / name)],
                timeout=60).returncode == 0
            if quantized:
                raw.unlink()
            else:
                raw.replace(directory / name)


class BrowserTestCase(unittest.TestCase):
    """A test case with one Chromium for the class and a scratch directory per test."""

    browser: Browser | None = None

    @classmethod
    def setUpClass(cls):
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        if cls.browser is not None:
            cls.browser.close()
            cls.browser = None

    def setUp(self):
        self.workdir = Path(tempfile.mkdtemp(prefix=f"coplay-{self._testMethodName}-"))
        self.coplay = Coplay(self, self.workdir)
        self.addCleanup(self._keep_or_remove)

    def _keep_or_remove(self):
        outcome = getattr(self, "_outcome", None)
        failed = outcome is None or not getattr(outcome, "success", False)
        if failed or os.environ.get("COPLAY_KEEP_LOGS"):
            print(f"\n  logs kept in {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def media_server(self, directory: Path) -> MediaServer:
        server = MediaServer(directory)
        self.addCleanup(server.close)
        return server

    def open_page(self, link: str, name: str = "page", **options) -> Page:
        page = self.browser.page(self, name, **options)
        page.goto(link)
        return page

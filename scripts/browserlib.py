"""What the browser tests (Tests/Browser) and scripts/browser-driver.py share: headless Chromium through
Playwright for Python on the system's Chromium (never a downloaded browser), the media server a
cross-origin isolated page needs, and the page link with a media URL and a name added.

    import browserlib                      # scripts/ is on sys.path: the driver's own directory
    reason = browserlib.missing_browser()  # None, or why Playwright / Chromium cannot run here
    with sync_playwright() as playwright:
        browser = browserlib.launch(playwright)
    server = browserlib.MediaServer(directory, only="clip.mp4")
    link = browserlib.page_link(host_link, media=server.url("clip.mp4"), name="ana")

No third-party imports at module level: the driver must start (and say what is missing) without Playwright.
"""

from __future__ import annotations

import http.server
import mimetypes
import os
import socketserver
import threading
import urllib.parse
from pathlib import Path

# Debian's chromium (scripts/install-deps.sh installs it); COPLAY_CHROMIUM picks another.
CHROMIUM = os.environ.get("COPLAY_CHROMIUM", "/usr/bin/chromium")
# Root in a container needs --no-sandbox; sound must never block a play() nor make noise.
CHROMIUM_ARGS = ["--no-sandbox", "--mute-audio", "--autoplay-policy=no-user-gesture-required"]


def missing_browser(chromium: str = CHROMIUM) -> str | None:
    """Why Playwright for Python or Chromium is unusable here (with the install hint), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ("Playwright for Python is missing: `pip install playwright` (scripts/install-deps.sh does it; "
                "never `playwright install`: coplay uses the system's Chromium)")
    if not os.access(chromium, os.X_OK):
        return f"{chromium} is missing: `apt-get install -y chromium` (scripts/install-deps.sh does it)"
    return None


def launch(playwright, chromium: str = CHROMIUM, headless: bool = True):
    """A headless (or headed) Chromium from a started `sync_playwright()`, with coplay's flags."""
    return playwright.chromium.launch(executable_path=chromium, headless=headless, args=CHROMIUM_ARGS, timeout=60_000)


def page_link(link: str, *, origin: str | None = None, media: str | None = None, name: str | None = None) -> str:
    """The page link `coplay host` printed (`http://H:P/#invite=...`), on another `origin` and with
    `&media=URL` and `&name=NAME` added to its fragment (which never leaves the browser)."""
    base, sep, fragment = link.partition("#")
    if not sep:
        raise ValueError(f"the link has no fragment (#invite=...): {link}")
    if origin is not None:
        base = origin.rstrip("/") + "/"
    if media is not None:
        fragment += "&media=" + urllib.parse.quote(media, safe="")
    if name is not None:
        fragment += "&name=" + urllib.parse.quote(name, safe="")
    return base + "#" + fragment


# MARK: - The media server


class _MediaHandler(http.server.BaseHTTPRequestHandler):
    """GET / HEAD / OPTIONS of the files of one directory (or one file of it), with byte ranges and the
    headers a cross-origin isolated page needs: CORS, `Cross-Origin-Resource-Policy: cross-origin`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - quiet (the driver's stdout is its event stream)
        pass

    def common_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "Range")
        self.send_header("Access-Control-Expose-Headers", "Content-Range, Content-Length, Accept-Ranges")
        self.send_header("Cross-Origin-Resource-Policy", "cross-origin")
        self.send_header("Accept-Ranges", "bytes")
        if self.server.no_store:
            self.send_header("Cache-Control", "no-store")

    def empty(self, status: int, **headers):
        self.send_response(status)
        self.common_headers()
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_OPTIONS(self):  # noqa: N802
        self.server.requests.append(self.path)
        self.empty(204, Access_Control_Allow_Methods="GET, HEAD, OPTIONS")

    def do_HEAD(self):  # noqa: N802
        self.serve(body=False)

    def do_GET(self):  # noqa: N802
        self.serve(body=True)

    def file(self) -> str | None:
        """The file the request names, or None (outside the directory, not a file, not the one served)."""
        name = urllib.parse.unquote(self.path.split("?")[0]).lstrip("/")
        if self.server.only is not None and name != self.server.only:
            return None
        path = os.path.realpath(os.path.join(self.server.directory, name))
        if not path.startswith(self.server.directory + os.sep) or not os.path.isfile(path):
            return None
        return path

    def serve(self, body: bool):
        self.server.requests.append(self.path)
        path = self.file()
        if path is None:
            self.empty(404)
            return
        size = os.path.getsize(path)
        start, end, status = 0, size - 1, 200
        header = self.headers.get("Range")
        if header and header.startswith("bytes=") and "," not in header:
            first, _, last = header[len("bytes="):].strip().partition("-")
            try:
                if first == "":
                    start, end = max(0, size - int(last)), size - 1
                else:
                    start = int(first)
                    end = min(size - 1, int(last)) if last else size - 1
                if start > end or start >= size:
                    raise ValueError
                status = 206
            except ValueError:
                self.empty(416, Content_Range=f"bytes */{size}")
                return
        length = end - start + 1
        self.send_response(status)
        self.common_headers()
        self.send_header("Content-Type", mimetypes.guess_type(path)[0] or "application/octet-stream")
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if not body:
            return
        try:
            with open(path, "rb") as handle:
                handle.seek(start)
                remaining = length
                while remaining > 0:
                    chunk = handle.read(min(65536, remaining))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    remaining -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # browsers drop media connections mid-body


class MediaServer:
    """Serves `directory` (or only its file `only`) on 127.0.0.1 at a free port, in a thread, with CORS,
    CORP and byte ranges: media for a page on another origin. `requests` lists every path asked for.
    `no_store` forbids the browser's cache (the benchmark's pages fetch what they play)."""

    def __init__(self, directory: str | Path, only: str | None = None, no_store: bool = False):
        self.server = _Server(("127.0.0.1", 0), _MediaHandler)
        self.server.directory = os.path.realpath(directory)
        self.server.only = only
        self.server.no_store = no_store
        self.server.requests = []
        self.thread = threading.Thread(target=self.server.serve_forever, name="media-server", daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[str]:
        return self.server.requests

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{urllib.parse.quote(name)}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

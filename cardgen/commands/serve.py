"""`cardgen serve`: the gallery of a game on localhost, rebuilt on every save (the `watch` machinery) and updated
in the browser after each rebuild; a save that breaks the build shows an error banner instead.

The server pushes its status to the page (Server-Sent Events on `/__cardgen__/events`, one thread per page, at most
MAX_PAGES of them): whether a build runs, its error, and after each build the images it changed, whose new URLs the
page swaps in place (`gallery.js`; a change of which cards there are reloads the page). `/__cardgen__/status` answers
the same once; everything else is served from `output/<game>/`.
Only 127.0.0.1 is listened on, and only requests naming it (or localhost) in their Host header are answered: a web
page whose own address was made to lead to 127.0.0.1 (DNS rebinding) names its own host, and is refused. The game's
output folder is never made here (only a build makes it, stamped as cardgen's); until it exists, the page is one
that waits for the first build.
"""
from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import unquote

from cardgen.core.errors import CardgenError, OutputBusy

STATUS_PATH = "/__cardgen__/status"
EVENTS_PATH = "/__cardgen__/events"
IDLE_SECONDS = 10.0  # a connection that sends nothing for this long is closed (it would hold a thread)
MAX_PAGES = 16  # pages listening for events at once: each holds a thread
HEARTBEAT_SECONDS = 15.0  # an event stream with no news says it is alive this often
LOCAL_HOSTS = ("127.0.0.1", "localhost")
# The page shown before the first build has made the gallery: it reloads once a build is done.
WAITING_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>cardgen serve</title></head>
<body><p id="state">Not built yet: waiting for the first build to finish.</p><pre id="error"></pre><script>
new EventSource("%s").onmessage = (event) => {
  const status = JSON.parse(event.data);
  if (status.built) { location.reload(); return; }
  document.getElementById("state").textContent = status.building ? "Building..." :
    "The build failed; fix the problems below and save again.";
  document.getElementById("error").textContent = status.error;
};
</script></body></html>
""" % EVENTS_PATH


@dataclass
class ServeState:
    """What the page is told: the last finished build, whether one is running, the last error, and what the last
    build changed since the one before it (`since`): the URLs of the images it changed, and whether cards, decks or
    backs came or went (`reload`: a page showing `since` then loads again, as does one showing an older build)."""

    built: str = ""
    building: bool = False
    error: str = ""
    since: str = ""
    changed: dict[str, str] = field(default_factory=dict)  # image path -> its new URL, cache-busted by its content
    reload: bool = False
    page_loads: int = 0  # how often a browser loaded index.html (not the page's own fetch of its new text)
    pages: int = 0  # pages listening for events now
    news: int = 0  # how many times the status changed
    closed: bool = False  # serve is stopping: the event streams end
    images: dict[str, str] = field(default_factory=dict)  # image path -> its content key, in `built`
    layout: list = field(default_factory=list)  # the cards, decks and backs of `built`
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.told = threading.Condition(self.lock)  # notified on news

    def as_json(self) -> bytes:
        """The status answer."""
        with self.lock:
            return self._json()

    def _json(self) -> bytes:
        return json.dumps({"built": self.built, "building": self.building, "error": self.error,
                           "since": self.since, "changed": self.changed, "reload": self.reload}).encode()

    def started(self) -> None:
        """A rebuild started."""
        with self.lock:
            self.building = True
            self._tell()

    def finished(self, gallery: dict, error: str) -> None:
        """A rebuild ended: `gallery` is the gallery_state of the build now in place (the same build after an
        error), `error` the problems that stopped the rebuild ("" for none)."""
        with self.lock:
            built = gallery.get("built", "")
            if built and built != self.built:
                images: dict[str, str] = gallery["images"]
                self.reload = gallery["layout"] != self.layout
                self.changed = {} if self.reload else {  # (a page loading again needs no list)
                    path: f"{path}?v={key[:16]}" for path, key in images.items() if self.images.get(path) != key}
                self.since, self.built, self.images, self.layout = self.built, built, images, gallery["layout"]
            self.error, self.building = error, False
            self._tell()

    def _tell(self) -> None:
        self.news += 1
        self.told.notify_all()

    def close(self) -> None:
        """End every event stream."""
        with self.lock:
            self.closed = True
            self.told.notify_all()

    def join(self) -> bool:
        """Count one more page listening for events, unless MAX_PAGES already are."""
        with self.lock:
            if self.pages >= MAX_PAGES:
                return False
            self.pages += 1
            return True

    def leave(self) -> None:
        """A page stopped listening."""
        with self.lock:
            self.pages -= 1

    def next_news(self, seen: int, timeout: float) -> tuple[int, bytes] | None:
        """The status once it differs from news number `seen` (at once when it does already), or None after
        `timeout` seconds without news or when serve is stopping."""
        with self.lock:
            self.told.wait_for(lambda: self.news != seen or self.closed, timeout)
            return None if self.closed or self.news == seen else (self.news, self._json())


class _Handler(SimpleHTTPRequestHandler):
    """Files of the game's output folder, plus the status answer; no caching, no request log, no listings."""

    state: ServeState
    hosts: frozenset[str]  # what a request's Host header may be: this server's own addresses
    # `timeout` (set by start_server): socketserver sets it on each connection, so an idle one ends, and its thread

    def parse_request(self) -> bool:
        """Refuse a request for another host (DNS rebinding) or a path holding a NUL byte (no file has one)."""
        if not super().parse_request():
            return False
        host = self.headers.get("Host")
        if host is not None and host.lower() not in self.hosts:
            self.send_error(400, "Wrong host", "cardgen serve answers only http://127.0.0.1 or localhost")
            return False
        if "\x00" in unquote(self.path):
            self.send_error(400, "Bad path")
            return False
        return True

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        """Answer the status, or a file (the waiting page for the gallery of a game not built yet)."""
        path = self.path.split("?")[0]
        if path == STATUS_PATH:
            self._send(self.state.as_json(), "application/json")
            return
        if path == EVENTS_PATH:
            self._stream_events()
            return
        if path in ("/", "/index.html") and self.headers.get("Sec-Fetch-Mode", "navigate") == "navigate":
            with self.state.lock:  # a page loaded, not the page's own fetch of its new text
                self.state.page_loads += 1
            if not Path(self.directory, "index.html").is_file():
                self._send(WAITING_PAGE.encode(), "text/html; charset=utf-8")
                return
        super().do_GET()

    def _stream_events(self) -> None:
        """The status as Server-Sent Events: at once, then at every change, until the page goes or serve stops;
        a comment every HEARTBEAT_SECONDS meanwhile. A page past MAX_PAGES is refused (503)."""
        if not self.state.join():
            self.send_error(503, "Too many pages", f"cardgen serve sends its news to {MAX_PAGES} pages at most")
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            seen, quiet = -1, 0.0
            while not self.state.closed and not self._client_gone():
                news = self.state.next_news(seen, 1.0)  # a second at a time: a page gone is noticed soon
                if news is not None:
                    seen, quiet = news[0], 0.0
                    self.wfile.write(b"data: " + news[1] + b"\n\n")
                elif (quiet := quiet + 1.0) >= HEARTBEAT_SECONDS:
                    self.wfile.write(b": alive\n\n")
                    quiet = 0.0
                self.wfile.flush()
        finally:
            self.state.leave()

    def _client_gone(self) -> bool:
        """Whether the page closed its connection (it sends nothing after its request: readable means closed)."""
        if not select.select([self.connection], [], [], 0)[0]:
            return False
        try:
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """No folder listings: a folder without an index.html is not found."""
        self.send_error(404, "Not found")

    def end_headers(self) -> None:
        """Images change between builds: never let the browser keep them."""
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        """Quiet: the terminal shows builds, not requests."""


class _Server(ThreadingHTTPServer):
    """The gallery's server: a client that goes away mid-answer (a reload, a closed tab) is no error."""

    def handle_error(self, request: object, client_address: object) -> None:
        """Ignore a connection the client ended or let idle; say what else went wrong in one line."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            print(f"cardgen serve: a request failed: {error!r}", file=sys.stderr)


@dataclass
class GalleryServer:
    """A running `cardgen serve`: its address, state and how to stop it."""

    url: str
    state: ServeState
    stop: Callable[[], None]


def start_server(out_dir: Path, port: int = 0) -> tuple[ThreadingHTTPServer, ServeState]:
    """Serve a game's output folder on 127.0.0.1 (port 0: any free port) in a background thread.

    The folder need not exist yet: making it is the build's (a folder made here would lack cardgen's stamp, and
    every later build would refuse it)."""
    state = ServeState()
    handler: type[_Handler] = type("Handler", (_Handler,), {"state": state, "timeout": IDLE_SECONDS})
    server = _Server(("127.0.0.1", port), partial(handler, directory=str(out_dir)))
    port = server.server_port
    handler.hosts = frozenset({*LOCAL_HOSTS, *(f"{host}:{port}" for host in LOCAL_HOSTS)})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, state


def serve_game(root: Path, game: str, out_dir: Path, build: Callable[[], object], port: int = 0,
               say: Callable[[str], None] = print, after: Callable[[], object] | None = None,
               warm: Callable[[list[str]], None] | None = None) -> GalleryServer:
    """Build once, serve the gallery and rebuild on every save until `stop()` is called.

    `build` builds the game into `out_dir`; a CardgenError it raises becomes the banner, but for another command
    holding the output root (OutputBusy): the rebuild waits for it (`when_free`), the page saying "Rebuilding"
    meanwhile. After each rebuild the pages are told what it changed (`ServeState.finished`), then `after` runs
    when the build succeeded (the push into Tabletop Simulator, which the pages need not wait for). `warm` loads
    what the next rebuild reads, after the first build, while the workspace is quiet (`watch.watch_games`).
    """
    from cardgen.build.watch import watch_games, when_free
    from cardgen.outputs.gallery import gallery_state

    server, state = start_server(out_dir, port)
    stopping, first_done = threading.Event(), threading.Event()

    def rebuild(_: list[str] | None = None) -> None:
        state.started()
        error, built = "", False
        try:
            when_free(build, out_dir.parent, say)
            built = True
        except OutputBusy as exc:  # not the save's fault: the page keeps what it showed
            error = state.error
            say(f"{game}: not rebuilt: {exc.problems[0].message}")
        except CardgenError as exc:
            error = "\n".join(dict.fromkeys(str(p) for p in exc.problems))
            say(f"{game}: not rebuilt; fix the problems and save again:\n{error}")
        state.finished(gallery_state(out_dir), error)
        first_done.set()
        if built and after is not None:
            after()

    # The first build runs once the workspace is watched: a save while it runs, or right after, is not missed.
    watcher = threading.Thread(target=watch_games, args=(root, [game], rebuild, stopping),
                               kwargs={"build_first": True, "warm": warm}, daemon=True)
    watcher.start()
    while not first_done.wait(0.2) and watcher.is_alive():
        pass

    def stop() -> None:
        stopping.set()
        state.close()
        server.shutdown()
        server.server_close()
        watcher.join(timeout=5)

    return GalleryServer(f"http://127.0.0.1:{server.server_address[1]}/index.html", state, stop)

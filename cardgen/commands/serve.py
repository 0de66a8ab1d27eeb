"""`cardgen serve`: the gallery of a game on localhost, rebuilt on every save (the `watch` machinery) and
reloaded in the browser after each rebuild; a save that breaks the build shows an error banner instead.

The page asks `/__cardgen__/status` twice a second; everything else is served from `output/<game>/`.
Only 127.0.0.1 is listened on, and only requests naming it (or localhost) in their Host header are answered: a web
page whose own address was made to lead to 127.0.0.1 (DNS rebinding) names its own host, and is refused. The game's
output folder is never made here (only a build makes it, stamped as cardgen's); until it exists, the page is one
that waits for the first build.
"""
from __future__ import annotations

import json
import os
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
IDLE_SECONDS = 10.0  # a connection that sends nothing for this long is closed (it would hold a thread)
LOCAL_HOSTS = ("127.0.0.1", "localhost")
# The page shown before the first build has made the gallery: it reloads once a build is done.
WAITING_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>cardgen serve</title></head>
<body><p id="state">Not built yet: waiting for the first build to finish.</p><pre id="error"></pre><script>
async function poll() {
  const status = await (await fetch("%s", {cache: "no-store"})).json();
  if (status.built) { location.reload(); return; }
  document.getElementById("state").textContent = status.building ? "Building..." :
    "The build failed; fix the problems below and save again.";
  document.getElementById("error").textContent = status.error;
  setTimeout(poll, 500);
}
poll();
</script></body></html>
""" % STATUS_PATH


@dataclass
class ServeState:
    """What the page is told: the last finished build, whether one is running, the last error."""

    built: str = ""
    building: bool = False
    error: str = ""
    page_loads: int = 0  # how often index.html was served (a reload after a rebuild shows here)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def as_json(self) -> bytes:
        """The status answer."""
        with self.lock:
            return json.dumps({"built": self.built, "building": self.building, "error": self.error}).encode()


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
        if path in ("/", "/index.html"):
            with self.state.lock:
                self.state.page_loads += 1
            if not Path(self.directory, "index.html").is_file():
                self._send(WAITING_PAGE.encode(), "text/html; charset=utf-8")
                return
        super().do_GET()

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


def serve_game(root: Path, game: str, out_dir: Path, build: Callable[[], str], port: int = 0,
               say: Callable[[str], None] = print) -> GalleryServer:
    """Build once, serve the gallery and rebuild on every save until `stop()` is called.

    `build` builds the game and returns the new build's id; a CardgenError it raises becomes the banner, but for
    another command holding the output root (OutputBusy): the rebuild waits for it (`when_free`), the page saying
    "Rebuilding" meanwhile.
    """
    from cardgen.build.watch import watch_games, when_free

    server, state = start_server(out_dir, port)
    stopping, first_done = threading.Event(), threading.Event()

    def rebuild(_: list[str] | None = None) -> None:
        with state.lock:
            state.building = True
        try:
            built, error = when_free(build, out_dir.parent, say), ""
        except OutputBusy as exc:  # not the save's fault: the page keeps what it showed
            built, error = state.built, state.error
            say(f"{game}: not rebuilt: {exc.problems[0].message}")
        except CardgenError as exc:
            built, error = state.built, "\n".join(dict.fromkeys(str(p) for p in exc.problems))
            say(f"{game}: not rebuilt; fix the problems and save again:\n{error}")
        with state.lock:
            state.built, state.error, state.building = built, error, False
        first_done.set()

    # The first build runs once the workspace is watched: a save while it runs, or right after, is not missed.
    watcher = threading.Thread(target=watch_games, args=(root, [game], rebuild, stopping),
                               kwargs={"build_first": True}, daemon=True)
    watcher.start()
    while not first_done.wait(0.2) and watcher.is_alive():
        pass

    def stop() -> None:
        stopping.set()
        server.shutdown()
        server.server_close()
        watcher.join(timeout=5)

    return GalleryServer(f"http://127.0.0.1:{server.server_address[1]}/index.html", state, stop)

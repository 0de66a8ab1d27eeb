"""`cardgen serve`: the gallery of a game on localhost, rebuilt on every save (the `watch` machinery) and
reloaded in the browser after each rebuild; a save that breaks the build shows an error banner instead.

The page asks `/__cardgen__/status` twice a second; everything else is served from `output/<game>/`.
Only 127.0.0.1 is listened on.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from cardgen.core.errors import CardgenError

STATUS_PATH = "/__cardgen__/status"


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
    """Files of the game's output folder, plus the status answer; no caching, no request log."""

    state: ServeState

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        """Answer the status, or a file."""
        if self.path.split("?")[0] == STATUS_PATH:
            body = self.state.as_json()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.split("?")[0] in ("/", "/index.html"):
            with self.state.lock:
                self.state.page_loads += 1
        super().do_GET()

    def end_headers(self) -> None:
        """Images change between builds: never let the browser keep them."""
        if self.path.split("?")[0] != STATUS_PATH:
            self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        """Quiet: the terminal shows builds, not requests."""


@dataclass
class GalleryServer:
    """A running `cardgen serve`: its address, state and how to stop it."""

    url: str
    state: ServeState
    stop: Callable[[], None]


def start_server(out_dir: Path, port: int = 0) -> tuple[ThreadingHTTPServer, ServeState]:
    """Serve a game's output folder on 127.0.0.1 (port 0: any free port) in a background thread."""
    state = ServeState()
    handler = type("Handler", (_Handler,), {"state": state})
    out_dir.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=str(out_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, state


def serve_game(root: Path, game: str, out_dir: Path, build: Callable[[], str], port: int = 0,
               say: Callable[[str], None] = print) -> GalleryServer:
    """Build once, serve the gallery and rebuild on every save until `stop()` is called.

    `build` builds the game and returns the new build's id; a CardgenError it raises becomes the banner.
    """
    from cardgen.build.watch import watch_games

    server, state = start_server(out_dir, port)
    stopping = threading.Event()

    def rebuild(_: list[str] | None = None) -> None:
        with state.lock:
            state.building = True
        try:
            built, error = build(), ""
        except CardgenError as exc:
            built, error = state.built, "\n".join(dict.fromkeys(str(p) for p in exc.problems))
            say(f"{game}: not rebuilt; fix the problems and save again:\n{error}")
        with state.lock:
            state.built, state.error, state.building = built, error, False

    rebuild()
    watcher = threading.Thread(target=watch_games, args=(root, [game], rebuild, stopping), daemon=True)
    watcher.start()

    def stop() -> None:
        stopping.set()
        server.shutdown()
        server.server_close()
        watcher.join(timeout=5)

    return GalleryServer(f"http://127.0.0.1:{server.server_address[1]}/index.html", state, stop)

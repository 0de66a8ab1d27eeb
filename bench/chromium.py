"""A headless Chromium driven through the DevTools protocol, for the bench's `serve` figure and the tests of the
live gallery: one page, JavaScript evaluated in it, its loads counted. Only 127.0.0.1: the browser's DevTools port is
the one it picks itself (`--remote-debugging-port=0`, read back from its profile's DevToolsActivePort file).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-extensions", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]
START_SECONDS = 60.0  # for the browser to open its DevTools port on a loaded machine


class Chromium:
    """A headless Chromium showing one page; `with Chromium() as browser:` starts it and ends it."""

    def __init__(self) -> None:
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed")
        self.profile = Path(tempfile.mkdtemp(prefix="cardgen-chromium-"))
        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.loads = 0  # pages loaded (Page.loadEventFired) since navigate()
        self._ids = 0
        try:
            self.socket = websocket.create_connection(self._page_socket(), timeout=START_SECONDS,
                                                      suppress_origin=True)
            self.call("Page.enable")
            self.call("Runtime.enable")
        except BaseException:
            self.close()
            raise

    def _page_socket(self) -> str:
        """The DevTools WebSocket address of the browser's page, once the browser says its port."""
        deadline = time.monotonic() + START_SECONDS
        active = self.profile / "DevToolsActivePort"
        while not active.is_file() or not active.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = active.read_text().split()[0]
        with urlopen(f"http://127.0.0.1:{port}/json/list", timeout=START_SECONDS) as answer:
            targets = json.load(answer)
        return next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")

    def call(self, method: str, **params: Any) -> dict:
        """Send one DevTools command and return its result (counting the page loads reported meanwhile)."""
        self._ids += 1
        self.socket.send(json.dumps({"id": self._ids, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("method") == "Page.loadEventFired":
                self.loads += 1
            if message.get("id") == self._ids:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url: str, seconds: float = 60.0) -> None:
        """Load `url` and wait until its load event (and its scripts) ran."""
        self.loads = 0
        self.call("Page.navigate", url=url)
        self.wait_for_loads(1, seconds)

    def wait_for_loads(self, count: int, seconds: float = 60.0) -> None:
        """Wait until the page has loaded `count` times since navigate()."""
        deadline = time.monotonic() + seconds
        while self.loads < count:  # each call reads the events that came before its answer
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page loaded {self.loads} times, not {count}")
            try:
                self.evaluate("0")
            except RuntimeError as error:  # asked while the page was being replaced: its loads are counted anyway
                if "navigated or closed" not in str(error):
                    raise
            time.sleep(0.01)

    def wait_for(self, expression: str, seconds: float = 60.0, every: float = 0.01) -> Any:
        """The value of `expression` once it is truthy, evaluated every `every` seconds; an error after `seconds`."""
        deadline = time.monotonic() + seconds
        while not (value := self.evaluate(expression)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"gave up waiting for {expression}")
            time.sleep(every)
        return value

    def close(self) -> None:
        """End the browser and remove its profile."""
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""URL sources, against a server on 127.0.0.1 answering as Google's export endpoints do: a redirect to the file, an
ETag and 304s, 404, 500, a slow answer, a huge one and a sign-in page. Never the real network."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from cardgen.load.sources import url as url_source
from tests.conftest import SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, run_cli, wait_for, write_game

CSV = "name,power,count,text\nAlpha,1,2,Fire\nBeta,2,1,Ice\n"


class Sheet:
    """What the server holds and what it was asked."""

    def __init__(self) -> None:
        self.csv = CSV
        self.asked: list[tuple[str, int]] = []  # (path, status answered)
        self.down = False  # the file's host answers 500


def _handler(sheet: Sheet) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            """Quiet."""

        def answer(self, status: int, body: bytes = b"", kind: str = "text/csv", **headers: str) -> None:
            sheet.asked.append((self.path.split("?")[0], status))
            self.send_response(status)
            self.send_header("Content-Type", kind)
            length = headers.pop("length", str(len(body)))
            if length:  # "": none said (the answer ends when the connection closes)
                self.send_header("Content-Length", length)
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?")[0]
            etag = '"' + str(hash(sheet.csv)) + '"'
            if path == "/spreadsheets/d/abc/export":  # Google: a redirect to the file on another host
                self.answer(307, Location="/googleusercontent/abc.csv")
            elif path == "/googleusercontent/abc.csv":
                if sheet.down:
                    self.answer(500, b"oops", "text/plain")
                elif self.headers.get("If-None-Match") == etag:
                    self.answer(304, ETag=etag)
                else:
                    self.answer(200, sheet.csv.encode(), "text/csv; charset=utf-8", ETag=etag)
            elif path == "/json":
                self.answer(200, json.dumps([{"name": "Jay", "power": 3, "text": "Hi"}]).encode(), "application/json")
            elif path == "/login":
                self.answer(200, b"<!DOCTYPE html><html><title>Sign in - Google Accounts</title></html>", "text/html")
            elif path == "/huge":
                self.answer(200, b"name\n" + b"x" * 5_000, length="")
            elif path == "/huge-declared":
                self.answer(200, b"name\n", length=str(10**12))
            elif path == "/slow":
                sheet.asked.append((path, 200))
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                for _ in range(20):
                    self.wfile.write(b"name\n")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                self.answer(404, b"not found", "text/plain")

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Sheet]]:
    """The server's address and what it holds."""
    sheet = Sheet()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(sheet))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", sheet
    httpd.shutdown()
    httpd.server_close()


def _game(root: Path, url: str) -> None:
    write_game(root, "g", SIMPLE_MANIFEST.replace("source: cards.csv", f'source: {{url: "{url}"}}'), {},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})


def _cards(root: Path) -> list[tuple[str, int]]:
    record = json.loads((root / "output" / "g" / "build.json").read_text())
    return [(card["name"], card["copies"]) for card in record["cards"]]


def test_a_google_export_link_builds_and_a_304_is_up_to_date_until_the_sheet_changes(
        workspace: Path, server: tuple[str, Sheet]) -> None:
    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    _game(workspace, url)
    run_cli(workspace, "build", "g")
    assert _cards(workspace) == [("Alpha", 2), ("Beta", 1)]
    assert ("/googleusercontent/abc.csv", 200) in sheet.asked
    sheet.asked.clear()
    again = run_cli(workspace, "build", "g")
    assert "up to date" in again.output, again.output
    assert ("/googleusercontent/abc.csv", 304) in sheet.asked  # asked again, and nothing sent but "not modified"
    assert {status for _, status in sheet.asked} == {307, 304}, sheet.asked
    sheet.csv = CSV + "Gamma,3,1,Wind\n"
    run_cli(workspace, "build", "g")
    assert _cards(workspace) == [("Alpha", 2), ("Beta", 1), ("Gamma", 1)]


def test_a_sheet_that_changes_shape_is_located_at_the_url_and_row(workspace: Path, server: tuple[str, Sheet]) -> None:
    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    _game(workspace, url)
    sheet.csv = "name,strength,count,text\nAlpha,1,2,a\nBeta,two,1,b\n"
    (workspace / "data" / "g" / "game.yaml").write_text(
        (workspace / "data" / "g" / "game.yaml").read_text().replace("power: int", "strength: int"))
    found = run_cli(workspace, "validate", "g", expect=1).output
    assert f"{url}:3:strength: error: 'two' is not a whole number" in found, found


def test_an_error_answer_or_no_server_uses_the_last_good_copy_and_says_how_old(
        workspace: Path, server: tuple[str, Sheet]) -> None:
    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    _game(workspace, url)
    run_cli(workspace, "build", "g")
    sheet.down, sheet.csv = True, "name\nNever served\n"
    found = run_cli(workspace, "build", "g", "--force").output
    assert f"{url}: warning: cannot read the sheet (the server answered 500 Internal Server Error); this build uses " \
           "the copy from an earlier one, less than a minute old (source-offline)" in found, found
    assert _cards(workspace) == [("Alpha", 2), ("Beta", 1)]
    assert "up to date" in run_cli(workspace, "build", "g").output  # the copy it would read is the one it did
    offline = url.replace(base, "http://127.0.0.1:9")  # the discard port: nothing listens there
    _game(workspace, offline)
    found = run_cli(workspace, "validate", "g", expect=1).output
    assert found.startswith(f"{offline}: error: cannot read the sheet: cannot reach the server ([Errno 111] "
                            "Connection refused); and there is no copy of it from an earlier build (source-offline)")


@pytest.mark.parametrize("path,reason", [
    ("/nothing-here", "the server answered 404 Not Found (no such sheet: check the link, and the gid of the tab)"),
    ("/login", "the address answered with a web page, not the sheet (a sign-in page?): share the sheet with 'Anyone "
               "with the link' or use File > Share > Publish to web, CSV"),
    ("/slow", "the answer took more than 0.5 s"),
    ("/huge", "the answer is more than the limit of 1,000 bytes"),
    ("/huge-declared", "the answer is 1,000,000,000,000 bytes, more than the limit of 1,000"),
])
def test_an_answer_that_is_not_the_sheet_without_a_copy_is_one_located_error(
        workspace: Path, server: tuple[str, Sheet], monkeypatch: pytest.MonkeyPatch, path: str, reason: str) -> None:
    monkeypatch.setattr(url_source, "READ_SECONDS", 0.5)
    monkeypatch.setattr(url_source, "MAX_URL_BYTES", 1_000)
    url = server[0] + path
    _game(workspace, url)
    started = time.monotonic()
    found = run_cli(workspace, "build", "g", expect=1).output
    assert found.startswith(f"{url}: error: cannot read the sheet: {reason}; and there is no copy of it from an "
                            "earlier build (source-offline)\n"), found
    assert time.monotonic() - started < 10
    assert not list((workspace / "output").glob("g"))


def test_a_json_url_is_read_by_its_content_type(workspace: Path, server: tuple[str, Sheet]) -> None:
    _game(workspace, server[0] + "/json")
    run_cli(workspace, "build", "g")
    assert _cards(workspace) == [("Jay", 1)]


def test_a_damaged_copy_is_never_read(workspace: Path, server: tuple[str, Sheet]) -> None:
    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    _game(workspace, url)
    run_cli(workspace, "build", "g")
    [body] = Path(url_source._folder(url) or "").glob("body")
    body.write_text("name\nTampered\n")
    sheet.down = True
    found = run_cli(workspace, "validate", "g", expect=1).output
    assert "there is no copy of it from an earlier build" in found, found


def test_watch_looks_at_the_sheet_every_poll_and_rebuilds_when_it_changed(
        workspace: Path, server: tuple[str, Sheet]) -> None:
    from cardgen.build.watch import watch_games

    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    write_game(workspace, "g", SIMPLE_MANIFEST.replace("source: cards.csv", f'source: {{url: "{url}", poll: 5}}'), {},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    rebuilt: list[list[str]] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch_games, args=(workspace, ["g"], rebuilt.append, stop),
                               kwargs={"build_first": True, "debounce": 0.05})
    watcher.start()
    try:
        # one look after the first build, the sheet unchanged: asked, answered 304, no rebuild (waited for, not
        # slept: a loaded machine's first build can take longer than the poll's 5 s leave room for)
        wait_for(lambda: ("/googleusercontent/abc.csv", 304) in sheet.asked, "the poll's look at the sheet", 30)
        assert rebuilt == [["g"]], (rebuilt, sheet.asked)
        sheet.csv = CSV + "Gamma,3,1,Wind\n"
        wait_for(lambda: len(rebuilt) >= 2, "the rebuild after the sheet changed", 30)
        assert rebuilt == [["g"], ["g"]]
    finally:
        stop.set()
        watcher.join(timeout=10)


@pytest.mark.parametrize("source,found", [
    ('{file: cards.csv, url: "https://example.invalid/x.csv"}', "give a source either `file:` (a data file) or "
                                                               "`url:` (an http or https address)"),
    ('{url: "ftp://example.invalid/x.csv"}', "`url:` must begin with https:// or http://, not "
                                            "'ftp://example.invalid/x.csv'"),
])
def test_a_source_is_a_file_or_an_http_url(workspace: Path, source: str, found: str) -> None:
    _game(workspace, "x")
    manifest = workspace / "data" / "g" / "game.yaml"
    manifest.write_text(manifest.read_text().replace('source: {url: "x"}', f"source: {source}"))
    output = run_cli(workspace, "validate", "g", expect=1).output
    assert output.startswith(f"data/g/game.yaml:8: error: decks.main.source: {found}\ng: 1 error"), output


def test_without_a_user_cache_the_answer_is_read_once_and_kept_nowhere(
        workspace: Path, server: tuple[str, Sheet], monkeypatch: pytest.MonkeyPatch) -> None:
    base, sheet = server
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # no absolute cache folder: none at all
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    _game(workspace, url)
    run_cli(workspace, "build", "g")
    assert _cards(workspace) == [("Alpha", 2), ("Beta", 1)]
    sheet.down = True
    assert "there is no copy of it from an earlier build" in run_cli(workspace, "validate", "g", expect=1).output


def test_a_renamed_column_gives_the_findings_a_file_would_at_the_url(
        workspace: Path, server: tuple[str, Sheet]) -> None:
    base, sheet = server
    url = f"{base}/spreadsheets/d/abc/export?format=csv&gid=0"
    sheet.csv = "title,power,count,text\nAlpha,1,2,a\nBeta,x,1,b\n"
    _game(workspace, url)
    online = run_cli(workspace, "validate", "g", expect=1).output
    _game(workspace, "x")
    manifest = workspace / "data" / "g" / "game.yaml"
    manifest.write_text(manifest.read_text().replace('source: {url: "x"}', "source: cards.csv"))
    (workspace / "data" / "g" / "cards.csv").write_text(sheet.csv)
    on_file = run_cli(workspace, "validate", "g", expect=1).output
    assert f"{url}:3:power: error: 'x' is not a whole number" in online
    assert f"{url}:1:title: warning: column 'title' is not declared" in online
    assert online.replace(url, "data/g/cards.csv") == on_file

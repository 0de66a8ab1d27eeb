"""`cardgen serve` and `cardgen watch` as a designer meets them: serve on a game never built, real HTTP requests on
a free 127.0.0.1 port (the Host header, listings, bad paths, clients that go away or say nothing), a rebuild that
waits for another command's lock, and source folders made while watching."""
from __future__ import annotations

import http.client
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from click.testing import CliRunner

from cardgen.build.watch import watch_games, when_free
from cardgen.commands import serve
from cardgen.commands.cli import main
from cardgen.commands.serve import STATUS_PATH, serve_game, start_server
from cardgen.core.errors import OutputBusy
from cardgen.core.ownership import STAMP, output_lock, wait_until_free

CARDGEN = [sys.executable, "-m", "cardgen"]


def _wait(condition: Callable[[], object], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def quest(tmp_path: Path) -> Path:
    """A workspace made by `cardgen init quest`, never built (no icons/ or fonts/ folder, as init makes it)."""
    root = tmp_path / "ws"
    root.mkdir()
    assert CliRunner().invoke(main, ["--root", str(root), "init", "quest"]).exit_code == 0
    return root


class _Serving:
    """`cardgen serve` running as its own process; its output lines read as they come."""

    def __init__(self, root: Path, *args: str) -> None:
        self.process = subprocess.Popen([*CARDGEN, "--root", str(root), "serve", "quest", "--no-open", "-j", "1",
                                         *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def line(self, containing: str, seconds: float = 120) -> str:
        """The first line holding `containing` (failing with everything printed when none comes)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            self.seen.append(line)
            if containing in line:
                return line
        raise AssertionError(f"serve printed no line with {containing!r}:\n{''.join(self.seen)}")

    def stop(self) -> str:
        """Ctrl-C (then a kill, if that did not end it), and everything it printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(10)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


def _get(port: int, path: str, host: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("GET", path, skip_host=host is not None)
    if host is not None:
        connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    return response.status, response.read()


def test_serve_on_a_game_never_built_leaves_output_a_build_can_replace(quest: Path) -> None:
    """`cardgen init quest && cardgen serve quest`: the gallery is served, and afterwards `build` and `clean`
    work on what serve left. A serve whose first build fails shows a page waiting for the build, and leaves no
    folder of its own behind; neither does a serve that cannot have its port."""
    cards = quest / "data" / "quest" / "cards.csv"
    good = cards.read_text()
    cards.write_text(good.replace("Fireball,3,", "Fireball,three,"))
    running = _Serving(quest, "--port", "0")
    try:
        port = int(running.line("gallery at").split("127.0.0.1:")[1].split("/")[0])
        status, page = _get(port, "/index.html")
        assert status == 200 and b"waiting for the first build" in page
        assert b"three" in _get(port, STATUS_PATH)[1]
        assert not (quest / "output" / "quest").exists()
        cards.write_text(good)  # the save that fixes it builds the gallery
        _wait(lambda: (quest / "output" / "quest" / "index.html").is_file(), "the gallery after the fixing save")
        _wait(lambda: b"data-built" in _get(port, "/index.html")[1], "the gallery to be served")
    finally:
        running.stop()
    assert (quest / "output" / "quest" / STAMP).is_file()
    build = subprocess.run([*CARDGEN, "--root", str(quest), "build", "quest", "-j", "1"], capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0 and "not made by cardgen" not in build.stderr, build.stderr
    clean = subprocess.run([*CARDGEN, "--root", str(quest), "clean", "--outputs"], capture_output=True, text=True,
                           timeout=60)
    assert clean.returncode == 0 and not (quest / "output").exists(), clean.stdout + clean.stderr

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = _Serving(quest, "--port", str(taken.getsockname()[1]))
        try:
            assert busy.process.wait(timeout=60) == 1
        finally:
            assert "cannot serve on port" in busy.stop()
    assert not (quest / "output" / "quest").exists()
    misspelt = subprocess.run([*CARDGEN, "--root", str(quest), "serve", "qest", "--no-open", "--port", "0"],
                              capture_output=True, text=True, timeout=60)  # killed, and failing, if it serves
    assert misspelt.returncode == 1 and "did you mean 'quest'" in misspelt.stderr
    assert not (quest / "output").exists()
    build = subprocess.run([*CARDGEN, "--root", str(quest), "build", "quest", "-j", "1"], capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0, build.stderr


def test_serve_takes_builds_flags_of_the_outputs_written_when_asked(quest: Path) -> None:
    # Before: serve's --guides was its own flag, and serve had no --trimmed, --cut, ... of build's
    running = _Serving(quest, "--port", "0", "--guides", "--trimmed")
    try:
        port = int(running.line("gallery at").split("127.0.0.1:")[1].split("/")[0])
        game = quest / "output" / "quest"
        _wait(lambda: b"data-built" in _get(port, "/index.html")[1], "the gallery to be served")
        assert b'id="guides" checked' in _get(port, "/index.html")[1]  # the gallery's guides switched on
        assert any((game / "guides").rglob("*.png")) and any((game / "trimmed").rglob("*.png"))
        assert not (game / "cut").exists()  # only what was asked for
    finally:
        running.stop()


@pytest.fixture
def gallery(tmp_path: Path) -> Iterator[int]:
    """A server on a free port over a folder holding a page, a big image and a folder without a page."""
    out_dir = tmp_path / "quest"
    (out_dir / "cards" / "main").mkdir(parents=True)
    (out_dir / "index.html").write_text("<body data-built='1'>gallery</body>")
    (out_dir / "cards" / "main" / "big.png").write_bytes(os.urandom(8 << 20))
    server, _ = start_server(out_dir)
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_serve_answers_only_its_own_host_and_lists_no_folder(gallery: int) -> None:
    """A page on another site whose name was made to lead to 127.0.0.1 (DNS rebinding) sends its own Host: refused.
    A folder without an index.html is not listed."""
    port = gallery
    assert _get(port, "/index.html")[0] == 200
    assert _get(port, "/index.html", host=f"localhost:{port}")[0] == 200
    assert _get(port, "/index.html", host=f"attacker.example:{port}")[0] == 400
    assert _get(port, STATUS_PATH, host=f"attacker.example:{port}")[0] == 400
    status, body = _get(port, "/cards/main/")
    assert status == 404 and b"big.png" not in body


def test_serve_refuses_a_nul_path_and_ignores_clients_that_go_away(gallery: int,
                                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """`/%00` is a 400, not a traceback; a client that resets the connection mid-answer is no error."""
    port = gallery
    assert _get(port, "/%00")[0] == 400
    assert _get(port, "/cards/%00.png")[0] == 400
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"GET /cards/main/big.png HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            client.recv(1024)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a close
    time.sleep(0.5)
    assert _get(port, "/index.html")[0] == 200  # still serving
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err


def test_serve_lets_go_of_a_client_that_says_nothing(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection that sends no request would hold a thread for ever: it is closed after the idle time."""
    monkeypatch.setattr(serve, "IDLE_SECONDS", 0.5)
    server, _ = start_server(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1])) as idle:
            idle.settimeout(10)
            started = time.monotonic()
            assert idle.recv(1024) == b"" and time.monotonic() - started < 5  # closed by the server
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capfd.readouterr().err


def test_a_rebuild_waits_for_another_commands_lock_and_is_not_a_broken_build(quest: Path) -> None:
    """A save while another command (a print, a tts export) holds the output root: serve says it is busy, the page
    says "Rebuilding", and the rebuild runs once the lock is free; no error banner."""
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.outputs import stage_names
    from cardgen.outputs.gallery import gallery_state

    out_root, said = quest / "output", []
    out_dir = out_root / "quest"

    def build() -> str:
        build_game(quest, "quest", BuildOptions(out_root, 1), None, stage_names())
        return str(gallery_state(out_dir)["built"])

    running = serve_game(quest, "quest", out_dir, build, say=said.append)
    try:
        first = running.state.built
        held, release = threading.Event(), threading.Event()

        def other_command() -> None:
            with output_lock(out_root):  # (serve holds no lock after a rebuild's report: `cachebound.settle`)
                held.set()
                release.wait(60)

        threading.Thread(target=other_command, daemon=True).start()
        held.wait(10)
        cards = quest / "data" / "quest" / "cards.csv"
        cards.write_text(cards.read_text().replace("Fireball,3,", "Fireball,4,"))
        _wait(lambda: any("busy" in line for line in said), "serve to say the output is busy")
        assert running.state.building and running.state.error == "" and running.state.built == first
        release.set()
        _wait(lambda: running.state.built != first and not running.state.building, "the rebuild once it is free")
        assert running.state.error == "", running.state.error
        assert not any("fix the problems" in line for line in said), said
    finally:
        running.stop()


def test_a_wait_for_the_lock_is_bounded(tmp_path: Path) -> None:
    """A lock never let go: the rebuild gives up after its time, saying to save again (not a broken build)."""
    calls = []

    def build() -> None:
        calls.append(1)
        with output_lock(tmp_path):
            pass

    with output_lock(tmp_path):
        started = time.monotonic()
        with pytest.raises(OutputBusy, match="save again"):
            when_free(build, tmp_path, lambda text: None, seconds=1)
        assert 1 <= time.monotonic() - started < 10 and len(calls) >= 2
        assert not wait_until_free(tmp_path, 0.1)
    assert wait_until_free(tmp_path, 0.1)


def test_watch_sees_source_folders_made_while_it_runs(quest: Path) -> None:
    """A workspace from `init` has no icons/ or fonts/: making one, and saving into it afterwards, rebuilds."""
    rebuilds: list[list[str]] = []
    stop = threading.Event()
    thread = threading.Thread(target=watch_games, args=(quest, ["quest"], rebuilds.append, stop, 0.1, True),
                              daemon=True)
    thread.start()
    try:
        _wait(lambda: len(rebuilds) == 1, "the first build, once the workspace is watched", 30)
        (quest / "icons").mkdir()
        _wait(lambda: len(rebuilds) >= 2, "a rebuild after icons/ was made", 30)
        time.sleep(0.5)
        count = len(rebuilds)
        (quest / "icons" / "star.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>')
        _wait(lambda: len(rebuilds) > count, "a rebuild after a save into the new icons/", 30)
        moved = quest.parent / "myfonts"
        moved.mkdir()
        count = len(rebuilds)
        moved.rename(quest / "fonts")
        _wait(lambda: len(rebuilds) > count, "a rebuild after fonts/ was moved in", 30)
        time.sleep(0.5)
        count = len(rebuilds)
        (quest / "fonts" / "notes.txt").write_text("licence")
        _wait(lambda: len(rebuilds) > count, "a rebuild after a save into the moved-in fonts/", 30)
        assert all(names == ["quest"] for names in rebuilds)
    finally:
        stop.set()
        thread.join(10)


def test_watch_rebuilds_a_finished_save_at_once_and_waits_out_a_write_left_open(quest: Path) -> None:
    """With a quiet time of 3 s: a save (write and close) and a save by rename rebuild well within it (the file
    system said the write was finished); a write whose file stays open waits the quiet time out, and its close,
    which changes nothing more, does not rebuild again, nor does a file opened for writing and closed unwritten;
    a write after the quiet time's rebuild rebuilds at its close."""
    rebuilds: list[float] = []
    stop = threading.Event()
    thread = threading.Thread(target=watch_games, daemon=True, kwargs={"build_first": True},
                              args=(quest, ["quest"], lambda games: rebuilds.append(time.monotonic()), stop, 3.0))
    thread.start()
    cards = quest / "data" / "quest" / "cards.csv"
    try:
        _wait(lambda: len(rebuilds) == 1, "the first build, once the workspace is watched", 30)
        time.sleep(1)  # the watch has set drawing up and waits for a save
        saved = time.monotonic()
        cards.write_text(cards.read_text().replace("Fireball,3,", "Fireball,4,"))
        _wait(lambda: len(rebuilds) == 2, "a rebuild after the save", 10)
        assert rebuilds[1] - saved < 1.5, "the save waited for the quiet time"
        temporary = cards.with_name(".cards.csv.part")  # an editor's save: a new file renamed over the old one
        temporary.write_text(cards.read_text().replace("Fireball,4,", "Fireball,5,"))
        saved = time.monotonic()
        os.replace(temporary, cards)
        _wait(lambda: len(rebuilds) == 3, "a rebuild after the save by rename", 10)
        assert rebuilds[2] - saved < 1.5, "the save by rename waited for the quiet time"
        with cards.open("a") as handle:
            handle.write("\n")
            handle.flush()
            written = time.monotonic()
            _wait(lambda: len(rebuilds) == 4, "a rebuild after the quiet time", 10)
            assert rebuilds[3] - written >= 2.9, "a write still open did not wait for the quiet time"
        with cards.open("a"):
            pass
        time.sleep(1.5)
        assert len(rebuilds) == 4, "a close that changed nothing rebuilt"
        with cards.open("a") as handle:
            handle.write("\n")
            handle.flush()
            time.sleep(0.5)
            closed = time.monotonic()
        _wait(lambda: len(rebuilds) == 5, "a rebuild after the close", 10)
        assert rebuilds[4] - closed < 1.5
    finally:
        stop.set()
        thread.join(10)


def _event_stream(port: int) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", serve.EVENTS_PATH)
    return connection, connection.getresponse()


def _next_event(response: http.client.HTTPResponse) -> str:
    """The next event's data, or a heartbeat comment, as one string."""
    lines = []
    while (line := response.readline().decode()) not in ("\n", ""):
        lines.append(line.rstrip("\n"))
    return "\n".join(lines)


def test_serve_pushes_each_rebuild_to_a_bounded_number_of_pages_and_ends_their_streams(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/__cardgen__/events: the status at once, then each change of it: a rebuild's changed images (cache-busted by
    their content key) and whether the cards changed; a heartbeat when nothing happens; at most MAX_PAGES streams
    (a page gone frees its place); every stream ends when serve stops."""
    import json

    monkeypatch.setattr(serve, "MAX_PAGES", 2)
    monkeypatch.setattr(serve, "HEARTBEAT_SECONDS", 1.0)
    server, state = start_server(tmp_path)
    port = server.server_address[1]
    layout = [["main"], [], [["a", "main", "cards/a.png", None], ["b", "main", "cards/b.png", None]]]
    try:
        state.finished({"built": "1", "images": {"cards/a.png": "aaaa", "cards/b.png": "bbbb"}, "layout": layout}, "")
        first, stream = _event_stream(port)
        assert stream.status == 200 and stream.headers["Content-Type"] == "text/event-stream"
        assert json.loads(_next_event(stream).removeprefix("data: "))["built"] == "1"
        state.started()
        assert json.loads(_next_event(stream).removeprefix("data: "))["building"] is True
        state.finished({"built": "2", "images": {"cards/a.png": "aaaa", "cards/b.png": "cccc"}, "layout": layout}, "")
        news = json.loads(_next_event(stream).removeprefix("data: "))
        assert news == {"built": "2", "since": "1", "changed": {"cards/b.png": "cards/b.png?v=cccc"}, "reload": False,
                        "building": False, "error": ""}
        assert _next_event(stream) == ": alive"
        state.finished({"built": "3", "images": {"cards/a.png": "aaaa"}, "layout": layout[:2] + [layout[2][:1]]}, "")
        assert json.loads(_next_event(stream).removeprefix("data: "))["reload"] is True

        monkeypatch.setattr(serve, "HEARTBEAT_SECONDS", 60.0)  # a page gone is noticed without writing to it
        second, listening = _event_stream(port)
        third, refused = _event_stream(port)
        assert refused.status == 503
        third.close()
        listening.close()
        second.close()  # a page gone: its place is free again within a second or two
        _wait(lambda: state.pages == 1, "the closed stream to be noticed", 5)
        fourth, again = _event_stream(port)
        assert again.status == 200 and json.loads(_next_event(again).removeprefix("data: "))["built"] == "3"
        state.close()
        for ended in (stream, again):  # the streams end (read() returns), heartbeats not read aside
            assert set(ended.read().split(b"\n\n")) <= {b": alive", b""}
        _wait(lambda: state.pages == 0, "the streams' threads to end", 10)
        first.close()
        fourth.close()
    finally:
        server.shutdown()
        server.server_close()


def test_serve_tells_the_pages_before_it_pushes_into_tabletop_simulator(quest: Path) -> None:
    """A push after a rebuild (`--push`) can take seconds: the pages hear of the rebuild first."""
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.outputs import stage_names

    pushes, pushing, release = [], threading.Event(), threading.Event()

    def build() -> None:
        build_game(quest, "quest", BuildOptions(quest / "output", 1), None, stage_names())

    def push() -> None:
        pushes.append(1)
        if len(pushes) > 1:  # the save's push, not the first build's
            pushing.set()
            release.wait(60)

    running = serve_game(quest, "quest", quest / "output" / "quest", build, say=lambda text: None, after=push)
    try:
        first = running.state.built
        cards = quest / "data" / "quest" / "cards.csv"
        cards.write_text(cards.read_text().replace("Fireball,3,", "Fireball,4,"))
        assert pushing.wait(60), "no push after the save's rebuild"
        assert running.state.built != first and not running.state.building  # told while the push runs
    finally:
        release.set()
        running.stop()

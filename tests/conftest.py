"""Shared fixtures: the repository's workspace and small throw-away workspaces for one test."""
from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from cardgen.commands.cli import main

REPO = Path(__file__).resolve().parent.parent

# Property tests check results, not speed: on a machine shared by parallel test runs one example can take
# longer than hypothesis' 200 ms deadline for no fault of the code (timings live in bench/).
settings.register_profile("cardgen", deadline=None)
settings.load_profile("cardgen")


def pytest_configure(config: pytest.Config) -> None:
    """Keep what cardgen keeps in the user's cache folder (fonts' metrics, compiled templates, the icon index)
    in a folder of this test run, removed at its end, not in the real ~/.cache of whoever runs the tests.

    Each xdist worker runs this too and gets its own folder; tests that check the user cache set their own.
    """
    folder = tempfile.mkdtemp(prefix="cardgen-tests-user-cache-")
    os.environ["XDG_CACHE_HOME"] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


@pytest.fixture(autouse=True)
def builds_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a process that builds once: a watch run in a test's own thread makes its process one that
    builds again (`storage.keep_for_next_builds`) for that test only, not for the tests after it (nor the work its
    builds left for after them, `storage.after_rebuild`)."""
    import threading

    from cardgen.core import storage

    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    monkeypatch.setattr(storage, "_AFTER_REBUILD", [])


def make_workspace(base: Path) -> Path:
    """An empty workspace under `base`: only data/ and templates/ (fonts and icons are cardgen's bundled ones)."""
    root = base / "ws"
    (root / "data").mkdir(parents=True)
    (root / "templates").mkdir()
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace in a temp folder (bundled fonts and icons only)."""
    return make_workspace(tmp_path)


def write_game(root: Path, name: str, manifest: str, files: dict[str, str | bytes],
               templates: dict[str, str]) -> Path:
    """Write a game's game.yaml, data files (text is dedented, bytes kept) and templates; return its data folder."""
    data = root / "data" / name
    data.mkdir(parents=True, exist_ok=True)
    (data / "game.yaml").write_text(textwrap.dedent(manifest), encoding="utf-8")
    for file, content in files.items():
        if isinstance(content, bytes):
            (data / file).write_bytes(content)
        else:
            (data / file).write_text(textwrap.dedent(content), encoding="utf-8")
    tdir = root / "templates" / name
    tdir.mkdir(parents=True, exist_ok=True)
    for file, text in templates.items():
        (tdir / file).write_text(textwrap.dedent(text), encoding="utf-8")
    return data


def run_cli(root: Path, *args: str, expect: int = 0) -> Result:
    """Run `cardgen --root root ARGS...` in-process; fail with its output unless it exits with `expect`."""
    result = CliRunner().invoke(main, ["--root", str(root), *args])
    assert result.exit_code == expect, f"exit {result.exit_code}, expected {expect}:\n{result.output}"
    return result


@contextlib.contextmanager
def cardgen_running(root: Path, *args: str) -> Iterator[Callable[[], str]]:
    """`cardgen --root root ARGS...` (watch, serve) running as its own process; yields what it printed so far, and
    stops it at the end with Ctrl-C (then a kill), printing its output for pytest to show when the test fails."""
    log = root.parent / f"cardgen-{args[0]}-{time.monotonic_ns()}.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "cardgen", "--root", str(root), *args], stdout=out,
                                   stderr=subprocess.STDOUT)
        try:
            yield lambda: log.read_text(errors="replace")
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            print(log.read_text(errors="replace"))  # shown by pytest when the test fails


@contextlib.contextmanager
def cardgen_serving(root: Path, *args: str) -> Iterator[int]:
    """`cardgen serve ARGS...` on a free port of 127.0.0.1 (see `cardgen_running`); yields the port."""
    with cardgen_running(root, "serve", *args, "--port", "0", "--no-open") as printed:
        wait_for(lambda: "gallery at" in printed(), "serve to say where the gallery is")
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", printed())
        assert found, printed()
        yield int(found.group(1))


def http_get(port: int, path: str) -> tuple[int, bytes]:
    """GET `path` from 127.0.0.1:`port`: the status and the body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_for(condition: Callable[[], object], what: str, seconds: float = 120) -> None:
    """Wait until `condition()` holds; fail naming `what` after `seconds`. A file it reads that another process is
    replacing meanwhile (OSError, or JSON half there: ValueError) is not there yet."""
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(OSError, ValueError):
            if condition():
                return
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


def sample_game(base: Path, manifest: str, files: dict[str, str | bytes], face: str, back: str | None = None) -> Path:
    """A feature sample: a workspace under `base` holding one small game `s`; returns the workspace root."""
    root = make_workspace(base)
    write_game(root, "s", manifest, files, {"face.svg": face, "back.svg": back or SIMPLE_BACK})
    return root


SIMPLE_MANIFEST = """\
    title: Tiny
    version: 1
    font: Roboto Mono
    fields:
      power: int
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
"""

SIMPLE_FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_line(card.name, 80, 80, 600, 60) }}
      {{ text_box(card.text, 80, 300, 600, 400, 50, min_size=20) }}
    </svg>
"""

SIMPLE_BACK = """\
    <svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#334455"/></svg>
"""


@pytest.fixture
def tiny_game(workspace: Path) -> Path:
    """A workspace with one small game `tiny` (three cards); returns the workspace root."""
    write_game(workspace, "tiny", SIMPLE_MANIFEST, {"cards.csv": """\
        name,power,text,count
        Alpha,1,Fire & Ice <2> "quoted",2
        Beta,2,**Bold** and *italic* with :scrap: icon,1
        NA,3,Plain,3
    """}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    (workspace / "data" / "tiny" / "game.yaml").write_text(
        textwrap.dedent(SIMPLE_MANIFEST) + "icons:\n  scrap: hexagonal-nut\n")
    return workspace


def hold_drawing(monkeypatch: pytest.MonkeyPatch, out_root: Path, error: str | None = None,
                 only: str | None = None) -> Path:
    """Make the render workers (forked from this process, so patched too) wait before each card until a stage
    touches `<out_root>/go` (at most 20 s), and note in `<out_root>/seen-go` whether it came; with `error`, every
    card then fails to draw with it; with `only`, only the card whose SVG holds that text waits."""
    from cardgen.raster import render

    run_job = render.run_job

    def held(job: Any) -> Any:
        if only is not None and only not in job.drawing.svg:
            return run_job(job)
        for _ in range(400):
            if (out_root / "go").exists():
                break
            time.sleep(0.05)
        (out_root / "seen-go").write_text(str((out_root / "go").exists()))
        return (job.key, error) if error else run_job(job)

    held.__module__, held.__qualname__ = "cardgen.raster.render", "run_job"  # pickled by name to the workers
    monkeypatch.setattr(render, "run_job", held)
    return out_root / "seen-go"


# The hostile suite's copies of the example game (defined there, registered here for every test module).
from tests.example_games import built, copy  # noqa: E402,F401  (the example game of a module: its GAME)
from tests.hostile_example import built_example, example, fresh_example  # noqa: E402,F401


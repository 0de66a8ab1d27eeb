"""The example game as the tests use it: a copy of the repository's workspace, built once per test session
(so every copy starts with a warm cache), and the CLI run in that copy as a designer would run it."""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cardgen.commands.cli import main

REPO = Path(__file__).resolve().parent.parent

GAME = "scrapbots"


def copy_example(base: Path) -> Path:
    """A workspace under `base` holding copies of the example game's data and templates (the repository's fonts/
    and icons/ are cardgen's bundled set, not the example's own)."""
    root = base / "ws"
    for folder in ("data", "templates"):
        shutil.copytree(REPO / folder / GAME, root / folder / GAME)
    return root


def run(root: Path, *args: str, monkeypatch: pytest.MonkeyPatch | None = None) -> Result:
    """Run `cardgen ARGS` with the workspace as the current folder (relative --out paths resolve there)."""
    if monkeypatch is not None:
        monkeypatch.chdir(root)
        return CliRunner().invoke(main, list(args))
    return CliRunner().invoke(main, ["--root", str(root), *args])


def run_as_designer(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run `cardgen ARGS` in a process of its own with a designer's powers: as root (a container, CI), without
    the capabilities that let root write into read-only folders, so that `chmod a-w` means what it says."""
    command = [sys.executable, "-m", "cardgen", "--root", str(root), *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: read-only folders cannot be made")
        caps = "-dac_override,-dac_read_search,-fowner"
        command = [setpriv, "--bounding-set", caps, "--inh-caps", caps, *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def read_only(*folders: Path) -> None:
    """Take away write permission from folders and everything in them (as `chmod -R a-w`)."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o222)


def writable(*folders: Path) -> None:
    """Give back the owner's write permission (so that pytest can remove its temporary folders)."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o200)


def snapshot_files(folder: Path) -> dict[str, bytes]:
    """Every file under a folder with its bytes, by relative path (to show nothing was changed)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(result: Result, *words: str) -> None:
    """The command failed with a one-line error (no traceback) that says the given words."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if "error:" in line]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], errors[0]


@pytest.fixture(scope="session")
def built_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example workspace built once for the whole session through the CLI (`cardgen build`: cards, print
    PDF, Tabletop Simulator export, gallery). Read it, never change it: a test that writes takes `example`.

    Under pytest-xdist each worker is a session of its own: the first worker to get here builds into the
    folder all workers share, under a lock; the others wait and use that build.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # pytest-of-<user>/pytest-<n>/, the parent of every worker's own folder
    folder = shared / "built-example"
    with open(shared / "built-example.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            root = copy_example(folder)
            result = run(root, "build", "-j", "2")
            assert result.exit_code == 0, result.output
            (folder / "done").touch()
    return folder / "ws"


@pytest.fixture
def example(built_example: Path, tmp_path: Path) -> Path:
    """A private copy of the built example workspace (outputs and warm cache included) for one test."""
    return Path(shutil.copytree(built_example, tmp_path / "ws", symlinks=True))


@pytest.fixture
def fresh_example(tmp_path: Path) -> Path:
    """A copy of the example workspace that was never built."""
    return copy_example(tmp_path)

"""Killing cardgen: its render workers do not outlive it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from cardgen.core import interrupts
from tests.hostile_example import GAME

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc (Linux)")


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        if children.is_file():
            found |= {int(p) for p in children.read_text().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait() is missing


def test_render_workers_die_with_a_killed_build(fresh_example: Path) -> None:
    build = subprocess.Popen([sys.executable, "-m", "cardgen", "--root", str(fresh_example), "build", GAME,
                              "-j", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, workers = time.monotonic() + 120, set()
        while time.monotonic() < deadline and len(workers) < 2 and build.poll() is None:
            workers = _children(build.pid)  # the render workers (and a first run's code-map reader, which ends too)
            time.sleep(0.05)
        if len(workers) < 2:
            pytest.skip("the build finished before its workers could be seen")
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        if build.poll() is None:
            build.kill()


def test_ctrl_c_stops_the_build_and_its_workers_without_a_traceback(fresh_example: Path) -> None:
    """Ctrl-C reaches every process of the terminal's group, the render workers with the build: the build says it
    was interrupted in one line, the workers (started before the game is loaded, idle or setting up) end quietly."""
    build = subprocess.Popen([sys.executable, "-m", "cardgen", "--root", str(fresh_example), "build", GAME, "-j", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline, workers = time.monotonic() + 120, set()
        while time.monotonic() < deadline and len(workers) < 2 and build.poll() is None:
            workers = _children(build.pid)
            time.sleep(0.02)
        if len(workers) < 2:
            pytest.skip("the build finished before its workers could be seen")
        os.killpg(build.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        output, _ = build.communicate(timeout=60)
        assert build.returncode == 130, output
        assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
        assert "interrupted" in output
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        if build.poll() is None:
            build.kill()


@pytest.fixture
def python_sigint_handler() -> Iterator[None]:
    """Python's own SIGINT handler for the test; the handler, the unraisable hook and the note of Ctrl-C put back
    after it."""
    handler, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, handler)
    sys.unraisablehook = hook
    interrupts._noted.clear()  # the test's Ctrl-C: a later build of this process must not stop for it


def test_a_ctrl_c_python_loses_still_stops_the_build_before_its_outputs_are_swapped_in(
        tiny_game: Path, python_sigint_handler: None) -> None:
    """A Ctrl-C that comes while a weakref callback runs is lost by Python ("Exception ignored"); the build noted it
    and stops before the swap, leaving no output, as after any Ctrl-C."""
    import weakref

    from cardgen.build.build import BuildOptions, build_game
    from cardgen.core.interrupts import notice_interrupts
    from cardgen.outputs.stage import Stage

    class Thing:
        pass

    def ctrl_c_inside_a_callback(ref: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100_000):  # Python runs the handler within these: the KeyboardInterrupt is lost
            pass

    class LosingStage(Stage):
        name = "losing"

        def run(self, ctx):  # type: ignore[no-untyped-def]
            thing = Thing()
            keep = weakref.ref(thing, ctrl_c_inside_a_callback)
            del thing  # the callback runs now
            assert keep() is None
            return []

    notice_interrupts()
    with pytest.raises(KeyboardInterrupt):
        build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=1), None, [LosingStage()])
    assert not (tiny_game / "output" / "tiny").exists()


def test_a_ctrl_c_turned_into_another_error_is_still_an_interrupt(tiny_game: Path, python_sigint_handler: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that lands while Python makes a class (a manifest section's options model imported on loading) comes
    out as a RuntimeError from `__set_name__`: the command says it was interrupted and exits with 130, no traceback
    (seen once in CI's Ctrl-C test). An error with no Ctrl-C before it is a crash as before."""
    from click.testing import CliRunner

    import cardgen.svg.context
    from cardgen.commands.cli import main

    def ctrl_c_while_making_a_class(*args: object, **kwargs: object) -> None:
        class Proxy:
            def __set_name__(self, owner: type, name: str) -> None:
                interrupts._on_sigint(signal.SIGINT, None)  # the CLI's handler, as the signal runs it

        type("Spec", (), {"field": Proxy()})  # RuntimeError, caused by the KeyboardInterrupt

    monkeypatch.setattr(cardgen.svg.context, "load_game", ctrl_c_while_making_a_class)
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
    assert result.exit_code == 130 and "interrupted" in result.output, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)

    monkeypatch.setattr(cardgen.svg.context, "load_game", lambda *a, **k: {}["no Ctrl-C"])
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
    assert isinstance(result.exception, KeyError) and "interrupted" not in result.output

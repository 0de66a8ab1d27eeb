"""Killing cardgen: its render workers do not outlive it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
            workers = _children(build.pid)  # the render workers: the build starts no other process
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

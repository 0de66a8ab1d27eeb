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

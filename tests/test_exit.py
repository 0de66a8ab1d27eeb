"""How the `cardgen` command ends: what Python's own exit does that can be seen is done (atexit functions, the
output flushed, the exit code), the freeing of every object is skipped (`cli.run`), and a thread still running
is waited for."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hostile_example import GAME

# Run as a script, as the console script runs it: an object left for Python's exit to free says so, and so
# does an atexit function.
SCRIPT = """
import atexit, sys, threading, time
from cardgen.commands import cli

class Left:
    def __del__(self):
        sys.stderr.write("freed one by one\\n")

left = Left()
atexit.register(lambda: sys.stdout.write("atexit ran"))  # held in the buffer of a pipe
if sys.argv[1] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.5), sys.stderr.write("thread finished\\n"))).start()
sys.argv = ["cardgen", *sys.argv[2:]]
cli.run()
"""


def _cardgen(*args: str, thread: bool = False) -> subprocess.CompletedProcess[str]:
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", SCRIPT, "thread" if thread else "-", *args], capture_output=True,
                          text=True, timeout=300, env=buffered)


def test_a_build_ends_with_its_output_and_atexit_functions_and_without_freeing_objects(fresh_example: Path) -> None:
    done = _cardgen("--root", str(fresh_example), "build", GAME, "-j", "2")
    assert done.returncode == 0, done.stderr
    assert f"{GAME}: " in done.stdout and " drawn, " in done.stdout  # the report, flushed before the end
    assert done.stdout.endswith("atexit ran")  # run, and the output flushed after it
    assert "freed one by one" not in done.stderr
    record = json.loads((fresh_example / "output" / GAME / "build.json").read_text())
    assert record["stats"]["rendered"] > 0


def test_exit_codes_and_problem_lines_are_the_command_s(fresh_example: Path) -> None:
    failed = _cardgen("--root", str(fresh_example), "build", "no-such-game")
    assert failed.returncode == 1
    assert "no-such-game" in failed.stderr and "problem(s)" in failed.stderr
    assert "freed one by one" not in failed.stderr
    usage = _cardgen("--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr
    version = _cardgen("--version")
    assert version.returncode == 0 and "cardgen" in version.stdout


def test_a_thread_still_running_is_waited_for() -> None:
    done = _cardgen("--version", thread=True)
    assert done.returncode == 0
    assert "thread finished" in done.stderr


def test_the_pipeline_is_imported_without_collector_passes_and_frozen_after(tiny_game: Path) -> None:
    """The objects importing makes live as long as the process: a build imports its pipeline with the garbage
    collector off (no pass runs while `cardgen.build.build` is being imported) and freezes them after, so that
    no later pass walks them; the collector is on again for the build itself, its youngest generation collected
    every `YOUNG_OBJECTS` objects (a few passes for this game, not ~100)."""
    code = """
import gc, sys
from pathlib import Path
from cardgen.commands.build_cmd import build_one

importing, after = [], []

def note(phase, info):
    module = sys.modules.get("cardgen.build.build")
    if phase == "start":
        building = getattr(getattr(module, "__spec__", None), "_initializing", False)
        (importing if building else after if module is not None else []).append(1)

gc.callbacks.append(note)
build_one(Path(sys.argv[1]), "tiny", Path(sys.argv[1]) / "output", 1)
print(len(importing), len(after), gc.isenabled(), gc.get_freeze_count() > 20_000)
"""
    result = subprocess.run([sys.executable, "-c", code, str(tiny_game)], capture_output=True, text=True, check=True)
    passes_importing, passes_after, enabled, frozen = result.stdout.splitlines()[-1].split()
    assert (passes_importing, enabled, frozen) == ("0", "True", "True") and 0 < int(passes_after) < 20, result.stdout

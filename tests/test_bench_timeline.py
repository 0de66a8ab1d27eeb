"""bench/timeline.py: a command's phases from every process, as the bench sections measure them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_timeline_shows_the_builds_phases_and_the_workers_jobs_from_their_own_processes(tiny_game: Path,
                                                                                           tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "timeline.py"), "--span",
                           "cardgen.outputs.tts.pictures:Cell.nothing", "--", "--root", str(tiny_game), "build",
                           "tiny", "--out", str(tmp_path / "out"), "-j", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "tiny: 3 cards" in done.stdout
    timeline, _, totals = done.stderr.partition("\ncalls  cpu ms  function")
    spans = [line.split() for line in timeline.splitlines() if line[:7].strip().isdigit()]
    builds = [span for span in spans if span[5] == "build.build:build_game"]
    jobs = [span for span in spans if span[5] == "raster.render:run_job"]
    assert len(builds) == 1 and float(builds[0][2]) <= float(builds[0][3])
    assert len(jobs) == 4 and all(job[0] != builds[0][0] for job in jobs)  # 3 faces and the back, in the workers
    assert [float(span[2]) for span in spans] == sorted(float(span[2]) for span in spans)
    assert "    4 " in next(line for line in totals.splitlines() if line.endswith("raster.render:run_job"))
    assert "not found, not wrapped: cardgen.outputs.tts.pictures:Cell.nothing" in totals

"""`cardgen simulate`: the designer's simulation run in workers with seeded runs, measures with their 95%
intervals against the targets, its errors as lines, its time limit; validate and build never run it."""
from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import pytest

from cardgen.playtest.simulate import wilson
from tests.conftest import REPO, SIMPLE_BACK, SIMPLE_FACE, run_cli, write_game

MANIFEST = """\
    title: Coins
    font: Roboto Mono
    decks:
      coins:
        source: coins.csv
        face: face.svg
        back: back.svg
        fields: {{p: float}}
    simulations:
      flips:
        module: {module}
        runs: {runs}
        seed: 7
        time_limit: {limit}
        targets:
          heads: {{value: {target}, tolerance: 0.05, min_runs: 100}}
          score: {{at_least: 0}}
"""

MODULE = """\
from pathlib import Path

Path(__file__).with_name("imported").touch()  # what the test looks for: this module was run


def simulate(cards, rng):
    p = cards["coins"][0]["p"]
    return {"heads": rng.random() < p, "score": [rng.randint(1, 6), rng.randint(1, 6)]}
"""


def coin_game(root: Path, module: str = MODULE, target: float = 0.3, runs: int = 400, limit: float = 60,
              module_name: str = "sim.py") -> Path:
    data = write_game(root, "c", MANIFEST.format(module=module_name, runs=runs, limit=limit, target=target),
                      {"coins.csv": "name,p,text\nCoin,0.3,Flip\n", "sim.py": module},
                      {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    return data


def expected(runs: int, seed: int = 7, p: float = 0.3) -> tuple[int, list[int]]:
    """The same runs computed here: heads and the scores, run i seeded '<seed>/<i>'."""
    heads, scores = 0, []
    for run in range(runs):
        rng = random.Random(f"{seed}/{run}")
        heads += rng.random() < p
        scores += [rng.randint(1, 6), rng.randint(1, 6)]
    return heads, scores


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, Table I: 81/263 -> 0.2553-0.3662; 0/10 -> 0-0.2775
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=5e-5)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_measures_and_intervals_are_the_seeded_runs(workspace: Path, jobs: str) -> None:
    coin_game(workspace)
    report = json.loads(run_cli(workspace, "simulate", "c", "-j", jobs, "--format", "json").output)[0]
    heads, scores = expected(400)
    measures = report["measures"]
    assert (measures["heads"]["kind"], measures["heads"]["n"]) == ("rate", 400)
    assert measures["heads"]["estimate"] == heads / 400
    z = 1.959963984540054
    p = heads / 400
    centre, half = (p + z * z / 800) / (1 + z * z / 400), z / (1 + z * z / 400) * math.sqrt(p * (1 - p) / 400
                                                                                          + z * z / 640000)
    assert measures["heads"]["ci95"] == pytest.approx([centre - half, centre + half])
    mean = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / (len(scores) - 1))
    assert (measures["score"]["kind"], measures["score"]["n"]) == ("mean", 800)
    assert measures["score"]["ci95"] == pytest.approx([mean - z * sd / math.sqrt(800), mean + z * sd / math.sqrt(800)])
    assert measures["heads"]["met"] and report["missed"] == []


def test_a_missed_target_is_a_finding_at_its_line(workspace: Path) -> None:
    coin_game(workspace, target=0.9)
    result = run_cli(workspace, "simulate", "c", "-j", "1", expect=1)
    lines = (workspace / "data" / "c" / "game.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("heads:"))
    assert f"data/c/game.yaml:{line}: error: simulation flips: heads misses its target: " in result.output
    assert "is below 0.9 +/- 0.05" in result.output and "MISSED" in result.output
    assert run_cli(workspace, "simulate", "c", "--runs", "50", "-j", "1", expect=1).output.count("fewer than the 100")


def test_validate_and_build_never_run_the_simulation(workspace: Path) -> None:
    data = coin_game(workspace)
    run_cli(workspace, "validate", "c")
    run_cli(workspace, "build", "c", "-j", "1")
    assert not (data / "imported").exists()
    run_cli(workspace, "simulate", "c", "-j", "1")
    assert (data / "imported").exists()


def test_an_error_in_the_designers_code_is_one_line_at_its_line(workspace: Path) -> None:
    broken = MODULE.replace("return {", "return 1 / 0 if rng.random() < 0.5 else {")
    coin_game(workspace, broken)
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "1 / 0" in text)
    result = run_cli(workspace, "simulate", "c", "-j", "1", expect=1)
    assert f"data/c/sim.py:{line}: error: simulations: flips: ZeroDivisionError: division by zero (run " \
        in result.output
    assert "Traceback" not in result.output
    coin_game(workspace, MODULE.replace('"score": [', '"score": ["x", '))
    assert "measure 'score' has the value 'x'" in run_cli(workspace, "simulate", "c", "-j", "1", expect=1).output


def test_the_time_limit_stops_the_workers(workspace: Path) -> None:
    coin_game(workspace, MODULE.replace("    p = ", "    while True:\n        pass\n    p = "), limit=2)
    started = time.monotonic()
    result = run_cli(workspace, "simulate", "c", "-j", "2", expect=1)
    assert "stopped after its time limit of 2 s" in result.output
    assert time.monotonic() - started < 30


def test_a_module_outside_the_game_folder_is_refused_before_running(workspace: Path) -> None:
    coin_game(workspace, module_name="../elsewhere.py")
    (workspace / "data" / "elsewhere.py").write_text(MODULE)
    result = run_cli(workspace, "simulate", "c", expect=1)
    assert "module '../elsewhere.py' is not a .py file inside data/c/" in result.output
    assert not (workspace / "data" / "imported").exists()


def test_a_function_with_a_values_parameter_is_given_game_yamls_values(workspace: Path) -> None:
    # Before: a simulation had only the cards; Battle Builder's wrote the rulebook's numbers in again
    module = MODULE.replace('def simulate(cards, rng):\n    p = cards["coins"][0]["p"]',
                            'def simulate(cards, rng, values):\n    p = values["heads_rate"]')
    manifest = coin_game(workspace, module, target=0.6) / "game.yaml"
    manifest.write_text(manifest.read_text() + "values:\n  heads_rate: 0.6\n")
    report = json.loads(run_cli(workspace, "simulate", "c", "-j", "2", "--format", "json").output)[0]
    assert report["measures"]["heads"]["estimate"] == expected(400, p=0.6)[0] / 400


def test_battle_builder_ships_a_simulation_of_its_monster_battles() -> None:
    result = run_cli(REPO, "simulate", "battle-builder", "--runs", "40", "-j", "1", "--format", "json", expect=1)
    report = json.loads(result.output[:result.output.rindex("]") + 1])[0]
    measures = report["measures"]
    assert {"win_easy", "win_medium", "win_hard", "tokens_per_battle"} <= set(measures)
    assert sum(measures[f"win_{d}"]["n"] for d in ("easy", "medium", "hard")) == 40 * 9  # nine battles a game
    assert {m["measure"] for m in report["missed"]} == {"win_easy", "win_medium", "win_hard", "tokens_per_battle"}


def test_too_many_observations_stop_in_the_worker(workspace: Path) -> None:
    coin_game(workspace, MODULE.replace("    p = ", "    return {'big': [0] * 10_000_001}\n    p = "), runs=3)
    result = run_cli(workspace, "simulate", "c", "-j", "1", expect=1)
    assert "measure 'big' has more than 10,000,000 observations; give it fewer runs" in result.output

"""Balance simulations (`cardgen simulate GAME`): the designer's own Python, run in worker processes.

A simulation of game.yaml's `simulations:` names a module in data/<game>/ and a function; cardgen calls it once
per run with the game's typed cards and a seeded `random.Random` (and game.yaml's `values:`, the rulebook's
numbers, when the function has a parameter `values`), and it returns named measures (a number, a yes/no, or a list
of them: one observation each). Each measure is reported with a 95% confidence interval (Wilson's
for a rate: a measure whose every observation is yes/no) and compared with its target. Run `i` of a simulation
has the seed "<seed>/<i>", so a report is the same with any number of workers.

This is the only place cardgen runs the designer's code, and only this command imports this module.
"""
from __future__ import annotations

import importlib.util
import inspect
import math
import multiprocessing
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.load.data import load_cards
from cardgen.load.manifest import Game
from cardgen.options.simulations import SimulationSpec, TargetSpec

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
MAX_OBSERVATIONS = 10_000_000  # of one measure over all runs: a list a run returns is kept in memory
CHUNKS_PER_WORKER = 4  # runs are handed out in this many chunks per worker, so a slow chunk holds up little


@dataclass
class Measure:
    """One measure over every run: its observations, estimate and 95% interval."""

    name: str
    observations: list[float]
    rate: bool  # every observation was yes/no

    @property
    def n(self) -> int:
        """How many observations there are."""
        return len(self.observations)

    @property
    def mean(self) -> float:
        """The estimate: the rate or the mean."""
        return sum(self.observations) / self.n

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% confidence interval: Wilson's score interval for a rate, mean +/- z s / sqrt(n) otherwise."""
        return wilson(sum(self.observations), self.n) if self.rate else mean_interval(self.observations)


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of a rate of `successes` in `n` trials."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: list[float], z: float = Z95) -> tuple[float, float]:
    """mean +/- z s / sqrt(n) (s the sample standard deviation; a single value is its own interval)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean
    half = z * math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
    return mean - half, mean + half


@dataclass
class Verdict:
    """A measure against its target: met, missed or cannot tell (too few runs, or the measure never came)."""

    measure: str
    target: TargetSpec
    met: bool
    why: str


@dataclass
class Report:
    """The result of one simulation."""

    name: str
    runs: int
    seconds: float
    seed: int
    measures: dict[str, Measure] = field(default_factory=dict)
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def missed(self) -> list[Verdict]:
        """The targets not met: the findings."""
        return [v for v in self.verdicts if not v.met]


def judge(name: str, target: TargetSpec, measure: Measure | None, runs: int) -> Verdict:
    """Whether a measure meets its target (on its estimate; the interval is in the report beside it)."""
    if measure is None:
        return Verdict(name, target, False, "the simulation never returned this measure")
    if runs < target.min_runs:
        return Verdict(name, target, False, f"{runs} runs, fewer than the {target.min_runs} its target asks for")
    estimate = measure.mean
    if target.value is not None and abs(estimate - target.value) > target.tolerance:
        side = "above" if estimate > target.value else "below"
        return Verdict(name, target, False, f"{estimate:.3f} is {side} {target.value:g} +/- {target.tolerance:g}")
    if target.at_least is not None and estimate < target.at_least:
        return Verdict(name, target, False, f"{estimate:.3f} is below the least {target.at_least:g}")
    if target.at_most is not None and estimate > target.at_most:
        return Verdict(name, target, False, f"{estimate:.3f} is above the most {target.at_most:g}")
    return Verdict(name, target, True, "met")


def module_path(game: Game, name: str, spec: SimulationSpec) -> Path:
    """The simulation's module: a .py file inside data/<game>/ (checked before anything runs)."""
    where = (relative(game.manifest_path, game.root), game.line("simulations", name, "module"))
    path = (game.data_dir / spec.module).resolve()
    if path.suffix != ".py" or not path.is_relative_to(game.data_dir.resolve()):
        raise CardgenError(f"simulations: {name}: module '{spec.module}' is not a .py file inside data/{game.name}/",
                           file=where[0], row=where[1], column="module")
    if not path.is_file():
        raise CardgenError(f"simulations: {name}: module '{spec.module}' does not exist in data/{game.name}/",
                           file=where[0], row=where[1], column="module")
    return path


def typed_cards(game: Game) -> dict[str, list[dict[str, Any]]]:
    """The cards a simulation is given: deck -> cards, each its typed fields with id, name and copies."""
    decks: dict[str, list[dict[str, Any]]] = {name: [] for name in game.spec.decks}
    for card in load_cards(game):
        decks[card.deck].append({**card.fields, "id": card.id, "name": card.name, "copies": card.copies})
    return decks


def run_simulation(game: Game, name: str, runs: int | None = None, jobs: int = 1) -> Report:
    """Run one simulation of the game in `jobs` worker processes, within its time limit; judge its targets."""
    spec = game.spec.simulations[name]
    path = module_path(game, name, spec)
    runs = runs or spec.runs
    cards = typed_cards(game)
    jobs = max(1, min(jobs, runs))
    size = max(1, math.ceil(runs / (jobs * CHUNKS_PER_WORKER)))
    values = dict(game.spec.values)
    chunks = [(str(path), spec.function, cards, values, spec.seed, start, min(size, runs - start))
              for start in range(0, runs, size)]
    started = time.monotonic()
    shown_as = relative(path, game.root)
    results = _in_workers(chunks, jobs, spec.time_limit, f"simulations: {name}", shown_as)
    report = Report(name, runs, time.monotonic() - started, spec.seed)
    report.measures = _measures(results, shown_as)
    report.verdicts = [judge(m, t, report.measures.get(m), runs) for m, t in spec.targets.items()]
    return report


def _in_workers(chunks: list[tuple], jobs: int, limit: float, what: str, shown_as: str) -> list[dict[str, list]]:
    """Each chunk's observations, from a pool of `jobs` processes stopped after `limit` seconds."""
    # spawn: a fresh interpreter per worker, which imports only this module and the designer's (no forked copy
    # of the command's state); a worker that runs past the limit is killed with the pool.
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        pending = pool.map_async(_run_chunk, chunks)
        try:
            answers = pending.get(timeout=limit)
        except multiprocessing.TimeoutError:
            pool.terminate()
            raise CardgenError(f"{what}: stopped after its time limit of {limit:g} s; give it fewer `runs:` or "
                               "more `time_limit:` in game.yaml (or --runs)") from None
    for answer in answers:
        if isinstance(answer, tuple):
            line, message = answer
            raise CardgenError(Problem(f"{what}: {message}", file=shown_as, row=line))
    return [a for a in answers if isinstance(a, dict)]


def _load_function(path: str, function: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(f"cardgen_simulation_{Path(path).stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look a class's module up there
    spec.loader.exec_module(module)
    found = getattr(module, function, None)
    if not callable(found):
        raise LookupError(f"{Path(path).name} has no function '{function}' (set `function:` in game.yaml)")
    return found


def _run_chunk(chunk: tuple) -> dict[str, list] | tuple[int | None, str]:
    """In a worker: runs start .. start+count-1 of a simulation; their observations by measure, or the error of
    the designer's code: the line of its module and one line saying what and in which run (and its seed)."""
    path, function, cards, values, seed, start, count = chunk
    observations: dict[str, list] = {}
    run = start
    try:
        simulate = _load_function(path, function)
        # game.yaml's values for a function that asks for them: one written as simulate(cards, rng) still runs
        asked = {"values": values} if "values" in inspect.signature(simulate).parameters else {}
        for run in range(start, start + count):
            measures = simulate(cards, random.Random(f"{seed}/{run}"), **asked)
            if not isinstance(measures, dict):
                return None, f"run {run}: {function}() returned {type(measures).__name__}, not a dict of measures"
            for key, value in measures.items():
                kept = observations.setdefault(str(key), [])
                kept.extend(value if isinstance(value, list) else [value])
                if len(kept) > MAX_OBSERVATIONS:  # in the worker, before its memory runs out
                    return None, f"measure '{key}' has more than {MAX_OBSERVATIONS:,} observations; give it fewer runs"
    except Exception as exc:  # the designer's code: say where, in one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        return frames[-1].lineno if frames else None, f"{type(exc).__name__}: {exc} (run {run}, seed '{seed}/{run}')"
    return observations


def _measures(results: list[dict[str, list]], shown_as: str) -> dict[str, Measure]:
    """The observations of every chunk joined by measure, each checked to be numbers (yes/no counts as 1/0)."""
    joined: dict[str, list] = {}
    for result in results:
        for key, values in result.items():
            joined.setdefault(key, []).extend(values)
    measures = {}
    for key, values in joined.items():
        bad = next((v for v in values if isinstance(v, str) or not isinstance(v, (int, float))
                    or not math.isfinite(v)), None) if values else "nothing"
        if bad is not None:
            raise CardgenError(f"measure '{key}' has the value {bad!r}; a measure is a number, yes/no or a list "
                               "of them", file=shown_as)
        if len(values) > MAX_OBSERVATIONS:
            raise CardgenError(f"measure '{key}' has {len(values):,} observations, more than {MAX_OBSERVATIONS:,}; "
                               "give it fewer runs", file=shown_as)
        measures[key] = Measure(key, [float(v) for v in values], all(isinstance(v, bool) for v in values))
    return dict(sorted(measures.items()))

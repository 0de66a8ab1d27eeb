"""`cardgen simulate GAME`: run the game's balance simulations (game.yaml's `simulations:`) and report each measure
with its confidence interval against the rulebook's targets; a missed target is a finding (exit code 1).

The only command that runs the designer's own Python (see `cardgen.playtest.simulate`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cardgen.commands import complete_games
from cardgen.core.errors import CardgenError, Problem, relative

if TYPE_CHECKING:
    from cardgen.options.simulations import TargetSpec
    from cardgen.playtest.simulate import Report


@click.command("simulate")
@click.argument("game", shell_complete=complete_games)
@click.argument("names", nargs=-1)
@click.option("--runs", type=click.IntRange(1, 1_000_000), default=None,
              help="Runs of each simulation (default: its `runs:` in game.yaml).")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Worker processes running the simulation.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text to read; json for a script.")
@click.pass_obj
def simulate_command(root: Path, game: str, names: tuple[str, ...], runs: int | None, jobs: int,
                     output_format: str) -> None:
    """Run GAME's simulations (NAMES, or all): the designer's module in data/GAME/ called once per run with the
    typed cards and a seeded random generator. Each measure is reported with a 95% confidence interval; a target
    it misses is a finding and the exit code is 1."""
    from cardgen.load.manifest import load_game
    from cardgen.playtest.simulate import run_simulation

    loaded = load_game(root, game)
    chosen = list(names) or list(loaded.spec.simulations)
    unknown = [n for n in chosen if n not in loaded.spec.simulations]
    if not chosen or unknown:
        known = ", ".join(loaded.spec.simulations) or "none"
        raise CardgenError(f"{game}: no simulation {', '.join(unknown) or 'in game.yaml'} (its simulations: "
                           f"{known}); declare one under `simulations:` in game.yaml",
                           file=relative(loaded.manifest_path, root))
    reports = [run_simulation(loaded, name, runs, jobs) for name in chosen]
    click.echo(json.dumps([_as_json(r) for r in reports], indent=2) if output_format == "json"
               else "\n".join(_as_text(game, r) for r in reports))
    findings = [Problem(f"simulation {r.name}: {v.measure} misses its target: {v.why}"
                        + (f" ({v.target.note})" if v.target.note else ""),
                        file=relative(loaded.manifest_path, root),
                        row=loaded.line("simulations", r.name, "targets", v.measure), rule="simulation-target")
                for r in reports for v in r.missed]
    if findings:
        raise CardgenError(findings)


def _as_text(game: str, report: Report) -> str:
    lines = [f"{game}: {report.name}, {report.runs:,} runs in {report.seconds:.1f} s (seed {report.seed})"]
    width = max((len(m) for m in report.measures), default=0)
    verdicts = {v.measure: v for v in report.verdicts}
    for name, measure in report.measures.items():
        low, high = measure.interval
        kind = "rate" if measure.rate else "mean"
        verdict = verdicts.get(name)
        target = f"  target {_target(verdict.target)}: {'met' if verdict.met else 'MISSED'}" if verdict else ""
        lines.append(f"  {name:<{width}}  {kind} {measure.mean:8.3f}  95% CI {low:.3f}-{high:.3f}  "
                     f"n={measure.n:,}{target}")
    return "\n".join(lines)


def _target(target: TargetSpec) -> str:
    parts = []
    if target.value is not None:
        parts.append(f"{target.value:g} +/- {target.tolerance:g}")
    if target.at_least is not None:
        parts.append(f">= {target.at_least:g}")
    if target.at_most is not None:
        parts.append(f"<= {target.at_most:g}")
    return " and ".join(parts)


def _as_json(report: Report) -> dict:
    verdicts = {v.measure: v for v in report.verdicts}
    return {"simulation": report.name, "runs": report.runs, "seed": report.seed, "seconds": round(report.seconds, 3),
            "measures": {name: {"kind": "rate" if m.rate else "mean", "estimate": m.mean, "n": m.n,
                                "ci95": list(m.interval),
                                **({"target": verdicts[name].target.model_dump(exclude_none=True),
                                    "met": verdicts[name].met} if name in verdicts else {})}
                         for name, m in report.measures.items()},
            "missed": [{"measure": v.measure, "why": v.why} for v in report.missed]}

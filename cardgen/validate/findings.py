"""Findings of `cardgen validate` (a Finding is an errors.Problem) and how they are reported."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, replace

from cardgen.core.errors import Problem

_FAMILY = re.compile(r"font family '([^']*)'")


def unique(*groups: list[Problem]) -> list[Problem]:
    """Findings of several lists in order, each once; a missing font family once, wherever it is named."""
    kept: dict[Problem, None] = {}
    families: set[str] = set()
    for problem in (p for group in groups for p in group):
        family = _FAMILY.search(problem.message) if problem.rule == "missing-font" else None
        if family is not None:
            if family.group(1).lower() in families:
                continue
            families.add(family.group(1).lower())
        kept.setdefault(problem)
    return list(kept)


def errors_in(findings: list[Problem]) -> list[Problem]:
    """The findings that stop a build."""
    return [p for p in findings if p.severity == "error"]


def as_error(problem: Problem) -> Problem:
    """The same finding, raised to an error."""
    return replace(problem, severity="error")


def summary(game: str, findings: list[Problem]) -> str:
    """One line saying how many errors and warnings a game has."""
    errors = len(errors_in(findings))
    warnings = len(findings) - errors
    verdict = "ok" if not errors else "fix the errors before building"
    return f"{game}: {errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)} ({verdict})"


def format_json(results: dict[str, list[Problem]]) -> str:
    """The findings of each game as JSON, for editors and other tools."""
    games = {game: {"errors": len(errors_in(findings)), "warnings": len(findings) - len(errors_in(findings)),
                    "findings": [asdict(p) for p in findings]} for game, findings in results.items()}
    return json.dumps({"games": games, "ok": not any(errors_in(f) for f in results.values())},
                      indent=2, ensure_ascii=False)

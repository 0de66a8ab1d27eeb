"""`cardgen validate`: every problem of a game's data, found and explained, in five layers.

1. manifest (game.yaml schema), 2. data schema, 3. references, 4. game rules, 5. layout.
A broken manifest stops at layer 1; the other layers all run and report together.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cardgen.data import GameData, read_game_data
from cardgen.errors import CardgenError, Problem
from cardgen.manifest import load_game
from cardgen.templates import SVGCache
from cardgen.validate.findings import errors_in, unique
from cardgen.validate.layout import LayoutChecker
from cardgen.validate.references import ReferenceChecker
from cardgen.validate.rules import RuleChecker
from cardgen.validate.schema import check_data

__all__ = ["validate_game", "check_output_folder", "validate_before_build"]


def validate_game(root: Path, name: str, layout: bool = True, rendered: dict | None = None,
                  out_root: Path | None = None) -> list[Problem]:
    """Every finding of one game, errors and warnings, layer by layer (layout can be skipped: it renders).

    `rendered`, when given, receives the SVG of every face and back the layout layer rendered,
    keyed by (template, deck, card id or None), so that a build need not render them again;
    `out_root`, when given, holds the SVGs rendered by earlier builds (see `SVGCache`).
    """
    try:
        game = load_game(root, name)
    except CardgenError as exc:
        return exc.problems
    data = read_game_data(game)
    findings = check_data(game, data)
    references = ReferenceChecker(game, data)
    findings += references.check()
    findings += RuleChecker(game, data, _bad_rows(findings, data)).check()
    if layout:
        cache = SVGCache(out_root, game) if out_root is not None else None
        findings += LayoutChecker(game, rendered, cache).check(data.cards, _bad_rows(findings, data),
                                                               references.failed_templates)
    return unique(findings)


def _bad_rows(findings: list[Problem], data: GameData) -> set[tuple[str, int]]:
    """The (file, row) of every card with an error; an error at a YAML key's line counts for its card."""
    card_row = {(row.file, line): row.line for table in data.tables.values() for row in table.rows
                for line in row.key_lines.values()}
    return {(p.file, card_row.get((p.file, p.row), p.row)) for p in errors_in(findings)
            if p.file is not None and p.row is not None}


def check_output_folder(folder: Path) -> None:
    """Make sure outputs can be written under a folder before any work is done; raise CardgenError if not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".cardgen-write-test-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise CardgenError(f"cannot write to the output folder: {exc.strerror or exc}; choose another with "
                           "--out or fix its permissions", file=str(folder)) from None


def validate_before_build(root: Path, name: str, out_root: Path, force: bool,
                          rendered: dict | None = None) -> list[Problem]:
    """The first step of a build: validate (errors stop it unless forced) and check the output folder.

    Returns the findings to show with the build's result.
    """
    check_output_folder(out_root)
    findings = validate_game(root, name, rendered=rendered, out_root=out_root)
    if errors_in(findings) and not force:
        raise CardgenError(findings)
    return findings

"""`cardgen validate`: every problem of a game's data, found and explained, in five layers.

1. manifest (game.yaml schema), 2. data schema, 3. references, 4. game rules, 5. layout.
A broken manifest stops at layer 1; the other layers all run and report together.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cardgen.core.errors import CardgenError, Problem
from cardgen.load.data import GameData
from cardgen.svg.context import BuildContext
from cardgen.validate.findings import errors_in, unique
from cardgen.validate.layout import Helpers, LayoutChecker
from cardgen.validate.references import ReferenceChecker
from cardgen.validate.rules import RuleChecker
from cardgen.validate.schema import check_data

__all__ = ["validate_game", "validate_context", "check_output_folder"]


def validate_game(root: Path, name: str, layout: bool = True, out_root: Path | None = None,
                  lang: str | None = None) -> list[Problem]:
    """Every finding of one game, errors and warnings, layer by layer (layout can be skipped: it renders), in
    one of its languages (None: its own).

    `out_root`, when given, holds the SVGs rendered by earlier builds (see `SVGCache`).
    """
    try:
        context = BuildContext.load(root, name, out_root, lang=lang)
    except CardgenError as exc:
        return exc.problems
    return validate_context(context, layout)


def validate_context(context: BuildContext, layout: bool = True, helpers: Helpers | None = None,
                     keep_renders: bool = True) -> list[Problem]:
    """Every finding of a loaded game (layers 2 to 5); the SVGs the layout layer renders stay in its renderer.

    `helpers` (a build's render workers, idle meanwhile) share the renders of a large game (see `LayoutChecker`).
    Without `keep_renders` the renderer's cache is left for the caller to save (a build saves it once the drawing
    has begun)."""
    findings = check_data(context.game, context.data)
    references = ReferenceChecker(context)
    findings += references.check()
    if not context.data.unreadable and not any(p.row is None or p.rule == "filter"
                                                for p in errors_in(context.data.problems)):
        # with a data file unreadable or a deck's filter broken, the game rules would only report the cards
        # that did not load: one problem, one error
        findings += RuleChecker(context.game, context.data, _bad_rows(findings, context.data)).check()
    if layout:
        layouts = LayoutChecker(context, helpers)
        findings += layouts.check(_bad_rows(findings, context.data), references.failed_templates, references.place,
                                  keep_renders)
    return unique(findings)


def _bad_rows(findings: list[Problem], data: GameData) -> set[tuple[str, int]]:
    """The (file, row) of every card with an error; an error at a YAML key's line counts for its card."""
    if not any(p.file is not None and p.row is not None for p in errors_in(findings)):
        return set()  # (most edits: the look-up of every row's lines was ~2 ms at 10,000 cards, twice a check)
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

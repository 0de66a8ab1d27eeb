"""Layer 2, the data schema: what reading and typing found, plus checks on the raw cells.

Type, enum, range, required and duplicate-id problems come from `cardgen.load.data` (a build finds the
same ones); this layer adds what a build lets through: empty files, stray spaces, unprintable characters.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field

from cardgen.core.errors import Problem
from cardgen.core.storage import builds_again
from cardgen.load.data import GameData, Row, RowsMade, Table
from cardgen.load.manifest import Game

# Control characters cannot be printed and are not allowed in SVG (XML); tab and newlines are fine.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
MAX_CELL_CHARS = 10_000  # far more than any card holds; longer text is a mistake (or slows layout to a crawl)


def check_data(game: Game, data: GameData) -> list[Problem]:
    """Problems of the data files and cards beyond what loading reports."""
    findings = list(data.problems)
    for file, table in data.tables.items():
        decks = [game.spec.decks[d] for d in data.decks_of[file]]
        findings += _check_table(table, {d.name for d in decks} | {d.id for d in decks if d.id})
    # worded as the build words it, so a build shows it once
    findings += [Problem(f"card '{card.id}' has 0 copies; it is left out of the build", file=card.source_file,
                         row=card.source_row, severity="warning") for card in data.no_copies]
    return findings


def _check_table(table: Table, name_columns: set[str]) -> list[Problem]:
    findings = []
    if not table.rows:
        findings.append(Problem("the file has no cards: a header but no data rows", file=table.file,
                                row=table.header_line, severity="warning", rule="empty-file"))
    key = (table.file, *sorted(name_columns))
    if not builds_again():
        return findings + [finding for row in table.rows for finding in _check_row(row, name_columns)]
    kept = _CHECKED.pop(key, None) or CheckedRows()
    before = kept.update(table.rows, lambda places: [_check_row(table.rows[i], name_columns) for i in places],
                         table.edited)
    if before is None or any(old or kept.made[place] for place, old in before.items()):
        kept.findings = list(itertools.chain.from_iterable(kept.made))
    _CHECKED[key] = kept
    while len(_CHECKED) > _CHECKED_TABLES:
        del _CHECKED[next(iter(_CHECKED))]
    return findings + kept.findings


@dataclass
class CheckedRows(RowsMade[list[Problem]]):
    """A table's rows as last checked (see `RowsMade`), and their findings in order."""

    findings: list[Problem] = field(default_factory=list)


# In a process that builds again, the findings of each table's rows as last checked, by the table and its name
# columns (see `RowsMade`): an unchanged row is not checked again.
_CHECKED: dict[tuple, CheckedRows] = {}
_CHECKED_TABLES = 16


def _check_row(row: Row, name_columns: set[str]) -> list[Problem]:
    """The findings of one row's cells: too long, unprintable characters, spaces around a name."""
    findings = []
    for column, text in row.values.items():
        if len(text) > MAX_CELL_CHARS:
            findings.append(Problem(f"the cell holds {len(text):,} characters; at most {MAX_CELL_CHARS:,} "
                                    "fit on a card", file=row.file, row=row.line, column=column,
                                    rule="too-long"))
    if _CONTROL.search("".join(row.values.values())):
        for column, text in row.values.items():
            bad = _CONTROL.search(text)
            if bad:
                char = bad.group()
                findings.append(Problem(f"the cell holds the control character U+{ord(char):04X} "
                                        f"({unicodedata.name(char, 'unnamed')}), which cannot be printed; "
                                        "remove it", file=row.file, row=row.line, column=column,
                                        rule="control-character"))
    for column in name_columns:
        text = row.values.get(column, "")
        if text != text.strip():
            findings.append(Problem(f"'{text}' has spaces at its start or end; they are removed",
                                    file=row.file, row=row.line, column=column, severity="warning",
                                    rule="spaces"))
    return findings

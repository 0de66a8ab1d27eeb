"""LibreOffice Calc (.ods) workbooks: one sheet's rows read as a stream from the zip's content.xml.

Read with defusedxml (entity declarations refused) and bounded as XLSX workbooks are: what the zip unpacks to before
any part is parsed, then rows and columns as they are read. A run of repeated empty rows or cells (LibreOffice writes
the rest of a sheet as one row repeated a million times) costs nothing; repeated cells that hold something count.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from cardgen.core.errors import CardgenError
from cardgen.core.storage import read_noted

if TYPE_CHECKING:
    from cardgen.load.data import Table
    from cardgen.load.manifest import DataSource

_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
# Where a typed cell keeps its value; a text cell's value is its paragraphs.
_VALUE_OF = {"float": "value", "percentage": "value", "currency": "value", "date": "date-value",
             "time": "time-value", "boolean": "boolean-value"}


def read_ods(path: Path, shown_as: str, source: DataSource) -> Table:
    """One sheet of an ODS workbook (`sheet:` by name or number counting from 1, else the first)."""
    from cardgen.load.data import _measure_workbook, cells_table

    data = io.BytesIO(read_noted(path))  # (read once, and noted: see `storage.noting_reads`)
    _measure_workbook(data, shown_as)
    try:
        with zipfile.ZipFile(data) as book, book.open("content.xml") as content:
            return cells_table(_sheet_rows(content, source.sheet, shown_as), shown_as)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise CardgenError(f"cannot open the workbook: not an ODS file ({exc})", file=shown_as,
                           rule="damaged-file") from None


def _sheet_rows(content: Any, sheet: str | int | None, shown_as: str) -> Iterator[tuple[int, list[str]]]:
    """The rows of the chosen sheet that hold something, by row number; an error naming the sheets there are when
    the chosen one is not there."""
    from defusedxml.ElementTree import iterparse

    from cardgen.load.data import MAX_ROWS, SHEET_ROWS

    names: list[str] = []
    reading = False
    number = filled = 0
    for event, element in iterparse(content, events=("start", "end")):
        if element.tag == f"{_TABLE}table" and event == "start":
            names.append(element.get(f"{_TABLE}name", ""))
            reading = sheet in (names[-1], len(names)) or (sheet is None and len(names) == 1)
        elif element.tag == f"{_TABLE}table-row" and event == "end" and not reading:
            element.clear()  # another sheet's row: dropped as it is read
        elif element.tag == f"{_TABLE}table-row" and event == "end":
            repeated = _repeat(element, f"{_TABLE}number-rows-repeated")
            cells = _row_cells(element, shown_as, number + 1)
            if not cells:  # a run of empty rows costs nothing, however long
                number += repeated
            for _ in range(repeated if cells else 0):
                number, filled = number + 1, filled + 1
                if filled > MAX_ROWS or number > SHEET_ROWS:
                    raise CardgenError(f"the sheet has more than {MAX_ROWS:,} rows; the limit is {MAX_ROWS:,}",
                                       file=shown_as, row=number, rule="too-long")
                yield number, list(cells)
            element.clear()
        elif element.tag == f"{_TABLE}table" and event == "end":
            if reading:
                return
            element.clear()
    _no_sheet(sheet, names, shown_as)


def _repeat(element: Any, attribute: str) -> int:
    try:
        return max(1, int(element.get(attribute, "1")))
    except ValueError:
        return 1


def _row_cells(row: Any, shown_as: str, number: int) -> list[str]:
    """A row's cells as text, empty trailing cells dropped; an error past MAX_COLUMNS cells that hold something."""
    from cardgen.load.data import MAX_COLUMNS, _cell_text

    cells: list[str] = []
    empty = 0  # empty cells not yet added: only those before a filled cell are
    for cell in row:
        if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
            continue
        repeated = _repeat(cell, f"{_TABLE}number-columns-repeated")
        text = _cell_value(cell, _cell_text)
        if not text:
            empty += repeated
            continue
        if len(cells) + empty + repeated > MAX_COLUMNS:
            raise CardgenError(f"the row has a value past the limit of {MAX_COLUMNS:,} columns; delete what lies "
                               "right of your data", file=shown_as, row=number, rule="too-long")
        cells += [""] * empty + [text] * repeated
        empty = 0
    return cells


def _cell_value(cell: Any, as_text: Any) -> str:
    """A cell's value as text: a number as its value (not as it is shown), a text as its paragraphs."""
    kind = cell.get(f"{_OFFICE}value-type")
    if kind in _VALUE_OF:
        value = cell.get(f"{_OFFICE}{_VALUE_OF[kind]}", "")
        if kind in ("float", "percentage", "currency"):
            try:
                return str(as_text(float(value)))
            except ValueError:
                return value
        return value
    return "\n".join(_paragraph(p) for p in cell if p.tag == f"{_TEXT}p")


def _paragraph(element: Any) -> str:
    """The text of a paragraph: spans, runs of spaces (`text:s`), tabs and line breaks as they show."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == f"{_TEXT}s":
            parts.append(" " * _repeat(child, f"{_TEXT}c"))
        elif child.tag == f"{_TEXT}tab":
            parts.append("\t")
        elif child.tag == f"{_TEXT}line-break":
            parts.append("\n")
        else:
            parts.append(_paragraph(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _no_sheet(sheet: str | int | None, names: list[str], shown_as: str) -> None:
    """The error for a sheet that is not in the workbook (or a workbook without any)."""
    if not names:
        raise CardgenError("the workbook has no sheet cardgen can find; save it again from your spreadsheet program",
                           file=shown_as, rule="damaged-file")
    listed = ", ".join(f"{i}: '{n}'" for i, n in enumerate(names, start=1))
    raise CardgenError(f"no sheet {sheet!r}. The workbook has {listed} (give `sheet:` a name or a number counting "
                       "from 1)", file=shown_as)

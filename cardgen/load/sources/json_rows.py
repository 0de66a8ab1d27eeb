"""JSON data files: a list of objects (one per card), or an object of such lists by deck (`{"heroes": [...]}`,
the list chosen by the source's `sheet:` when there are several). Each row keeps the line its object starts on."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardgen.core.errors import CardgenError, Problem
from cardgen.core.storage import read_noted
from cardgen.load.data import MAX_COLUMNS, MAX_ROWS, Row, Table, _decode  # imported once this reader is used

if TYPE_CHECKING:
    from cardgen.load.manifest import DataSource

_SPACE = " \t\r\n"


def read_json(path: Path, shown_as: str, source: DataSource) -> Table:
    """A JSON file's rows (its size was bounded before it is read)."""
    notes: list[Problem] = []
    table = json_table(_decode(read_noted(path), source.encoding, shown_as, notes), shown_as, source.sheet)
    table.problems[:0] = notes
    return table


def json_table(text: str, shown_as: str, sheet: str | int | None = None) -> Table:
    """JSON text as rows: a list of objects, or the list of an object's key (`sheet`, or its only key)."""
    try:
        json.loads(text)  # the whole text is JSON (an error at its line), before it is walked item by item
    except json.JSONDecodeError as exc:
        raise CardgenError(f"the file is not valid JSON: {exc.msg} (column {exc.colno})", file=shown_as,
                           row=exc.lineno, rule="damaged-file") from None
    except RecursionError:
        raise CardgenError("the JSON nests deeper than Python can read; expected a list of flat objects",
                           file=shown_as, rule="too-long") from None
    start = _skip(text, 0)
    if text.startswith("{", start):
        start = _list_of(text, start, sheet, shown_as)
    if not text.startswith("[", start):
        raise CardgenError("expected a JSON list of objects (one {\"name\": ...} per card), or an object holding "
                           "such a list by deck", file=shown_as, row=_line(text, start))
    table = Table(shown_as, [], [])
    line, counted = 1, 0
    for item, at in _items(text, start, shown_as):
        line, counted = line + text.count("\n", counted, at), at  # counted on from the last row: linear in the file
        _add_row(table, item, line)
    for row in table.rows:  # a key an object leaves out is an empty cell, as in a sheet
        row.values.update({key: "" for key in table.header if key not in row.values})
    return table


def _skip(text: str, index: int) -> int:
    """The index of the next character that is not white space."""
    while index < len(text) and text[index] in _SPACE:
        index += 1
    return index


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _items(text: str, start: int, shown_as: str) -> list[tuple[Any, int]]:
    """The items of the JSON list at `start` (valid JSON: checked before), each with the index it starts at."""
    decoder, items = json.JSONDecoder(), []
    index = _skip(text, start + 1)
    while text[index] != "]":
        item, end = decoder.raw_decode(text, index)
        items.append((item, index))
        if len(items) > MAX_ROWS:
            raise CardgenError(f"more than {MAX_ROWS:,} rows; that many are refused", file=shown_as,
                               row=_line(text, index), rule="too-long")
        index = _skip(text, _skip(text, end) + (text[_skip(text, end)] == ","))
    return items


def _list_of(text: str, start: int, sheet: str | int | None, shown_as: str) -> int:
    """The index of the list of the top-level object's key `sheet` (or of its only key)."""
    decoder = json.JSONDecoder()
    places: dict[str, int] = {}
    index = _skip(text, start + 1)
    while text[index] != "}":
        key, end = decoder.raw_decode(text, index)
        value_at = _skip(text, _skip(text, end) + 1)  # past the ':'
        places[key] = value_at
        _, end = decoder.raw_decode(text, value_at)
        index = _skip(text, _skip(text, end) + (text[_skip(text, end)] == ","))
    if sheet is None and len(places) == 1:
        return next(iter(places.values()))
    if isinstance(sheet, str) and sheet in places:
        return places[sheet]
    keys = ", ".join(f"'{key}'" for key in places) or "none"
    raise CardgenError(f"the JSON object holds lists by deck ({keys}); name one with `sheet:` on the deck's "
                       "source", file=shown_as, row=_line(text, start))


def _add_row(table: Table, item: Any, line: int) -> None:
    """One object as a row: scalars as the text they would be in a cell, lists of them kept item by item."""
    if not isinstance(item, dict):
        table.problems.append(Problem(f"expected an object ({{\"name\": ...}}) for each card, not {_kind(item)}; "
                                      "it is skipped", file=table.file, row=line))
        return
    if len(item) > MAX_COLUMNS:
        raise CardgenError(f"an object with more than {MAX_COLUMNS:,} keys; that many columns are refused",
                           file=table.file, row=line, rule="too-long")
    values, items = {}, {}
    for key, value in item.items():
        if isinstance(value, list) and all(_is_scalar(v) for v in value):
            items[key] = [_text(v) for v in value]
            values[key] = ";".join(items[key])
        elif _is_scalar(value):
            values[key] = _text(value)
        else:
            table.problems.append(Problem(f"expected a text, a number, true/false or a list of them, not "
                                          f"{_kind(value)}", file=table.file, row=line, column=key))
    if not values.keys() <= set(table.header):
        table.header += [key for key in values if key not in table.header]
    table.rows.append(Row(values, table.file, line, items))


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _text(value: Any) -> str:
    """A JSON scalar as a cell's text: null is empty, true/false as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else f"the value {json.dumps(value)[:30]}"

"""Load a deck's rows as text and convert them by the manifest's field types into Card records."""
from __future__ import annotations

import codecs
import collections
import csv
import difflib
import functools
import io
import itertools
import json
import math
import operator
import re
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Generic, Iterator, Mapping, Sequence, TypeVar

from cardgen.core.errors import CardgenError, Problem
from cardgen.core.expressions import EvaluationError, ExpressionError, columns_in, evaluate_mask
from cardgen.core.filenames import collision_key, slugify, unsafe_reason
from cardgen.core.storage import builds_again, keep_for_next_builds, keep_latest, read_noted
from cardgen.core.storage import changed_places as changed_objects
from cardgen.load.manifest import Choice, DataSource, DeckSpec, FieldSpec, Game
from cardgen.load.values import Value, fill, unknown_message

TRUE_WORDS = {"true", "yes", "y", "1", "x"}
FALSE_WORDS = {"false", "no", "n", "0"}


@dataclass(frozen=True)
class Row:
    """One data row as the text the file holds, with where it came from."""

    values: dict[str, str]
    file: str
    line: int
    items: dict[str, list[str]] = field(default_factory=dict)  # YAML lists, kept item by item
    key_lines: dict[str, int] = field(default_factory=dict)  # YAML: the line of each key

    def __post_init__(self) -> None:
        # Accents typed on a Mac may arrive decomposed (e + U+0301); cairosvg would draw the accent as a
        # character of its own, with a gap. The composed form is the same text.
        object.__setattr__(self, "values", {k: unicodedata.normalize("NFC", v) for k, v in self.values.items()})

    def line_of(self, column: str) -> int:
        """The line of a column's value: its key's line in YAML, the row's line otherwise."""
        return self.key_lines.get(column, self.line)

    @functools.cached_property
    def key(self) -> str:
        """Everything `convert_row` and `deck_cards` read of the row (its place too: its problems name it), made
        once (a row read again unchanged in a process that builds again is the same object: see `csv_table`): a
        text, whose hash Python keeps (a tuple's is worked out at every look-up)."""
        return repr((self.file, self.line, self.values, self.items, self.key_lines))


@dataclass
class Card:
    """One unique card: typed fields, copies, templates and its place in the data."""

    id: str
    deck: str
    name: str
    copies: int
    fields: dict[str, Any]
    face_template: str
    back_template: str | None
    source_file: str
    source_row: int
    text_fields: list[str] = field(default_factory=list)
    original: dict[str, Any] | None = None  # the fields in the game's own language, when translated (rules read it)
    translated_at: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # column -> its translation's cell
    # What later steps made of the card, by what else they read (a render's cache key, its look): in a process that
    # builds again an unchanged row's card is the last build's object (see `deck_cards`), and keeps them.
    made: dict[tuple, Any] = field(default_factory=dict, repr=False, compare=False)

    def where(self, column: str | None) -> tuple[str, int, str | None]:
        """The file, row and column that hold a column's text: its translation's cell when it is translated."""
        return self.translated_at.get(column or "", (self.source_file, self.source_row, column))


# ---------------------------------------------------------------- reading files as text

SPREADSHEET_ERRORS = ("#VALUE!", "#REF!", "#NAME?", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "#SPILL!", "#CALC!")
MAX_COPIES = 1_000  # of one card; a mistyped 1,000,000 would build for minutes
# Of every card of a game together: 11,000 pages of Letter, a build of about 35 s and 700 MB. 300 rows of 1,000
# copies (a 9 kB file) took 200 s and 1.9 GB before this bound.
MAX_GAME_COPIES = 100_000
MAX_ROWS = 200_000  # of one data file
MAX_COLUMNS = 1_000
SHEET_ROWS = 1_048_576  # the last row of an Excel or LibreOffice sheet
MAX_DATA_BYTES = 100_000_000  # a data file as stored (200,000 rows of 500 characters)
MAX_WORKBOOK_BYTES = 100_000_000  # an XLSX's parts unpacked, together (a 200,000-row sheet of five columns: 68 MB)
MAX_PACKING = 100  # how many times its packed size a part over 1 MB may unpack to (sheets: 5-20x; a zip bomb: 1,000x)
MAX_SHARED_STRINGS = 1_000_000  # an XLSX's table of texts; openpyxl reads ~100,000 a second, all before any row
_MAX_CSV_CELL = 1_000_000  # characters; the csv module's default limit (131072) is too low for long texts


@dataclass
class Table:
    """A data file read as text: its header, its rows and what was noticed while reading it."""

    file: str
    header: list[str]
    rows: list[Row]
    problems: list[Problem] = field(default_factory=list)
    header_line: int = 1
    by_header: bool = False  # every row holds the header's named columns, no other (CSV, spreadsheets)
    # Read again from the lines it changes (a process that builds again, see `_edited_table`): the rows list of the
    # read it was made from, and the places of the rows that changed (`RowsMade` looks at those only)
    edited: tuple[list[Row], list[int]] | None = field(default=None, repr=False, compare=False)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16's: FF FE begins both
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _decode(raw: bytes, encoding: str | None, shown_as: str, notes: list[Problem]) -> str:
    """Text of a data file: the declared encoding, else the one its BOM names (UTF-8, UTF-16 or UTF-32), else
    UTF-8 or cp1252. A text holding NUL is refused (at its line, never quoting it); a second BOM is skipped."""
    declared = encoding or next((codec for bom, codec in _BOMS if raw.startswith(bom)), None)
    text = _strict(raw, declared, shown_as) if declared else _guessed(raw, shown_as, notes)
    if "\x00" in text:
        raise CardgenError("the file holds NUL bytes: it is not a text file (a workbook saved with the wrong "
                           "extension?) or not in the encoding it was read as; expected CSV text", file=shown_as,
                           row=text[:text.index("\x00")].count("\n") + 1)
    if text.startswith("\ufeff"):  # a BOM written twice (a file opened as text and saved again with a BOM)
        notes.append(Problem("the file starts with a byte-order mark (BOM) twice; the second one is skipped (save "
                             "the file again as UTF-8 to drop it)", file=shown_as, row=1, severity="warning",
                             rule="encoding"))
        text = text.lstrip("\ufeff")
    return text


def _strict(raw: bytes, encoding: str, shown_as: str) -> str:
    """A file's text in an encoding it was declared or marked to be in; an error at the line that is not."""
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        raise CardgenError(f"unknown encoding '{encoding}'; expected one Python knows, such as utf-8 or cp1252",
                           file=shown_as) from None
    try:
        return raw.decode("utf-8-sig" if codec == "utf-8" else codec)  # a declared UTF-8 file may have a BOM
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].decode(encoding, "replace").count("\n") + 1
        raise CardgenError(f"cannot decode the file as {encoding} ({exc.reason} at byte {exc.start:,}); save it "
                           "again as UTF-8 (or set `encoding:` on the deck's source to the one it is in)",
                           file=shown_as, row=line) from None


def _guessed(raw: bytes, shown_as: str, notes: list[Problem]) -> str:
    """Text of a file without a declared encoding or a BOM: UTF-8, else Windows-1252 with a warning."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        if _has_utf8_text(raw):  # a UTF-8 file with a stray byte: only the lines holding one are cp1252
            return _decode_mixed(raw, shown_as, notes)
        try:
            text = raw.decode("cp1252")
        except UnicodeDecodeError:
            raise CardgenError(f"the file is not UTF-8 (byte 0x{raw[exc.start]:02x}) nor Windows-1252; save "
                               "it as UTF-8 or set `encoding:` on the deck's source", file=shown_as,
                               row=line) from None
        notes.append(Problem(f"the file is not UTF-8 (byte 0x{raw[exc.start]:02x}); it was read as "
                             "Windows-1252 (cp1252). Save it as UTF-8, or set `encoding: cp1252` on the "
                             "deck's source to say so", file=shown_as, row=line, severity="warning",
                             rule="encoding"))
        return text


def _has_utf8_text(raw: bytes) -> bool:
    """Whether a file holds characters written as UTF-8 (then a byte that is not UTF-8 is a stray one)."""
    return any(len(line.decode("utf-8", "ignore").encode()) > len(line.decode("ascii", "ignore").encode())
               for line in raw.split(b"\n") if not line.isascii())


def _decode_mixed(raw: bytes, shown_as: str, notes: list[Problem]) -> str:
    """A UTF-8 file line by line: a line that is not UTF-8 is read as Windows-1252, with a warning at its row."""
    lines = []
    for number, line in enumerate(raw.removeprefix(codecs.BOM_UTF8).split(b"\n"), start=1):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            lines.append(line.decode("cp1252", "replace"))
            notes.append(Problem(f"this line is not UTF-8 (byte 0x{line[exc.start]:02x}) though the rest of the "
                                 "file is; it was read as Windows-1252 (cp1252): check its accents and save the "
                                 "file as UTF-8", file=shown_as, row=number, severity="warning", rule="encoding"))
    return "\n".join(lines)


def _leading_comment_lines(text: str) -> int:
    """How many lines at the top are `#` comments (notes a designer keeps above the header)."""
    count, start = 0, 0
    while text.startswith("#", start):  # (not the whole text split in lines: ~3 ms at 10,000 rows)
        count += 1
        start = text.find("\n", start) + 1
        if not start:
            break
    return count


def _sniff_delimiter(text: str) -> str:
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _blank_row(shown_as: str, line: int) -> Problem:
    return Problem("blank row between cards; it is skipped", file=shown_as, row=line, severity="warning",
                   rule="blank-row")


def read_csv_table(path: Path, shown_as: str, delimiter: str | None = None, encoding: str | None = None) -> Table:
    """Read a CSV file as text rows keyed by header; encoding, BOM and delimiter are detected."""
    notes: list[Problem] = []
    table = csv_table(_decode(read_noted(path), encoding, shown_as, notes), shown_as, delimiter)
    table.problems[:0] = notes
    return table


def csv_table(text: str, shown_as: str, delimiter: str | None = None) -> Table:
    """CSV text as rows keyed by its header (`shown_as` names it in findings); the delimiter is detected."""
    skipped = _leading_comment_lines(text)
    text = "\n" * skipped + text.split("\n", skipped)[-1] if skipped else text
    if not text or text.isspace():  # (not a stripped copy of the text)
        raise CardgenError("the file is empty; expected a header row and data rows", file=shown_as, rule="empty-file")
    csv.field_size_limit(_MAX_CSV_CELL)
    delimiter = delimiter or _sniff_delimiter(text.lstrip("\n"))
    return (_edited_table(text, shown_as, delimiter) if builds_again() else None) or \
        _parsed_table(text, shown_as, delimiter)


def _parsed_table(text: str, shown_as: str, delimiter: str) -> Table:
    """CSV text parsed whole (see `csv_table`)."""
    notes: list[Problem] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header: list[str] = []
        while not any(h.strip() for h in header):  # the blank lines left where comments were
            next_row = next(reader, None)
            if next_row is None:
                raise CardgenError("the file has no header row with column names", file=shown_as,
                                   rule="empty-file")
            header = next_row
        header_line = reader.line_num
        table = Table(shown_as, _read_header(header, shown_as, header_line, notes), [], notes, header_line, True)
        kept = _kept_rows(shown_as, table.header)
        line, blank = header_line + 1, None
        single: dict[int, int] = {}  # the rows on one line of their own: their places, by line
        for cells in reader:
            if not "".join(cells).strip():  # (every cell blank: one join, not a strip a cell)
                blank = blank or line
            else:
                if blank:
                    notes.append(_blank_row(shown_as, blank))
                    blank = None
                if len(table.rows) >= MAX_ROWS or len(cells) > MAX_COLUMNS:
                    raise CardgenError(f"more than {MAX_ROWS:,} rows or {MAX_COLUMNS:,} columns; that many "
                                       "are refused", file=shown_as, row=line, rule="too-long")
                if reader.line_num == line:
                    single[line] = len(table.rows)
                table.rows.append(_row_of(table.header, cells, shown_as, line, notes) if kept is None
                                  else _kept_row(kept, table.header, cells, shown_as, line, notes))
            line = reader.line_num + 1
    except csv.Error as exc:
        raise CardgenError(f"the file is not valid CSV: {exc}", file=shown_as, row=reader.line_num) from None
    _TEXTS.pop(shown_as, None)
    if kept is not None and not notes:
        _TEXTS[shown_as] = _ReadText(delimiter, text, replace(table, rows=list(table.rows)), single, kept.now,
                                     table.rows)
        while len(_TEXTS) > _CONVERTED_TABLES:
            del _TEXTS[next(iter(_TEXTS))]
    return table


@dataclass
class _ReadText:
    """A CSV file's text as last read in a process that builds again, and what was read of it: the table (of no notes),
    the places of its rows on one line of their own by line, and its kept rows (`KeptRows.now`)."""

    delimiter: str
    text: str
    table: Table
    single: dict[int, int]
    kept: dict[tuple, Row]
    given: list[Row]  # the rows list the read handed out (`Table.rows`)


# In a process that builds again, each CSV file's text as last read (by the name shown in findings): a file read
# again whose lines are those of the last read but a few, each a row on one line, is read from those lines only (every
# row's look-up was ~45 ms at 10,000 rows).
_TEXTS: dict[str, _ReadText] = {}
EDITED_LINES = 64  # lines changed at most to read a file from them


def _edited_table(text: str, shown_as: str, delimiter: str) -> Table | None:
    """The table of a CSV text that differs from its last read (see `_TEXTS`) only on lines that each held a row on a
    line of its own and now hold one (the same header, no blank row, no note), made of the last read's rows and the
    changed lines' new rows: the rows a whole read makes. None when it cannot be made so."""
    last = _TEXTS.get(shown_as)
    if last is None or last.delimiter != delimiter:
        return None
    changed = _changed_lines(last.text, text)
    header, kept = last.table.header, _READ.get((shown_as, tuple(last.table.header)))
    if changed is None or len(changed) > EDITED_LINES or kept is None or kept.now is not last.kept:
        return None
    edits = []
    for index, (old_line, new_line) in changed.items():
        place, old, new = last.single.get(index + 1), _one_row(old_line, delimiter, False), \
            _one_row(new_line, delimiter, True)
        if place is None or old is None or (index + 1, tuple(old)) not in last.kept or not new or \
                len(new) > MAX_COLUMNS or not "".join(new).strip():
            return None
        notes: list[Problem] = []
        row = _row_of(header, new, shown_as, index + 1, notes)
        if notes:
            return None
        edits.append((place, (index + 1, tuple(old)), (index + 1, tuple(new)), row))
    rows = list(last.table.rows)
    for place, old_key, new_key, row in edits:
        del last.kept[old_key]
        last.kept[new_key] = rows[place] = row
    kept = _kept_rows(shown_as, header)
    assert kept is not None, "a process that builds again keeps rows"
    kept.now = last.kept  # (the same rows by the same keys, but the edited ones)
    table = Table(shown_as, header, rows, [], last.table.header_line, True,
                  (last.given, sorted(place for place, *_ in edits)))
    _TEXTS[shown_as] = _ReadText(delimiter, text, replace(table, rows=list(rows), edited=None), last.single,
                                 last.kept, rows)  # (the rows given may be changed)
    return table


_CHUNK = 1 << 14  # characters two texts are compared by at once (see `_changed_lines`)


def _changed_lines(old: str, new: str) -> dict[int, tuple[str, str]] | None:
    """The lines of `new` that differ from those of `old` (by index: the old line and the new), when both texts have
    as many lines; else None. The texts are compared chunk by chunk from both ends (C compares of slices), and only
    the lines between the first and the last chunk that differ are split and compared (the whole texts split in lines
    and compared were ~8 ms at 10,000 rows)."""
    if old == new:
        return {}
    shorter = min(len(old), len(new))
    same = 0  # characters alike at the start, to within a chunk
    while same < shorter and old[same:same + _CHUNK] == new[same:same + _CHUNK]:
        same += _CHUNK
    start = old.rfind("\n", 0, min(same, shorter)) + 1  # the start of the first line that may differ
    tail = 0  # characters alike at the end, to within a chunk, after `start`
    while tail + _CHUNK <= shorter - start and old[len(old) - tail - _CHUNK:len(old) - tail] == \
            new[len(new) - tail - _CHUNK:len(new) - tail]:
        tail += _CHUNK
    end = old.find("\n", len(old) - tail) if tail else -1  # the end of the last line that may differ
    after = len(old) - end if end >= 0 else 0  # characters from there on, alike in both
    olds, news = old[start:len(old) - after].split("\n"), new[start:len(new) - after].split("\n")
    if len(olds) != len(news):
        return None
    first = old.count("\n", 0, start)
    return {first + number: pair for number, pair in enumerate(zip(olds, news)) if pair[0] != pair[1]}


def _one_row(line: str, delimiter: str, strict: bool) -> list[str] | None:
    """The cells of a line that is one CSV row (`strict`: a whole one, no quote left open), or None."""
    reader = csv.reader([line], delimiter=delimiter, strict=strict)
    try:
        cells = next(reader, None)
        return cells if next(reader, None) is None else None
    except csv.Error:
        return None


def _kept_row(kept: KeptRows, header: list[str], cells: list[str], shown_as: str, line: int,
              notes: list[Problem]) -> Row:
    """A row of a file read again in a process that builds again: the last read's object when its line and cells
    are the same (one that made a note is made again: the note depends on the notes before it)."""
    key = (line, tuple(cells))
    row = kept.last.get(key)
    if row is None:
        before = len(notes)
        row = _row_of(header, cells, shown_as, line, notes)
        if len(notes) > before:
            return row
    kept.now[key] = row
    return row


def _row_of(header: list[str], cells: list[str], shown_as: str, line: int, notes: list[Problem]) -> Row:
    """A row keyed by header; cells beyond the header are errors, missing ones are read as empty."""
    if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
        notes.append(Problem(f"this row has {len(cells)} cells but the header has {len(header)} columns; the "
                             "extra cells are ignored (a comma or delimiter inside a value needs quotes)",
                             file=shown_as, row=line, rule="ragged-row"))
    elif len(cells) < len(header):
        notes.append(Problem(f"this row has {len(cells)} cells but the header has {len(header)} columns; "
                             "the missing ones are read as empty", file=shown_as, row=line, severity="warning",
                             rule="ragged-row"))
    for i, name in enumerate(header):
        if name or i >= len(cells) or not cells[i].strip():  # (most cells: no search of the notes)
            continue
        if not any(n.rule == "unnamed-column" and n.column == f"#{i + 1}" for n in notes):
            notes.append(Problem(f"column {i + 1} holds data ('{cells[i].strip()[:30]}') but has no name in the "
                                 "header row, so it is ignored; name it in the header (or delete the data)",
                                 file=shown_as, row=line, column=f"#{i + 1}", severity="warning",
                                 rule="unnamed-column"))
    values: dict[str, str] = {}
    for i, name in enumerate(header):
        if name and name not in values:  # a duplicate column was reported; the first one counts
            values[name] = cells[i] if i < len(cells) else ""
    return Row(values, shown_as, line)


def _read_header(cells: list[str], shown_as: str, line: int, notes: list[Problem]) -> list[str]:
    """Column names of a header row: stripped, duplicates reported (the first one is used)."""
    header = [c.strip() for c in cells]
    seen: set[str] = set()
    for i, (name, cell) in enumerate(zip(header, cells)):
        if name and name in seen:
            notes.append(Problem(f"column '{name}' appears twice in the header (column {i + 1}); expected "
                                 "unique column names", file=shown_as, row=line, column=name,
                                 rule="duplicate-header"))
        if name != cell:
            notes.append(Problem(f"column name '{cell}' has spaces around it; it is read as '{name}'",
                                 file=shown_as, row=line, column=name, severity="warning", rule="spaces"))
        seen.add(name)
    return header


def _yaml_text(value: Any) -> str:
    """A YAML value as the text a cell would hold: lists joined by ';'."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ";".join(value)
    if isinstance(value, str):
        return value
    raise ValueError("expected a text, a number or a list of them here, not a mapping")


def _merged(item: dict) -> dict:
    """A mapping with YAML merge keys (`<<: *defaults`) applied: its own keys win."""
    merge = item.pop("<<", None)
    if merge is None:
        return item
    parents = merge if isinstance(merge, list) else [merge]
    result: dict = {}
    for parent in parents:
        if isinstance(parent, dict):
            result.update(_merged(dict(parent)))
    return {**result, **item}


def read_yaml_table(path: Path, shown_as: str) -> Table:
    """Read a YAML file holding a list of mappings (see `yaml_table`)."""
    try:  # (decoded as `Path.read_text` does, its lines' ends made "\n")
        text = io.TextIOWrapper(io.BytesIO(read_noted(path)), encoding="utf-8-sig").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CardgenError(f"cannot read the file: {exc}", file=shown_as) from None
    return yaml_table(text, shown_as)


def yaml_table(text: str, shown_as: str) -> Table:
    """YAML text holding a list of mappings as rows, every scalar kept as the text written (anchors and merges
    work; `shown_as` names it in findings)."""
    import yaml

    from cardgen.core.yamlsource import BASE_LOADER, parse_yaml  # checks syntax and alias expansion with line numbers
    parse_yaml(text, shown_as)
    loader = BASE_LOADER(text)  # every scalar as its text; composed once, then built from the same nodes
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise CardgenError("expected a YAML list of mappings (one `- name: ...` entry per card)", file=shown_as)
    table = Table(shown_as, [], [])
    for item, item_node in zip(data, node.value if node is not None else []):
        line = item_node.start_mark.line + 1
        key_lines = {str(key.value): key.start_mark.line + 1 for key, _ in item_node.value
                     if isinstance(key, yaml.ScalarNode)}
        values, items = {}, {}
        for key, value in _merged(dict(item)).items():
            try:
                values[str(key)] = _yaml_text(value)
            except ValueError as exc:
                table.problems.append(Problem(str(exc), file=shown_as, row=key_lines.get(str(key), line),
                                              column=str(key)))
            if isinstance(value, list):
                items[str(key)] = [str(v) for v in value]
        table.header += [k for k in values if k not in table.header]
        table.rows.append(Row(values, shown_as, line, items, key_lines))
    return table


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _worksheet(book: Any, sheet: str | int | None, shown_as: str) -> Any:
    """A workbook's sheet by name or by number (counting from 1); a wrong one lists the sheets there are."""
    names = list(book.sheetnames)
    if not names:  # a workbook.xml listing none, or naming sheets whose parts are missing
        raise CardgenError("the workbook has no sheet cardgen can find; save it again from your spreadsheet program",
                           file=shown_as, rule="damaged-file")
    if sheet is None:
        return book.worksheets[0]
    if isinstance(sheet, int) and 1 <= sheet <= len(names):
        return book.worksheets[sheet - 1]
    if isinstance(sheet, str) and sheet in names:
        return book[sheet]
    listed = ", ".join(f"{i}: '{n}'" for i, n in enumerate(names, start=1))
    close = difflib.get_close_matches(str(sheet), names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise CardgenError(f"no sheet {sheet!r}{hint} The workbook has {listed} (give `sheet:` a name or a number "
                       "counting from 1)", file=shown_as)


def _bounded_rows(rows: Iterator[tuple], shown_as: str) -> Iterator[tuple]:
    """Rows of a sheet, with empty trailing cells dropped; an error past MAX_ROWS rows that hold something,
    past the last row a spreadsheet can have, or past MAX_COLUMNS cells in a row."""
    from openpyxl.utils import get_column_letter

    filled = 0
    for number, cells in enumerate(rows, start=1):
        if number > SHEET_ROWS:  # only a hand-made file claims rows past Excel's last: never iterate them all
            raise CardgenError(f"the sheet claims rows past row {SHEET_ROWS:,}, the last a spreadsheet can have; "
                               "save it again from your spreadsheet program", file=shown_as, row=number,
                               rule="too-long")
        end = len(cells)
        while end and cells[end - 1] is None:
            end -= 1
        cells = tuple(cells[:end])
        filled += bool(cells)
        if filled > MAX_ROWS:
            raise CardgenError(f"the sheet has more than {MAX_ROWS:,} rows; the limit is {MAX_ROWS:,}",
                               file=shown_as, row=number, rule="too-long")
        if len(cells) > MAX_COLUMNS:
            raise CardgenError(f"the row has a value in column {get_column_letter(end)}, past the limit of "
                               f"{MAX_COLUMNS:,} columns; delete what lies right of your data", file=shown_as,
                               row=number, rule="too-long")
        yield cells


_SHARED_STRINGS = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"


def _measure_workbook(path: Path | BinaryIO, shown_as: str) -> None:
    """Refuse a workbook whose parts would cost minutes or gigabytes to read, from what its zip declares and a
    count of its shared texts, before openpyxl parses any part (it reads every shared text before any row).
    zipfile stops a part at its declared size, so what a part declares is what it unpacks to."""
    try:
        with zipfile.ZipFile(path) as book:
            parts = book.infolist()
            unpacked = sum(part.file_size for part in parts)
            if unpacked > MAX_WORKBOOK_BYTES:
                raise CardgenError(f"the workbook unpacks to {unpacked / 1e6:,.0f} MB, more than the limit of "
                                   f"{MAX_WORKBOOK_BYTES / 1e6:,.0f} MB; save a smaller one (or the data as CSV)",
                                   file=shown_as, rule="too-long")
            for part in parts:
                if part.file_size > 1_000_000 and part.file_size > MAX_PACKING * max(part.compress_size, 1):
                    raise CardgenError(f"the workbook's part {part.filename} unpacks to "
                                       f"{part.file_size / max(part.compress_size, 1):,.0f} times its packed size "
                                       f"(more than {MAX_PACKING}x: not a spreadsheet program's file); save it "
                                       "again from your spreadsheet program", file=shown_as, rule="too-long")
            for name in _shared_string_parts(book):
                if _count_shared_strings(book, name) > MAX_SHARED_STRINGS:
                    raise CardgenError(f"the workbook holds more than {MAX_SHARED_STRINGS:,} distinct texts (its "
                                       f"part {name}); that many are refused", file=shown_as, rule="too-long")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError, OSError, zlib.error):
        pass  # not a zip cardgen can measure (or a part's packed data is damaged): openpyxl says what is wrong


def _shared_string_parts(book: zipfile.ZipFile) -> list[str]:
    """The parts of a workbook its content types name as shared-string tables (xl/sharedStrings.xml)."""
    from xml.etree import ElementTree

    try:
        types = ElementTree.fromstring(book.read("[Content_Types].xml"))
    except (KeyError, ElementTree.ParseError):
        return []
    names = {part.filename for part in book.infolist()}
    return [name for item in types if item.get("ContentType") == _SHARED_STRINGS
            and (name := str(item.get("PartName", "")).lstrip("/")) in names]


_SHARED_TEXT = re.compile(rb"<(?:\w+:)?si[\s/>]")  # the start of one shared text, <si> or <x:si>


def _count_shared_strings(book: zipfile.ZipFile, name: str) -> int:
    """How many texts (`<si>` elements) a shared-string part holds, read as a stream: stops past the limit."""
    count, carried = 0, b""
    with book.open(name) as part:
        for chunk in iter(lambda: part.read(1 << 20), b""):
            data = carried + chunk
            cut = max(data.rfind(b"<"), 0)  # a tag cut by the chunk's end is counted with the next chunk
            count += len(_SHARED_TEXT.findall(data, 0, cut))
            carried = data[cut:]
            if count > MAX_SHARED_STRINGS:
                break
    return count + len(_SHARED_TEXT.findall(carried))


def read_xlsx_table(path: Path, shown_as: str, sheet: str | int | None) -> Table:
    """Read one sheet of an XLSX workbook as text rows (formulas as their cached values)."""
    import openpyxl

    data = io.BytesIO(read_noted(path))  # (read once, and noted: see `storage.noting_reads`)
    _measure_workbook(data, shown_as)
    try:
        book = openpyxl.load_workbook(data, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a damaged file
        raise CardgenError(f"cannot open the workbook: {_first_line(exc)}", file=shown_as) from None
    try:
        return _sheet_table(_worksheet(book, sheet, shown_as), shown_as)
    finally:
        book.close()


def _first_line(exc: Exception) -> str:
    """An exception's message on one line (openpyxl's run over several), with its type when it is terse."""
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _sheet_table(worksheet: Any, shown_as: str) -> Table:
    """A sheet's rows as text; a sheet openpyxl cannot read further is an error at the row it stopped at."""
    # A sheet's declared dimension (A1:XFD1048576 in a 5 kB file) is not trusted: rows are read as
    # they are stored, and their number and width are bounded.
    worksheet.reset_dimensions()
    rows = _bounded_rows(worksheet.iter_rows(values_only=True), shown_as)
    return cells_table(((number, [_cell_text(c) for c in cells]) for number, cells in enumerate(rows, start=1)),
                       shown_as)


def cells_table(rows: Iterator[tuple[int, list[str]]], shown_as: str) -> Table:
    """A spreadsheet's rows (row number, cells as text; rows not given are blank) as a table whose header is row 1.
    An error the rows raise while they are read (a damaged part) is one at the row it stopped at."""
    notes: list[Problem] = []
    number = 0  # the last row read
    try:
        number, header_cells = next(rows, (0, []))
        if number != 1 or not any(h.strip() for h in header_cells):
            raise CardgenError("the sheet is empty or its first row is blank; expected a header row",
                               file=shown_as, row=1, rule="empty-file")
        table = Table(shown_as, _read_header(header_cells, shown_as, 1, notes), [], notes, by_header=True)
        blank = None
        for number, texts in _with_blank_rows(rows):
            texts += [""] * (len(header_cells) - len(texts))  # empty cells at the end of a row are not stored
            if not any(t.strip() for t in texts):  # formatted but empty rows come out as blank rows
                blank = blank or number
                continue
            if blank:
                notes.append(_blank_row(shown_as, blank))
                blank = None
            table.rows.append(_row_of(table.header, texts, shown_as, number, notes))
    except CardgenError:
        raise
    except Exception as exc:  # openpyxl raises what its XML parser and int(), float() and datetime() raise
        raise CardgenError(f"the sheet cannot be read from this row on ({_first_line(exc)}); save it again from "
                           "your spreadsheet program", file=shown_as, row=number + 1, rule="damaged-file") from None
    return table


def _with_blank_rows(rows: Iterator[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
    """Rows after the header, with the first of the rows skipped before each one given as a blank row."""
    last = 1
    for number, texts in rows:
        if number > last + 1:
            yield last + 1, []
        yield number, texts
        last = number


def read_table(game: Game, source: DataSource) -> Table:
    """Read a data source by the reader registered for its suffix or URL scheme (`cardgen.load.sources`); raises
    CardgenError when it cannot be read at all."""
    from cardgen.load.sources import read_source

    return read_source(game, source)


# ---------------------------------------------------------------- typed conversion

def convert_value(text: str, spec: FieldSpec) -> Any:
    """Convert one cell's text by its field spec; raise ValueError saying what was expected."""
    stripped = text.strip()
    if stripped in spec.none:
        if spec.required and spec.default is None:
            raise ValueError("a value is required here")
        return spec.default
    kind = spec.type
    if kind == "str":
        return text.strip()
    if kind == "int":
        if not re.fullmatch(r"[+-]?\d+", stripped):
            raise ValueError(f"'{stripped}' is not a whole number")
        return _in_range(int(stripped), spec)
    if kind == "float":
        try:
            number = float(stripped)
        except ValueError:
            raise ValueError(f"'{stripped}' is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"'{stripped}' is not a finite number")
        return _in_range(number, spec)
    if kind == "bool":
        if stripped.lower() in TRUE_WORDS:
            return True
        if stripped.lower() in FALSE_WORDS:
            return False
        raise ValueError(f"'{stripped}' is not yes/no (expected true, false, yes, no, 1 or 0)")
    if kind == "enum":
        if stripped not in spec.values:  # type: ignore[operator]
            raise ValueError(f"'{stripped}' is not one of {', '.join(spec.values)}"  # type: ignore[arg-type]
                             + _did_you_mean(stripped, spec.values or []))
        return stripped
    items = [i.strip() for i in stripped.split(spec.separator) if i.strip()]
    return [convert_value(i, _ITEM_SPECS[spec.item]) for i in items]


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _in_range(number: float, spec: FieldSpec) -> float:
    if spec.min is not None and number < spec.min:
        raise ValueError(f"{number} is below the minimum {spec.min:g}")
    if spec.max is not None and number > spec.max:
        raise ValueError(f"{number} is above the maximum {spec.max:g}")
    return number


_TEXT = FieldSpec()  # undeclared columns stay text (built once: this runs for every cell)
_ITEM_SPECS = {kind: FieldSpec(type=kind) for kind in ("str", "int", "float")}


def _filled(row: Row, column: str, text: str, values: Mapping[str, Value],
            problems: list[Problem]) -> str:
    """A cell's text with the game's `{value}` placeholders filled in; one naming no value is a finding."""
    text, unknown = fill(text, values)
    problems += [Problem(unknown_message(p, values), file=row.file, row=row.line_of(column), column=column,
                         rule="unknown-value") for p in unknown]
    return text


def convert_row(row: Row, specs: dict[str, FieldSpec],
                game_values: Mapping[str, Value] | None = None) -> tuple[dict[str, Any], list[Problem]]:
    """Typed values of one row (undeclared columns stay text) and the problems found.

    `game_values` fill the `{name}` placeholders of every cell before it is converted. A cell that cannot be
    converted is reported and holds None, so later checks still see the row.
    """
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for column, text in row.values.items():
        if "{" in text:  # a placeholder is possible (most cells: no call at all)
            text = _filled(row, column, text, game_values or {}, problems)
        if text.strip() in SPREADSHEET_ERRORS:
            problems.append(Problem(f"the spreadsheet shows the error {text.strip()} here; fix the formula",
                                    file=row.file, row=row.line_of(column), column=column,
                                    rule="spreadsheet-error"))
            values[column] = None
            continue
        spec = specs.get(column, _TEXT)
        try:
            if column in row.items and spec.type == "list":  # a YAML list: its items, not split again
                values[column] = [convert_value(_filled(row, column, i, game_values or {}, problems),
                                                _ITEM_SPECS[spec.item]) for i in row.items[column] if i.strip()]
            else:
                values[column] = convert_value(text, spec)
        except ValueError as exc:
            problems.append(Problem(f"{exc}", file=row.file, row=row.line_of(column), column=column))
            values[column] = None
    for column, spec in specs.items():
        if column not in row.values:
            if spec.required and spec.default is None:
                problems.append(Problem(f"required column '{column}' is missing", file=row.file, row=row.line,
                                        column=column))
            values[column] = spec.default
    return values, problems


Converted = tuple[dict[str, Any], list[Problem]]  # a row's typed values and problems (`convert_row`)
T = TypeVar("T")


def changed_places(now: Sequence[Any], last: Sequence[Any]) -> list[int] | None:
    """The places where `now` holds another object than `last` (by identity, a C loop), when both are as long and few
    differ (at most an eighth, or 8); else None."""
    changed = changed_objects(now, last)
    return changed if changed is not None and len(changed) <= max(len(now) // 8, 8) else None


@dataclass
class RowsMade(Generic[T]):
    """What each row of a table made in the last build of a process that builds again, by `Row.key` (`by_key`) and
    in the rows' order (`rows`, `made`): the next build looks up only the rows that are not the same objects at the
    same places (an edit's few), or, when the rows are not the last ones but a few, each row by its key."""

    by_key: dict[str, T] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    made: list[T] = field(default_factory=list)
    given: list[Row] | None = None  # the rows list last given (`update`), held

    def update(self, rows: list[Row], make: Callable[[list[int]], list[T]],
               edited: tuple[list[Row], list[int]] | None = None) -> dict[int, T] | None:
        """Hold what `rows` make: each row's taken from the last build by its key, else made (`make`: what the rows
        at those places make, in order). When only the rows that changed were looked up, what each of their places
        made before, by place (in order); else None. `edited` (`Table.edited`): the rows are those of a list given
        before, but at these places (then none are compared)."""
        if edited is not None and edited[0] is self.given and len(rows) == len(self.rows):
            changed: list[int] | None = edited[1]
        else:
            changed = changed_places(rows, self.rows)
        self.given = rows
        if changed is None:  # each row's look-up by C loops (map, zip): a Python loop a row was ~6 ms at 10,000 rows
            keys = list(map(_ROW_KEY, rows))
            self.made = self._found(keys, list(range(len(rows))), make)
            self.by_key, self.rows = dict(zip(keys, self.made)), list(rows)
            return None
        keys = [rows[place].key for place in changed]
        found = self._found(keys, changed, make)
        before = {place: self.made[place] for place in changed}
        for place in changed:  # (all the old keys out first: a row's key may be another's old one)
            del self.by_key[self.rows[place].key]
        self.by_key.update(zip(keys, found))
        for place, made in zip(changed, found):
            self.rows[place], self.made[place] = rows[place], made
        return before

    def _found(self, keys: list[str], places: list[int], make: Callable[[list[int]], list[T]]) -> list[T]:
        """What the rows of `keys` (at `places`) made: the last build's by key, else made."""
        found: list[T | None] = list(map(self.by_key.get, keys))
        todo = list(itertools.compress(itertools.count(), map(operator.is_, found, itertools.repeat(None))))
        for number, made in zip(todo, make([places[number] for number in todo])):
            found[number] = made
        return found  # type: ignore[return-value]  # none is None now


_ROW_KEY = operator.attrgetter("key")


@dataclass
class ConvertedRows(RowsMade[Converted]):
    """A table's rows as last converted (see `RowsMade`) and their typed values and problems, in order."""

    typed: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def convert_table(table: Table, specs: dict[str, FieldSpec], game_values: Mapping[str, Value] | None = None,
                  known: ConvertedRows | None = None) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Typed values of every row (placeholders filled with `game_values`); a required column missing from the
    header is reported once.

    `known`: this table's rows converted before with these specs and game values (see `RowsMade`); a row found
    there is not converted again (its values copied), and `known` is left holding this table's rows."""
    absent = {c for c, s in specs.items() if s.required and s.default is None and c not in table.header}
    problems = [Problem(f"required column '{c}' is missing from the header"
                        + _did_you_mean(c, [h for h in table.header if h not in specs]),
                        file=table.file, row=table.header_line, column=c, rule="missing-column")
                for c in sorted(absent) if table.header]
    if known is None:
        converted = [convert_row(row, specs, game_values) for row in table.rows]
        return _typed(converted, problems, absent)
    rows = table.rows
    before = known.update(rows, lambda places: [convert_row(rows[i], specs, game_values) for i in places],
                          table.edited)
    if before is None or any(old[1] or known.made[place][1] for place, old in before.items()):
        known.typed, known.problems = _typed(known.made, [], absent)
    else:  # only the changed rows' values; none of them has a problem, then or now
        for place in before:
            known.typed[place] = known.made[place][0]
    return known.typed, problems + known.problems  # (the kept list: not to be changed)


def _typed(converted: list[Converted], problems: list[Problem], absent: set[str]
           ) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The rows' typed values and problems (a missing column's said once, by `problems`)."""
    typed = list(map(operator.itemgetter(0), converted))  # (those of `known`: a card made of them copies them)
    found_problems = itertools.chain.from_iterable(map(operator.itemgetter(1), converted))
    return typed, problems + [p for p in found_problems if p.column not in absent]


# A running watch converts again, on every save, the rows it converted before: each table's rows as last converted,
# by the table's file, the source, the specs and the game's values (a game's worth of rows at most per table kept),
# once `remember_rows` says so (a build of its own would only hold them: ~2 MB at 1,000 cards).
_CONVERTED: dict[tuple, ConvertedRows] = {}
_CONVERTED_TABLES = 16  # tables remembered; the oldest forgotten first


@dataclass
class KeptRows:
    """A CSV file's rows as its last read made them, by line and cells (`last`), and those of this read (`now`)."""

    last: dict[tuple, Row]
    now: dict[tuple, Row] = field(default_factory=dict)


# In a process that builds again, each CSV file's rows as last read, by the file and its header (see `_kept_row`):
# an unchanged row is the same object, its key (`Row.key`) made once, and so is its card (see `deck_cards`).
_READ: dict[tuple, KeptRows] = {}


def _kept_rows(shown_as: str, header: list[str]) -> KeptRows | None:
    """The rows a CSV file's last read in this process made, to read it again; None when this process keeps none
    (see `remember_rows`)."""
    if not builds_again() or "" in header:  # (a nameless column's data is noted once a file: on its first row)
        return None
    key = (shown_as, tuple(header))
    last = _READ.get(key)
    kept = KeptRows(last.now if last is not None else {})
    keep_latest(_READ, key, kept, _CONVERTED_TABLES)
    return kept


def remember_rows() -> None:
    """From now on, keep the rows each build of this process converts for the next (`cardgen watch`, `serve`):
    an unchanged row is then not converted again. This process builds again (`storage.keep_for_next_builds`)."""
    keep_for_next_builds()


# ---------------------------------------------------------------- cards of a deck

def _template_for(choice: Choice | str | None, values: dict[str, Any], row: Row) -> str | None:
    if choice is None or isinstance(choice, str):
        return choice
    key = values.get(choice.by)
    template = choice.templates.get(str(key), choice.default)
    if template is None:
        raise CardgenError(f"no template for {choice.by} '{key}'; expected one of "
                           f"{', '.join(choice.templates)} (or a `default:`)", file=row.file, row=row.line,
                           column=choice.by)
    return template


def _copies(values: dict[str, Any], deck: DeckSpec, row: Row) -> int:
    raw = values.get(deck.count)
    if raw is None:
        return 1
    try:
        copies = int(str(raw).strip())
    except ValueError:
        raise CardgenError(f"copy count '{raw}' is not a whole number", file=row.file, row=row.line,
                           column=deck.count) from None
    if copies < 0:
        raise CardgenError(f"copy count {copies} is negative; expected 0 or more", file=row.file, row=row.line,
                           column=deck.count)
    if copies > MAX_COPIES:
        raise CardgenError(f"copy count {copies:,} is more than {MAX_COPIES:,}; a typo? (print sheets and "
                           "Tabletop Simulator decks hold every copy)", file=row.file, row=row.line,
                           column=deck.count)
    return copies


def _values_named(expr: str, values: Mapping[str, Value]) -> dict[str, Value]:
    """The game's values an expression names (none when it does not parse: evaluating it reports that)."""
    try:
        return {name: values[name] for name in columns_in(expr) if name in values} if values else {}
    except (SyntaxError, ValueError):
        return {}


def _filter_rows(game: Game, deck_name: str, deck: DeckSpec, rows: list[Row], typed: list[dict[str, Any]],
                 todo: list[int], columns: set[str] | None = None) -> list[int]:
    """Those of the rows `todo` (their places in `rows`) that the deck's filter keeps (`columns`: those of every
    typed row, when known: gathering them from 10,000 rows took ~6 ms)."""
    if not deck.filter:
        return todo
    named = _values_named(deck.filter, game.spec.values)
    # names in a filter as in the rules: a row's own columns first
    chosen = [{**named, **typed[i]} for i in todo] if named else [typed[i] for i in todo]
    try:
        mask = evaluate_mask(chosen, deck.filter, set(named).union(columns if columns is not None else
                                                                   set().union(*typed)))  # every row's columns
    except Exception as exc:  # refused, or not computable on a row's values (a text compared with a number)
        file, line = game.where("decks", deck_name, "filter")
        reason = str(exc) if isinstance(exc, (ExpressionError, EvaluationError)) else f"{type(exc).__name__}: {exc}"
        if isinstance(exc, EvaluationError) and exc.row is not None:
            reason += f" (the row at {rows[todo[exc.row]].file}:{rows[todo[exc.row]].line})"
        raise CardgenError(f"decks.{deck_name}.filter: {reason}", file=file, row=line, rule="filter") from None
    return [i for i, keep in zip(todo, mask) if keep]


def deck_cards(game: Game, deck_name: str, rows: list[Row], typed: list[dict[str, Any]],
               kept: KeptCards | None = None, columns: set[str] | None = None,
               edited: tuple[list[Row], list[int]] | None = None) -> tuple[list[Card], list[Problem]]:
    """The Card records of one deck from its typed rows, and every problem found making them.

    `kept`: what this deck's rows made in the last build of this process (with the same specs, game values and deck),
    see `RowsMade`: a row found there gives the same Card object (and problems), or none when the deck's filter left
    it out, not filtered and made again. `columns`: those of every typed row, when known (see `typed_columns`);
    `edited`: the rows' table's (`Table.edited`)."""
    deck = game.spec.decks[deck_name]
    if kept is None:
        try:
            selected = _filter_rows(game, deck_name, deck, rows, typed, list(range(len(rows))), columns)
        except CardgenError as exc:
            return [], exc.problems
        return _joined([_card_of(deck_name, deck, rows[i], typed[i]) for i in selected])
    failed: list[Problem] = []

    def make(places: list[int]) -> list[tuple[list[Card], list[Problem]]]:
        try:
            chosen = set(_filter_rows(game, deck_name, deck, rows, typed, places, columns))
        except CardgenError as exc:
            failed.extend(exc.problems)
            chosen = set()
        return [_card_of(deck_name, deck, rows[i], typed[i]) if i in chosen else ([], []) for i in places]

    before = kept.update(rows, make, edited)
    if failed:  # the filter cannot be evaluated: no card, as a first build finds (the rows' made kept: none wrong)
        kept.by_key, kept.rows, kept.made = {}, [], []
        return [], failed
    if before is None or any(len(old[0]) != len(kept.made[place][0]) or old[1] or kept.made[place][1]
                             for place, old in before.items()):
        kept.join()
    else:  # only the changed rows' cards; each row made as many as before, and none of them a problem
        for place in before:
            if kept.made[place][0]:
                kept.cards[kept.starts[place]] = kept.made[place][0][0]
    return kept.cards, kept.problems  # (the kept lists: not to be changed)


def _joined(made: list[tuple[list[Card], list[Problem]]]) -> tuple[list[Card], list[Problem]]:
    """The cards and problems of the rows, in order."""
    chain = itertools.chain.from_iterable
    return list(chain(map(operator.itemgetter(0), made))), list(chain(map(operator.itemgetter(1), made)))


def _card_of(deck_name: str, deck: DeckSpec, row: Row, values: dict[str, Any]) -> tuple[list[Card], list[Problem]]:
    """The card a row of a deck makes (none when it cannot be made) and the problems found making it."""
    name = str(values.get(deck.name) or "")
    card_id = str(values.get(deck.id) or "") if deck.id else slugify(name)
    card_id = deck.id_prefix + card_id if card_id else card_id
    try:
        if not name.strip() and not deck.id:
            raise CardgenError(f"this row has no name (its '{deck.name}' cell is empty); every card needs one "
                               "(its id is made from it): fill it in, or delete the row",
                               file=row.file, row=row.line, column=deck.name, rule="empty-name")
        if not card_id:
            raise CardgenError("the card has no id: its name is empty", file=row.file, row=row.line,
                               column=deck.id or deck.name)
        card = Card(card_id, deck_name, name, _copies(values, deck, row), _own(values) if builds_again() else values,
                    _template_for(deck.face, values, row), _template_for(deck.back, values, row),  # type: ignore[arg-type]
                    row.file, row.line, list(deck.text))
    except CardgenError as exc:
        return [], exc.problems
    unsafe = unsafe_reason(card_id)
    # the id names the card's image file, cards/<deck>/<id>.png; the card kept so the rules see it
    return [card], [Problem(f"card id '{card_id}' cannot be a file name: {unsafe}", file=row.file, row=row.line,
                            column=deck.id or deck.name, rule="unsafe-id")] if unsafe else []


def _own(values: dict[str, Any]) -> dict[str, Any]:
    """A card's own copy of its row's typed values, which a process that builds again keeps (`_CONVERTED`) for the
    next build: a translation writes the card's fields (its lists' items too)."""
    return {column: list(value) if isinstance(value, list) else value for column, value in values.items()}


def _errors_only(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def load_deck(game: Game, deck_name: str) -> list[Card]:
    """Read, type-convert and filter one deck's rows into Card records; raise on any error."""
    deck = game.spec.decks[deck_name]
    table = read_table(game, deck.source)
    typed, problems = convert_table(table, game.fields_of(deck), game.spec.values)
    cards, card_problems = deck_cards(game, deck_name, table.rows, typed)
    errors = _errors_only(table.problems + problems + card_problems)
    if errors:
        raise CardgenError(errors)
    return cards


@dataclass
class GameData:
    """A game's data as loaded: every card that could be made, the files read and every problem found."""

    cards: list[Card]
    problems: list[Problem]
    tables: dict[str, Table] = field(default_factory=dict)
    decks_of: dict[str, list[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # data files that could not be read at all
    no_copies: list[Card] = field(default_factory=list)  # the cards of 0 copies, in order


def read_game_data(game: Game) -> GameData:
    """Read every deck's data without stopping at the first problem (a file shared by decks is read once)."""
    tables: dict[tuple, Table | None] = {}
    converted: dict[tuple, list[dict[str, Any]]] = {}
    data = GameData([], [])
    for deck_name, deck in game.spec.decks.items():
        source = deck.source
        key = (source.location, source.sheet, source.delimiter, source.encoding, source.format)
        if key not in tables:
            try:
                tables[key] = read_table(game, source)
                data.problems += tables[key].problems  # type: ignore[union-attr]
            except CardgenError as exc:
                tables[key] = None
                data.problems += exc.problems
                data.unreadable.append(source.location)
        table = tables[key]
        if table is None:
            continue
        data.tables[table.file] = table
        data.decks_of.setdefault(table.file, []).append(deck_name)
        specs = game.fields_of(deck)
        spec_key = (table.file, key, tuple((k, v.model_dump_json()) for k, v in specs.items()),
                    json.dumps(game.spec.values, sort_keys=True))
        if spec_key not in converted:
            converted[spec_key], found = convert_table(table, specs, game.spec.values, _known_rows(spec_key))
            data.problems += found
        cards, found = deck_cards(game, deck_name, table.rows, converted[spec_key],
                                  _kept_cards(game, (spec_key, deck_name, deck.model_dump_json())),
                                  typed_columns(table, specs), table.edited)
        data.cards += cards
        data.problems += found
    seen: dict[str, Card] = {}
    folded: dict[str, Card] = {}
    counted = _counted(data.cards, (game.root, game.name, game.lang) if builds_again() else None)
    ids_alike = counted is None or len(counted.folded) != len(data.cards)
    for card in data.cards if ids_alike else ():  # (most games: none; a loop a card was ~3 ms at 10,000)
        if card.id in seen:
            first = seen[card.id]
            data.problems.append(Problem(f"duplicate card id '{card.id}' (also at {first.source_file}:"
                                         f"{first.source_row}); ids must be unique within the game"
                                         + ("" if first.deck == card.deck else " (decks made from the same "
                                            "rows: give one an `id_prefix:`)"),
                                         file=card.source_file, row=card.source_row, rule="duplicate-id"))
        seen.setdefault(card.id, card)
        alike = folded.setdefault(collision_key(card.id), card)
        if alike.id != card.id:
            data.problems.append(Problem(f"card id '{card.id}' and '{alike.id}' ({alike.source_file}:"
                                         f"{alike.source_row}) differ only in case or accents: Windows and macOS "
                                         "would store their images as one file; make them differ",
                                         file=card.source_file, row=card.source_row, rule="duplicate-id"))
    if counted is not None and counted.copies <= MAX_GAME_COPIES:
        data.no_copies = [data.cards[place] for place in sorted(counted.none)]
    else:
        data.cards, too_many = _within_copy_bound(game, data.cards)
        data.problems += too_many
        copies = map(operator.attrgetter("copies"), data.cards)
        data.no_copies = list(itertools.compress(data.cards, map(operator.not_, copies)))
    data.problems = list(dict.fromkeys(data.problems))
    return data


@dataclass
class _Counted:
    """A game's cards as counted for what the whole game is checked for: how many of their ids fold to each key
    (`collision_key`: two cards' ids alike when fewer keys than cards), their copies together and the places of those
    of no copies. In a process that builds again, kept for the game's next load and patched at the cards that changed
    (`_COUNTED`)."""

    cards: list[Card]
    folded: collections.Counter[str]
    copies: int
    none: set[int]

    def patch(self, cards: list[Card], changed: list[int]) -> None:
        """Count the cards at the places `changed` again (the others are those counted)."""
        for place in changed:
            old = self.cards[place]
            key = collision_key(old.id)
            self.folded[key] -= 1
            if not self.folded[key]:
                del self.folded[key]
            self.copies -= old.copies
            self.none.discard(place)
        for place in changed:
            card = self.cards[place] = cards[place]
            self.folded[collision_key(card.id)] += 1
            self.copies += card.copies
            if not card.copies:
                self.none.add(place)


def _counted(cards: list[Card], game: tuple | None = None) -> _Counted | None:
    """The cards counted (see `_Counted`) by C loops (the ids joined by a character no id holds are folded at once:
    folding does not reach across it); None when an id holds that character. With `game` (a process that builds
    again), the game's last count is patched at the cards that are not the same objects at the same places."""
    last = _COUNTED.pop(game, None) if game is not None else None
    changed = changed_places(cards, last.cards) if last is not None else None
    if last is not None and changed is not None:
        last.patch(cards, changed)
        if any("\0" in cards[place].id for place in changed):
            return None
        counted = last
    else:
        ids = list(map(operator.attrgetter("id"), cards))
        joined = "\0".join(ids)
        if joined.count("\0") != len(ids) - 1:
            return None
        copies = list(map(operator.attrgetter("copies"), cards))
        counted = _Counted(list(cards), collections.Counter(collision_key(joined).split("\0")), sum(copies),
                           set(itertools.compress(itertools.count(), map(operator.not_, copies))))
    if game is not None:
        keep_latest(_COUNTED, game, counted, _CONVERTED_TABLES)
    return counted


# In a process that builds again, each game's cards as last counted (see `_counted`), by the game's folder, name and
# language.
_COUNTED: dict[tuple, _Counted] = {}


def typed_columns(table: Table, specs: dict[str, FieldSpec]) -> set[str] | None:
    """The columns of every row of a table typed with `specs` (see `convert_row`), when its rows hold its header's
    named columns (`Table.by_header`); else None."""
    return {name for name in table.header if name} | set(specs) if table.by_header and table.rows else None


def _known_rows(key: tuple) -> ConvertedRows | None:
    """The rows of a table last converted in this process (see `_CONVERTED`), to convert it again; None when
    this process keeps none (see `remember_rows`)."""
    if not builds_again():
        return None
    known = _CONVERTED.get(key) or ConvertedRows()
    keep_latest(_CONVERTED, key, known, _CONVERTED_TABLES)  # the last one used
    return known


@dataclass
class KeptCards(RowsMade[tuple[list[Card], list[Problem]]]):
    """What a deck's rows made in the last build of this process (see `RowsMade`): each row's cards (one or none) and
    problems, and these joined in order, with the place of each row's first card among them (`starts`)."""

    cards: list[Card] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)

    def join(self) -> None:
        """Join the rows' cards and problems again (C loops)."""
        self.cards, self.problems = _joined(self.made)
        self.starts = list(itertools.accumulate(map(len, map(operator.itemgetter(0), self.made)), initial=0))


# In a process that builds again, what each deck's rows made (see `deck_cards`), by the table, the fields' specs, the
# game's values and the deck's spec: an unchanged row's card is the last build's object, and the steps after loading
# keep what they made of it with it (`Card.made`). Not in a language of the game: a translation writes the cards.
_CARDS: dict[tuple, KeptCards] = {}


def _kept_cards(game: Game, key: tuple) -> KeptCards | None:
    """What a deck's rows made in the last build of this process (by `key`), to make its cards again; None when
    this process keeps none (see `remember_rows`) or the game is built in one of its languages."""
    if not builds_again() or game.lang is not None:
        return None
    kept = _CARDS.get(key) or KeptCards()
    keep_latest(_CARDS, key, kept, _CONVERTED_TABLES)
    return kept


def _within_copy_bound(game: Game, cards: list[Card]) -> tuple[list[Card], list[Problem]]:
    """The cards whose copies add up to at most MAX_GAME_COPIES, and an error at the first card past it: the
    cards from there on are not made, so that even a forced build stays within the bound."""
    total = 0
    for index, card in enumerate(cards):
        total += card.copies
        if total > MAX_GAME_COPIES:
            return cards[:index], [Problem(
                f"the game's copies add up to {total:,} with this card's, more than the {MAX_GAME_COPIES:,} a game "
                "may print (all decks together); this card and those after it are left out. A typo in the counts?",
                file=card.source_file, row=card.source_row, column=game.spec.decks[card.deck].count,
                rule="too-many-copies")]
    return cards, []


def load_cards(game: Game) -> list[Card]:
    """All cards of a game, deck by deck in manifest order; raise CardgenError on any error.

    Warnings (a cp1252 file, a blank row) do not stop loading: `cardgen validate` shows them.
    """
    data = read_game_data(game)
    errors = _errors_only(data.problems)
    if errors:
        raise CardgenError(errors)
    return data.cards

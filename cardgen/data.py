"""Load a deck's rows as text and convert them by the manifest's field types into Card records."""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardgen.errors import CardgenError, Problem, relative
from cardgen.expressions import ExpressionError, evaluate_mask
from cardgen.manifest import Choice, DeckSpec, FieldSpec, Game

TRUE_WORDS = {"true", "yes", "y", "1", "x"}
FALSE_WORDS = {"false", "no", "n", "0"}


@dataclass(frozen=True)
class Row:
    """One data row as the text the file holds, with where it came from."""

    values: dict[str, str]
    file: str
    line: int


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


# ---------------------------------------------------------------- reading files as text

def _decode(raw: bytes, encoding: str | None, shown_as: str) -> str:
    if encoding:
        try:
            return raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise CardgenError(f"cannot decode the file as {encoding}: {exc}", file=shown_as) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CardgenError(f"the file is not UTF-8 (byte 0x{raw[exc.start]:02x}); save it as UTF-8 "
                           "or set `encoding: cp1252` on the deck's source", file=shown_as, row=line) from None


def _leading_comment_lines(text: str) -> int:
    """How many lines at the top are `#` comments (notes a designer keeps above the header)."""
    count = 0
    for line in text.split("\n"):
        if not line.startswith("#"):
            break
        count += 1
    return count


def _sniff_delimiter(text: str) -> str:
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def read_csv_rows(path: Path, shown_as: str, delimiter: str | None = None,
                  encoding: str | None = None) -> list[Row]:
    """Read a CSV file as text rows keyed by header; delimiter and BOM are detected."""
    text = _decode(path.read_bytes(), encoding, shown_as)
    skipped = _leading_comment_lines(text)
    text = "\n" * skipped + text.split("\n", skipped)[-1] if skipped else text
    if not text.strip():
        raise CardgenError("the file is empty; expected a header row and data rows", file=shown_as)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter or _sniff_delimiter(text.lstrip("\n")))
    header: list[str] = []
    while not any(header):  # the blank lines left where comments were
        header = [h.strip() for h in next(reader)]
    _check_header(header, shown_as)
    rows = []
    header_line = reader.line_num
    line = header_line + 1
    for cells in reader:
        if any(c.strip() for c in cells):
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
                raise CardgenError(f"this row has {len(cells)} cells but the header has {len(header)} columns",
                                   file=shown_as, row=line)
            values = {h: (cells[i] if i < len(cells) else "") for i, h in enumerate(header) if h}
            rows.append(Row(values, shown_as, line))
        line = reader.line_num + 1
    return rows


def _check_header(header: list[str], shown_as: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(header):
        if name and name in seen:
            raise CardgenError(f"column '{name}' appears twice in the header (column {i + 1}); "
                               "expected unique column names", file=shown_as, column=name)
        seen.add(name)


def read_yaml_rows(path: Path, shown_as: str) -> list[Row]:
    """Read a YAML list of mappings, every scalar kept as the text written."""
    import yaml

    from cardgen.yamlsource import load_yaml  # checks syntax with line numbers
    load_yaml(path, shown_as)
    node = yaml.compose(path.read_text(encoding="utf-8-sig"), Loader=yaml.BaseLoader)
    data = yaml.load(path.read_text(encoding="utf-8-sig"), Loader=yaml.BaseLoader)
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise CardgenError("expected a YAML list of mappings (one `- name: ...` entry per card)", file=shown_as)
    rows = []
    for item, item_node in zip(data, node.value):
        values = {str(k): "" if v is None else (v if isinstance(v, str) else ";".join(map(str, v)))
                  for k, v in item.items()}
        rows.append(Row(values, shown_as, item_node.start_mark.line + 1))
    return rows


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_xlsx_rows(path: Path, shown_as: str, sheet: str | None) -> list[Row]:
    """Read one sheet of an XLSX workbook as text rows (formulas as their cached values)."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a damaged file
        raise CardgenError(f"cannot open the workbook: {exc}", file=shown_as) from None
    if sheet is not None and sheet not in book.sheetnames:
        raise CardgenError(f"no sheet '{sheet}'; the workbook has {', '.join(book.sheetnames)}", file=shown_as)
    rows_iter = (book[sheet] if sheet else book.worksheets[0]).iter_rows(values_only=True)
    header = [_cell_text(h).strip() for h in next(rows_iter, ())]
    _check_header(header, shown_as)
    rows = []
    for number, cells in enumerate(rows_iter, start=2):
        texts = [_cell_text(c) for c in cells]
        if any(t.strip() for t in texts):
            rows.append(Row({h: (texts[i] if i < len(texts) else "") for i, h in enumerate(header) if h},
                            shown_as, number))
    book.close()
    return rows


def read_rows(game: Game, deck: DeckSpec) -> list[Row]:
    """Read a deck's data source, by file type."""
    source = deck.source
    path = (game.data_dir / source.file).resolve()
    shown_as = relative(game.data_dir / source.file, game.root)
    if not path.is_relative_to(game.root.resolve()):
        raise CardgenError("the data file lies outside the project folder", file=shown_as)
    if not path.is_file():
        raise CardgenError("the data file does not exist", file=shown_as)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".txt"):
        return read_csv_rows(path, shown_as, source.delimiter, source.encoding)
    if suffix in (".yaml", ".yml"):
        return read_yaml_rows(path, shown_as)
    if suffix == ".xlsx":
        return read_xlsx_rows(path, shown_as, source.sheet)
    raise CardgenError(f"unknown data file type '{suffix}'; expected .csv, .yaml or .xlsx", file=shown_as)


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
            return _in_range(float(stripped), spec)
        except ValueError:
            raise ValueError(f"'{stripped}' is not a number") from None
    if kind == "bool":
        if stripped.lower() in TRUE_WORDS:
            return True
        if stripped.lower() in FALSE_WORDS:
            return False
        raise ValueError(f"'{stripped}' is not yes/no (expected true, false, yes, no, 1 or 0)")
    if kind == "enum":
        if stripped not in spec.values:  # type: ignore[operator]
            raise ValueError(f"'{stripped}' is not one of {', '.join(spec.values)}")  # type: ignore[arg-type]
        return stripped
    items = [i.strip() for i in stripped.split(spec.separator) if i.strip()]
    return [convert_value(i, FieldSpec(type=spec.item)) for i in items]


def _in_range(number: float, spec: FieldSpec) -> float:
    if spec.min is not None and number < spec.min:
        raise ValueError(f"{number} is below the minimum {spec.min:g}")
    if spec.max is not None and number > spec.max:
        raise ValueError(f"{number} is above the maximum {spec.max:g}")
    return number


def slugify(text: str) -> str:
    """An id from a name: lowercase ASCII words joined by hyphens."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "card"


def convert_row(row: Row, specs: dict[str, FieldSpec]) -> tuple[dict[str, Any], list[Problem]]:
    """Typed values of one row (undeclared columns stay text) and the problems found."""
    values: dict[str, Any] = {}
    problems = []
    for column, text in row.values.items():
        spec = specs.get(column, FieldSpec())
        try:
            values[column] = convert_value(text, spec)
        except ValueError as exc:
            problems.append(Problem(f"{exc}", file=row.file, row=row.line, column=column))
    for column, spec in specs.items():
        if column not in row.values:
            if spec.required and spec.default is None:
                problems.append(Problem(f"required column '{column}' is missing", file=row.file, row=row.line,
                                        column=column))
            values[column] = spec.default
    return values, problems


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
    return copies


def _filter_rows(game: Game, deck_name: str, deck: DeckSpec, rows: list[Row],
                 typed: list[dict[str, Any]]) -> list[int]:
    if not deck.filter:
        return list(range(len(rows)))
    import pandas as pd

    frame = pd.DataFrame(typed, dtype=object)
    try:
        mask = evaluate_mask(frame, deck.filter)
    except Exception as exc:  # pandas raises many error types for a bad expression
        raise CardgenError(f"decks.{deck_name}.filter: {exc}", file=relative(game.manifest_path, game.root),
                           row=game.line("decks", deck_name, "filter")) from None
    return [i for i, keep in enumerate(mask.tolist()) if keep]


def load_deck(game: Game, deck_name: str) -> list[Card]:
    """Read, type-convert and filter one deck's rows into Card records."""
    deck = game.spec.decks[deck_name]
    rows = read_rows(game, deck)
    specs = game.fields_of(deck)
    typed, problems = [], []
    for row in rows:
        values, row_problems = convert_row(row, specs)
        typed.append(values)
        problems += row_problems
    if problems:
        raise CardgenError(problems)
    cards = []
    for i in _filter_rows(game, deck_name, deck, rows, typed):
        row, values = rows[i], typed[i]
        name = str(values.get(deck.name) or "")
        card_id = str(values.get(deck.id) or "") if deck.id else slugify(name)
        if not card_id:
            raise CardgenError("the card has no id: its name is empty", file=row.file, row=row.line,
                               column=deck.id or deck.name)
        cards.append(Card(card_id, deck_name, name, _copies(values, deck, row), values,
                          _template_for(deck.face, values, row), _template_for(deck.back, values, row),
                          row.file, row.line, list(deck.text)))
    return cards


def load_cards(game: Game) -> list[Card]:
    """All cards of a game, deck by deck in manifest order; ids must be unique within the game."""
    cards: list[Card] = []
    problems: list[Problem] = []
    for deck_name in game.spec.decks:
        try:
            cards += load_deck(game, deck_name)
        except CardgenError as exc:
            problems += exc.problems
    seen: dict[str, Card] = {}
    for card in cards:
        if card.id in seen:
            first = seen[card.id]
            problems.append(Problem(f"duplicate card id '{card.id}' (also at {first.source_file}:"
                                    f"{first.source_row}); ids must be unique within the game",
                                    file=card.source_file, row=card.source_row))
        seen.setdefault(card.id, card)
    if problems:
        raise CardgenError(problems)
    return cards

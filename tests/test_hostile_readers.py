"""Hostile data files, records and fonts given to cardgen's readers: each is refused within seconds with one
located error (or read as meant), never a traceback, a flood of findings or gigabytes of memory."""
from __future__ import annotations

import codecs
import io
import json
import random
import re
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Callable

import openpyxl
import pytest
from fontTools.ttLib import TTFont

from cardgen.core import bundled
from cardgen.core.errors import CardgenError
from cardgen.load.data import (
    MAX_DATA_BYTES,
    MAX_PACKING,
    MAX_SHARED_STRINGS,
    MAX_WORKBOOK_BYTES,
    read_csv_table,
    read_xlsx_table,
    yaml_table,
)
from cardgen.record.record import MAX_RECORD_BYTES, MAX_RECORD_VALUES
from tests.hostile_example import GAME, run

CSV = "name,power\nAlpha,1\nBeta,2\n"


def _refused(read: Callable[..., object], *args: object) -> CardgenError:
    """The one error a reader raises for a file."""
    with pytest.raises(CardgenError) as info:
        read(*args)
    assert len(info.value.problems) == 1, info.value.problems
    assert "\x00" not in str(info.value)
    return info.value


# ---------------------------------------------------------------- CSV encodings

def test_a_utf16_csv_of_odd_length_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "cards.csv"
    path.write_bytes(CSV.encode("utf-16") + b"x")  # one byte short of a character
    error = _refused(read_csv_table, path, "cards.csv")
    assert str(error).startswith("cards.csv:4: error: cannot decode the file as utf-16 (truncated data")


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be")])
def test_utf32_with_a_bom_is_read(tmp_path: Path, bom: bytes, codec: str) -> None:
    path = tmp_path / "cards.csv"
    path.write_bytes(bom + CSV.encode(codec))
    table = read_csv_table(path, "cards.csv")
    assert [r.values for r in table.rows] == [{"name": "Alpha", "power": "1"}, {"name": "Beta", "power": "2"}]
    assert table.problems == []


@pytest.mark.parametrize("raw", [codecs.BOM_UTF8 * 2 + CSV.encode(), ("\ufeff" + CSV).encode("utf-16")])
def test_a_double_bom_is_one_warning(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "cards.csv"
    path.write_bytes(raw)
    table = read_csv_table(path, "cards.csv")
    assert table.header == ["name", "power"] and len(table.rows) == 2
    assert [(p.severity, p.row, "twice" in p.message) for p in table.problems] == [("warning", 1, True)]


def test_nul_in_a_declared_encoding_is_one_error_without_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "cards.csv"
    path.write_bytes(CSV.replace("Beta", "Be\x00ta").encode())
    error = _refused(read_csv_table, path, "cards.csv", None, "utf-8")
    assert str(error).startswith("cards.csv:3: error: the file holds NUL bytes")


@pytest.mark.parametrize("name", ["cards.csv", "cards.yaml", "cards.xlsx"])
def test_a_data_file_too_large_is_refused_before_it_is_read(fresh_example: Path, name: str) -> None:
    data = fresh_example / "data" / GAME
    (data / "cards.csv").rename(data / name)
    with (data / name).open("a") as handle:
        handle.truncate(MAX_DATA_BYTES + 1)  # sparse: nothing is written
    manifest = data / "game.yaml"
    manifest.write_text(manifest.read_text().replace("source: cards.csv", f"source: {name}"))
    started = time.monotonic()
    result = run(fresh_example, "validate", GAME)
    assert result.exit_code == 1 and "Traceback" not in result.output and time.monotonic() - started < 10
    [error] = [line for line in result.output.splitlines() if ": error: " in line]
    assert error == (f"data/{GAME}/{name}: error: the data file is {MAX_DATA_BYTES // 1_000_000} MB, more than the "
                     f"limit of {MAX_DATA_BYTES // 1_000_000} MB (too-long)"), result.output


# ---------------------------------------------------------------- YAML

@pytest.mark.parametrize("text, line, words", [
    ("- name: a\n  power: !!int x\n", 2, "'x' is not a valid int value"),
    ("- name: a\n  when: !!timestamp 2001-99-99\n", 2, "'2001-99-99' is not a valid timestamp value"),
    ("- name: a\n  power: !!float x\n", 2, "'x' is not a valid float value"),
    ("- &a\n  name: a\n  more: [*a]\n", 1, "holds itself through an alias"),
    ("- name: a\n- &b {name: b, <<: *b}\n", 2, "holds itself through an alias"),
    ("&c [*c]\n", 1, "holds itself through an alias"),
])
def test_yaml_tags_and_recursive_anchors_are_located_errors(text: str, line: int, words: str) -> None:
    error = _refused(yaml_table, text, "cards.yaml")
    assert str(error).startswith(f"cards.yaml:{line}: error: ") and words in str(error), str(error)


def test_a_recursive_anchor_in_game_yaml_is_a_located_error(fresh_example: Path) -> None:
    manifest = fresh_example / "data" / GAME / "game.yaml"
    manifest.write_text(manifest.read_text() + "extra: &loop {again: *loop}\n")
    result = run(fresh_example, "validate", GAME)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if ": error: " in line]
    assert error.startswith(f"data/{GAME}/game.yaml:") and "holds itself through an alias" in error


# ---------------------------------------------------------------- XLSX

_SHARED = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"


def _workbook(strings: bytes = b"") -> bytes:
    """A small workbook (header and one card) whose shared-string part holds `strings` (`<si>` elements)."""
    book = openpyxl.Workbook()
    book.active.append(["name", "power"])
    book.active.append(["Alpha", 1])
    made = io.BytesIO()
    book.save(made)
    out = io.BytesIO()
    with zipfile.ZipFile(made) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for part in source.infolist():
            data = source.read(part)
            if part.filename == "[Content_Types].xml" and strings:
                data = data.replace(b"</Types>", f'<Override PartName="/xl/sharedStrings.xml" ContentType='
                                                 f'"{_SHARED}"/></Types>'.encode())
            target.writestr(part, data)
        if strings:
            target.writestr("xl/sharedStrings.xml", b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
                            b'2006/main">' + strings + b"</sst>")
    return out.getvalue()


def _timed_refusal(path: Path) -> str:
    started = time.monotonic()
    error = _refused(read_xlsx_table, path, "cards.xlsx", None)
    assert time.monotonic() - started < 5
    return str(error)


def test_a_shared_string_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cards.xlsx"
    path.write_bytes(_workbook(b"<si><t/></si>" * 15_000_000))  # the file: 195 MB in ~0.4 MB
    assert path.stat().st_size < 1_000_000
    assert _timed_refusal(path).startswith(f"cards.xlsx: error: the workbook unpacks to 195 MB, more than the "
                                           f"limit of {MAX_WORKBOOK_BYTES // 1_000_000} MB")


def test_a_part_packed_too_tightly_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cards.xlsx"
    path.write_bytes(_workbook(b"<si><t/></si>" * 1_000_000))  # 13 MB, packed ~500x
    error = _timed_refusal(path)
    assert error.startswith("cards.xlsx: error: the workbook's part xl/sharedStrings.xml unpacks to") and \
        f"more than {MAX_PACKING}x" in error, error


def test_too_many_shared_strings_are_refused_before_they_are_read(tmp_path: Path) -> None:
    words = random.Random(1)
    path = tmp_path / "cards.xlsx"
    path.write_bytes(_workbook(b"".join(b"<si><t>%x</t></si>" % words.getrandbits(40)
                                        for _ in range(MAX_SHARED_STRINGS + 1))))  # packed ~3x: not a bomb
    assert _timed_refusal(path) == (f"cards.xlsx: error: the workbook holds more than {MAX_SHARED_STRINGS:,} "
                                    "distinct texts (its part xl/sharedStrings.xml); that many are refused "
                                    "(too-long)")


@pytest.mark.parametrize("part, old, new", [("xl/workbook.xml", rb"<sheets>.*</sheets>", b"<sheets/>"),
                                             ("xl/_rels/workbook.xml.rels", rb"sheet1\.xml", b"gone.xml")])
def test_a_workbook_without_its_sheet_is_a_located_error(tmp_path: Path, part: str, old: bytes, new: bytes) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(_workbook())) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info, re.sub(old, new, data) if info.filename == part else data)
    path = tmp_path / "cards.xlsx"
    path.write_bytes(out.getvalue())
    assert str(_refused(read_xlsx_table, path, "cards.xlsx", None)).startswith(
        "cards.xlsx: error: the workbook has no sheet cardgen can find")


def test_a_workbook_with_shared_strings_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cards.xlsx"
    path.write_bytes(_workbook(b"<si><t>unused</t></si>" * 3))
    assert [r.values for r in read_xlsx_table(path, "cards.xlsx", None).rows] == [{"name": "Alpha", "power": "1"}]


@pytest.mark.parametrize("old, new, row", [
    (b'<c r="B2" t="n"><v>1</v>', b'<c r="B2" t="n"><v>x</v>', 2),  # a number that is not one
    (b'<c r="B2" t="n"><v>1</v>', b'<c r="B2" t="d"><v>2001-99-99</v>', 2),  # a date that is not one
    (b'<c r="B2" t="n"><v>1</v>', b'<c r="B2" t="s"><v>99</v>', 2),  # a shared text that is not there
    (b'r="B2"', b'r="ZZZZZ2"', 2),  # a column past the last
    (b"</sheetData>", b"", 3),  # XML that breaks after the rows
])
def test_a_damaged_sheet_is_a_located_error(tmp_path: Path, old: bytes, new: bytes, row: int) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(_workbook())) as source, zipfile.ZipFile(out, "w") as target:
        for part in source.infolist():
            data = source.read(part)
            target.writestr(part, data.replace(old, new) if part.filename == "xl/worksheets/sheet1.xml" else data)
    path = tmp_path / "cards.xlsx"
    path.write_bytes(out.getvalue())
    error = str(_refused(read_xlsx_table, path, "cards.xlsx", None))
    assert error.startswith(f"cards.xlsx:{row}: error: the sheet cannot be read from this row on"), error


# ---------------------------------------------------------------- build records and snapshots

@pytest.mark.parametrize("cards, words", [
    (7_000_000, f"the file holds more than {MAX_RECORD_VALUES:,} JSON values"),  # the issue's: ~21 MB, ~6 GB
    (1_500_000, "not a build record cardgen can read (cards.0.id: Field required)"),  # within bounds: fails fast
])
def test_a_snapshot_of_empty_cards_is_refused_without_gigabytes(example: Path, cards: int, words: str) -> None:
    assert run(example, "snapshot", GAME, "v1").exit_code == 0
    snapshot = example / "data" / GAME / "snapshots" / "v1.json"
    record = json.loads(snapshot.read_text())
    record["cards"] = "CARDS"
    snapshot.write_text(json.dumps(record).replace('"CARDS"', "[" + "{}," * cards + "{}]"))
    # gigabytes of validation errors before the fix: run in 2 GB of address space, so that it fails, not the machine
    limit = 2_000_000_000
    result = subprocess.run([sys.executable, "-m", "cardgen", "--root", str(example), "changes", GAME, "--since", "v1"],
                            capture_output=True, text=True, timeout=300,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    [error] = [line for line in (result.stdout + result.stderr).splitlines() if "error:" in line]
    assert error.startswith(f"data/{GAME}/snapshots/v1.json: error: {words}"), error


def test_a_snapshot_too_large_is_refused_before_it_is_read(example: Path) -> None:
    assert run(example, "snapshot", GAME, "v1").exit_code == 0
    snapshot = example / "data" / GAME / "snapshots" / "v1.json"
    with snapshot.open("a") as handle:
        handle.truncate(MAX_RECORD_BYTES + 1)  # sparse: nothing is written, and it is no longer JSON either
    result = run(example, "changes", GAME, "--since", "v1")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"data/{GAME}/snapshots/v1.json: error: the file is 64 MB, more than the 64 MB a build record may be" \
        in result.output


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_deeply_nested_build_json_or_snapshot_is_a_located_error(example: Path, depth: int) -> None:
    build = example / "output" / GAME / "build.json"
    record = json.loads(build.read_text())
    record["cards"][0]["fields"]["deep"] = "DEEP"
    deep = json.dumps(record).replace('"DEEP"', "[" * depth + "]" * depth)
    snapshot = example / "data" / GAME / "snapshots" / "v1.json"
    snapshot.parent.mkdir(exist_ok=True)
    snapshot.write_text(deep)
    result = run(example, "changes", GAME, "--since", "v1")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"data/{GAME}/snapshots/v1.json: error: not valid JSON (recursion limit exceeded at line 1" in result.output
    build.write_text(deep)
    result = run(example, "snapshot", GAME, "v2")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{build}: error: not valid JSON (recursion limit exceeded at line 1" in result.output


# ---------------------------------------------------------------- fonts

def _damaged_font(kind: str) -> bytes:
    """A bundled font made unusable in one way."""
    raw = (bundled.FONTS_DIR / "ShareTechMono-Regular.ttf").read_bytes()
    if kind == "cut short":
        return raw[: len(raw) * 2 // 3]
    font = TTFont(io.BytesIO(raw))
    if kind == "unitsPerEm 0":
        font["head"].unitsPerEm = 0
    out = io.BytesIO()
    font.save(out)
    data = out.getvalue()
    if kind == "name table":  # the record count says 65,535: fontTools warns once for each missing record
        name = TTFont(io.BytesIO(data)).reader.tables["name"]
        data = data[: name.offset + 2] + b"\xff\xff" + data[name.offset + 4:]
    return data


@pytest.mark.parametrize("kind, words", [("cut short", "the font is cut short: its 'glyf' table ends at byte"),
                                         ("unitsPerEm 0", "the font's unitsPerEm is 0, outside 16-16384"),
                                         ("name table", "the font is damaged: ")])
def test_a_damaged_font_is_one_finding_naming_it(fresh_example: Path, kind: str, words: str) -> None:
    (fresh_example / "fonts").mkdir(exist_ok=True)
    (fresh_example / "fonts" / "ShareTechMono-Regular.ttf").write_bytes(_damaged_font(kind))
    for command in (["validate", GAME], ["build", GAME, "-j", "1"]):
        result = run(fresh_example, *command)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        lines = result.output.splitlines()
        assert len(lines) <= 3, lines[:5]  # the finding and a summary: no log line for each name record
        [error] = [line for line in lines if ": error: " in line]
        assert error.startswith("fonts/ShareTechMono-Regular.ttf: error: cannot read the file as a font (") \
            and words in error, error
    assert not (fresh_example / "output" / GAME).exists()  # found before any card was drawn


def test_each_unusable_font_is_named_once(fresh_example: Path) -> None:
    (fresh_example / "fonts").mkdir(exist_ok=True)
    (fresh_example / "fonts" / "A.ttf").write_bytes(_damaged_font("cut short"))
    (fresh_example / "fonts" / "B.ttf").write_bytes(_damaged_font("unitsPerEm 0"))
    result = run(fresh_example, "validate", GAME)
    errors = [line.split(": error:")[0] for line in result.output.splitlines() if ": error: " in line]
    assert result.exit_code == 1 and errors == ["fonts/A.ttf", "fonts/B.ttf"], result.output

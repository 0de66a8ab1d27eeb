"""Small inputs that used to hang or take gigabytes: every input has a bound a designer never reaches, and
crossing it is a located finding within seconds."""
from __future__ import annotations

import base64
import csv
import json
import re
import struct
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.conftest import SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, write_game
from tests.hostile_example import GAME, run

SECONDS = 60  # generous on a loaded machine; each of these hung for minutes or ran out of memory before


def _manifest(root: Path, old: str, new: str, count: int = 1) -> None:
    manifest = root / "data" / GAME / "game.yaml"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new, count))


def _validate(root: Path, *args: str) -> tuple[int, list[str]]:
    started = time.monotonic()
    result = run(root, "validate", GAME, *args)
    assert time.monotonic() - started < SECONDS
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))
    return result.exit_code, [line for line in result.output.splitlines() if ": error: " in line]


def _line_of(root: Path, text: str) -> int:
    lines = (root / "data" / GAME / "game.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


@pytest.mark.parametrize("expr, words", [
    ("9**9**9 > 0", "an exponent must be a plain number"),
    ("'a' * 10**10 == 'b'", "repeating a text or a list is not allowed"),
    (" + ".join(["count"] * 20_000) + " > 0", "nested more than 100 levels deep"),
])
def test_filter_bombs_are_findings(fresh_example: Path, expr: str, words: str) -> None:
    _manifest(fresh_example, "filter: \"pile == 'center'\"", f"filter: \"pile == 'center' and {expr}\"")
    code, errors = _validate(fresh_example, "--no-layout")
    line = _line_of(fresh_example, "and " + expr[:20])
    assert code == 1 and any(e.startswith(f"data/{GAME}/game.yaml:{line}:") and words in e for e in errors), errors


def test_rule_bomb_is_a_finding(fresh_example: Path) -> None:
    _manifest(fresh_example, "check: \"name == 'Head Trauma'\"", "check: \"name == 'x' * 10**10\"")
    code, errors = _validate(fresh_example, "--no-layout")
    assert code == 1 and any("repeating a text or a list is not allowed" in e for e in errors), errors


def test_long_name_lists_and_arithmetic_on_whole_numbers_work(fresh_example: Path) -> None:
    names = ", ".join(f"'Card {i}'" for i in range(20_000))
    _manifest(fresh_example, "filter: \"pile == 'center'\"", f"filter: \"pile == 'center' and name not in [{names}]\"")
    _manifest(fresh_example, "filter: \"pile == 'starting'\"", "filter: \"pile == 'starting' and count * 2 > 2\"")
    assert _validate(fresh_example, "--no-layout") == (0, [])


def test_mistyped_copy_count_is_a_finding(fresh_example: Path) -> None:
    cards = fresh_example / "data" / GAME / "cards.csv"
    cards.write_text(cards.read_text().replace("Drone,Scrapbot,center,8,", "Drone,Scrapbot,center,1000000,"))
    code, errors = _validate(fresh_example, "--no-layout")
    assert code == 1 and errors[0].startswith(f"data/{GAME}/cards.csv:10:count: error: copy count 1,000,000 is more")


@pytest.mark.parametrize("far_cell, expected", [
    ("", []),  # the declared dimension alone: the sheet is read as it is stored
    ('<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>',
     [f"data/{GAME}/components.xlsx:1048576: error: the row has a value in column XFD, past the limit of 1,000 "
      "columns; delete what lies right of your data (too-long)"]),
    ('<row r="99999999"><c r="A99999999" t="inlineStr"><is><t>x</t></is></c></row>',
     [f"data/{GAME}/components.xlsx:1048577: error: the sheet claims rows past row 1,048,576, the last a "
      "spreadsheet can have; save it again from your spreadsheet program (too-long)"]),
])
def test_workbook_declaring_a_huge_sheet_is_read_in_seconds(fresh_example: Path, far_cell: str,
                                                            expected: list[str]) -> None:
    import openpyxl

    data = fresh_example / "data" / GAME
    book = openpyxl.Workbook()
    with open(data / "components.csv", encoding="utf-8") as handle:
        for row in csv.reader(line for line in handle if not line.startswith("#")):
            book.active.append([int(c) if c.isdigit() else (c or None) for c in row])
    book.save(data / "components.xlsx")
    with zipfile.ZipFile(data / "components.xlsx") as source:
        parts = {name: source.read(name) for name in source.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', parts[sheet])
    parts[sheet] = parts[sheet].replace(b"</sheetData>", far_cell.encode() + b"</sheetData>")
    with zipfile.ZipFile(data / "components.xlsx", "w", zipfile.ZIP_DEFLATED) as target:
        for name, content in parts.items():
            target.writestr(name, content)
    assert (data / "components.xlsx").stat().st_size < 8000
    (data / "components.csv").unlink()
    _manifest(fresh_example, "source: components.csv", "source: components.xlsx", count=-1)
    assert _validate(fresh_example, "--no-layout") == (1 if expected else 0, expected)


def test_print_on_absurd_paper_or_margins_is_an_error(example: Path) -> None:
    for flags, words in [(["--paper", "100000x100000mm"], "larger than 3000 mm"),
                         (["--margin", "1000mm"], "at most 100 mm"),
                         (["--margin", "100mm"], "leaves no room for cards"),
                         (["--back-offset", "nan,nan"], "is not 'X,Y' in mm")]:
        started = time.monotonic()
        result = run(example, "print", GAME, *flags)
        assert time.monotonic() - started < SECONDS and result.exit_code == 1, result.output
        assert "Traceback" not in result.output and words in result.output, result.output


def test_absurd_margin_in_the_manifest_is_a_located_error(example: Path) -> None:
    _manifest(example, '  back_offset: "0,0"', '  margin: 1000mm\n  back_offset: "0,0"')
    line = _line_of(example, "margin: 1000mm")
    for command in ("validate", "print"):
        result = run(example, command, GAME)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert f"data/{GAME}/game.yaml:{line}: error: print.margin: must be at most 100 mm" in result.output


def _png_header(width: int, height: int) -> bytes:
    """A valid PNG claiming any size with one tiny row (Pillow reads only the header)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 11)) + \
        chunk(b"IEND", b"")


def test_small_svg_embedding_a_huge_picture_is_refused(fresh_example: Path) -> None:
    icons = fresh_example / "icons"
    icons.mkdir(exist_ok=True)
    picture = base64.b64encode(_png_header(20000, 20000)).decode()
    (icons / "delivery-drone.svg").write_text(  # the Drone's art: a workspace icon takes precedence
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
        f'<image width="10" height="10" xlink:href="data:image/png;base64,{picture}"/></svg>')
    code, errors = _validate(fresh_example)
    assert code == 1 and errors, errors
    assert all("icons/delivery-drone.svg cannot be used: the SVG embeds a picture with far too many pixels" in e
               for e in errors), errors


@pytest.mark.parametrize("size, words", [
    ("{width: 1000mm, height: 1500mm, bleed: 0, safe: 5mm, dpi: 300}", "lower the deck's dpi"),
    ("{width: 0mm, height: 300mm, bleed: 0, safe: 5mm, dpi: 150}", "a side under 5 mm cannot be cut out"),
    ("{width: 0.05mm, height: 0.05mm, bleed: 0, safe: 0, dpi: 150}", "a side under 5 mm cannot be cut out"),
    ("{width: 8mm, height: 8mm, bleed: 0, safe: 0, dpi: 36}", "8 mm side is 11.3 px; a card needs at least 16 px"),
    ("{width: 400m, height: 300mm, bleed: 0, safe: 5mm, dpi: 150}", "is not a length"),
])
def test_impossible_sizes_are_size_errors(fresh_example: Path, size: str, words: str) -> None:
    _manifest(fresh_example, "size: {width: 400mm, height: 300mm, bleed: 0, safe: 5mm, dpi: 150}", f"size: {size}")
    code, errors = _validate(fresh_example)
    assert code == 1 and len(errors) == 1 and words in errors[0], errors
    assert errors[0].startswith(f"data/{GAME}/game.yaml:")


@pytest.mark.parametrize("command", [("print", GAME), ("build", GAME, "-j", "1"), ("tts", GAME)])
def test_a_card_too_small_to_cut_stops_every_command_at_its_size(fresh_example: Path, command: tuple[str, ...]) -> None:
    # Before: validation passed it, print planned millions of slots (3.7 GB after 60 s) and the TTS stage of
    # `build -j 1` stopped with a PIL traceback.
    _manifest(fresh_example, "size: {width: 22mm, height: 22mm, bleed: 1mm, safe: 1.5mm}",
              "size: {width: 0.05mm, height: 0.05mm, bleed: 0, safe: 0}")
    line = _line_of(fresh_example, "size: {width: 0.05mm")
    started = time.monotonic()
    result = run(fresh_example, *command)
    assert time.monotonic() - started < SECONDS and result.exit_code == 1 and "Traceback" not in result.output
    assert f"data/{GAME}/game.yaml:{line}: error: decks.damage.size: the size is 0.05 x 0.05 mm; a side under 5 mm " \
        "cannot be cut out" in result.output, result.output


def _many_copies(root: Path, rows: int) -> None:
    write_game(root, "many", SIMPLE_MANIFEST, {"cards.csv": "name,text,count\n" + "".join(
        f"Card {i},x,1000\n" for i in range(rows))}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})


def test_copies_of_a_whole_game_have_a_bound(workspace: Path) -> None:
    # 300 rows of 1,000 copies, a 9 kB file, took 201 s and 1.9 GB to build before.
    _many_copies(workspace, 300)
    for command in ("validate", "build"):
        started = time.monotonic()
        result = run(workspace, command, "many", "--no-layout" if command == "validate" else "-j1")
        assert time.monotonic() - started < SECONDS and result.exit_code == 1, result.output
        assert "data/many/cards.csv:102:count: error: the game's copies add up to 101,000 with this card's, more " \
            "than the 100,000 a game may print (all decks together); this card and those after it are left out" \
            in result.output, result.output
        assert not (workspace / "output" / "many").exists()
    _many_copies(workspace, 100)  # exactly the bound: a game may print it
    assert run(workspace, "validate", "many", "--no-layout").exit_code == 0


def test_a_forced_build_stays_within_the_copy_bound(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cardgen.load.data.MAX_GAME_COPIES", 3_000)  # the same rule at a size a test builds quickly
    _many_copies(workspace, 300)
    result = run(workspace, "build", "many", "--force", "-j1")
    assert result.exit_code == 1 and "data/many/cards.csv:5:count: error: the game's copies add up to 4,000" \
        in result.output, result.output
    record = json.loads((workspace / "output" / "many" / "build.json").read_text())
    assert (record["stats"]["cards"], record["stats"]["copies"]) == (3, 3_000)


def test_delimiter_of_two_characters_is_a_manifest_error(fresh_example: Path) -> None:
    _manifest(fresh_example, "source: components.csv", "source: {file: components.csv, delimiter: 'ab'}")
    code, errors = _validate(fresh_example)
    assert code == 1 and len(errors) == 1 and "delimiter" in errors[0] and "1 character" in errors[0], errors


def test_small_svg_art_embedding_a_huge_picture_is_refused(fresh_example: Path) -> None:
    picture = base64.b64encode(_png_header(20000, 20000)).decode()
    (fresh_example / "data" / GAME / "bomb.svg").write_text(  # 48 kB at most, 400 megapixels once drawn
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
        f'<image width="10" height="10" xlink:href="data:image/png;base64,{picture}"/></svg>')
    back = fresh_example / "templates" / GAME / "back.svg"
    lines = back.read_text().splitlines(keepends=True)
    back.write_text("".join([*lines[:2], "{{ image('bomb.svg', 0, 0, 100, 100) }}\n", *lines[2:]]))
    code, errors = _validate(fresh_example)
    assert code == 1 and len(errors) == 1, errors
    assert errors[0].startswith(f"templates/{GAME}/back.svg:3: error: image 'data/{GAME}/bomb.svg' cannot be used: "
                                "the SVG embeds a picture with far too many pixels"), errors


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://example.org/x/", "example.org/x", "https://a b/"])
def test_a_base_url_that_is_no_web_address_is_refused(example: Path, url: str) -> None:
    result = run(example, "tts", GAME, "--base-url", url)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"error: --base-url: '{url}' is not a web address" in result.output
    _manifest(example, '  back_offset: "0,0"', f'  back_offset: "0,0"\ntts:\n  base_url: "{url}"')
    code, errors = _validate(example, "--no-layout")
    assert code == 1 and errors == [f"data/{GAME}/game.yaml:{_line_of(example, 'base_url')}: error: tts.base_url: "
                                    f"'{url}' is not a web address; expected http:// or https:// and the folder "
                                    "the images are uploaded to (or file:/// and a folder)"], errors

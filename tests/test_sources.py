"""The data-source registry: one reader per suffix or URL scheme; local JSON and LibreOffice .ods files."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from cardgen.core.errors import CardgenError
from cardgen.load.data import load_cards
from cardgen.load.manifest import load_game
from cardgen.load.sources import READERS
from tests.conftest import REPO, SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, run_cli, write_game


def _game(root: Path, source: str, files: dict[str, str | bytes]) -> Path:
    return write_game(root, "g", SIMPLE_MANIFEST.replace("source: cards.csv", f"source: {source}"), files,
                      {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})


def _refused(root: Path) -> list[str]:
    with pytest.raises(CardgenError) as info:
        load_cards(load_game(root, "g"))
    return [str(p) for p in info.value.problems]


# ---------------------------------------------------------------- JSON

def test_a_json_list_of_objects_builds_a_game(workspace: Path) -> None:
    rows = [{"name": "Alpha", "power": 1, "text": "Fire", "count": 2}, {"name": "Beta", "power": 2, "tags": ["a", "b"]}]
    _game(workspace, "cards.json", {"cards.json": json.dumps(rows, indent=2)})
    run_cli(workspace, "build", "g")
    record = json.loads((workspace / "output" / "g" / "build.json").read_text())
    assert [(c["name"], c["copies"]) for c in record["cards"]] == [("Alpha", 2), ("Beta", 1)]
    cards = load_cards(load_game(workspace, "g"))
    assert cards[0].fields["power"] == 1 and cards[1].fields["tags"] == "a;b"
    assert [(c.source_file, c.source_row) for c in cards] == [("data/g/cards.json", 2), ("data/g/cards.json", 8)]


def test_a_json_object_of_decks_reads_the_list_named_by_sheet(workspace: Path) -> None:
    text = ('{"heroes": [{"name": "A", "power": 1}],\n "villains": [\n  {"name": "V", "power": 2},\n'
            '  {"name": "W", "power": "x"}]}')
    _game(workspace, "{file: cards.json, sheet: villains}", {"cards.json": text})
    assert _refused(workspace) == ["data/g/cards.json:4:power: error: 'x' is not a whole number"]
    _game(workspace, "cards.json", {"cards.json": text})
    assert _refused(workspace) == ["data/g/cards.json:1: error: the JSON object holds lists by deck ('heroes', "
                                   "'villains'); name one with `sheet:` on the deck's source"]


@pytest.mark.parametrize("text,found", [
    ('[{"name": "A"},\n {"name": "B",}]', "data/g/cards.json:2: error: the file is not valid JSON: Expecting "
                                          "property name enclosed in double quotes (column 15) (damaged-file)"),
    ('[{"name": "A"},\n 7]', "data/g/cards.json:2: error: expected an object ({\"name\": ...}) for each card, not "
                             "the value 7; it is skipped"),
    ('[{"name": "A",\n  "power": {"x": 1}}]', "data/g/cards.json:1:power: error: expected a text, a number, "
                                              "true/false or a list of them, not an object"),
    ('"cards"', "data/g/cards.json:1: error: expected a JSON list of objects (one {\"name\": ...} per card), or an "
                "object holding such a list by deck"),
    ("[" * 100_000 + "]" * 100_000, "data/g/cards.json: error: the JSON nests deeper than Python can read; expected "
                                    "a list of flat objects (too-long)"),
])
def test_a_broken_json_file_is_one_located_error(workspace: Path, text: str, found: str) -> None:
    _game(workspace, "cards.json", {"cards.json": text})
    assert _refused(workspace) == [found]


# ---------------------------------------------------------------- ODS

_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')


def _cell(value: str | float, repeat: int = 1) -> str:
    rep = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    if isinstance(value, str):
        return f'<table:table-cell office:value-type="string"{rep}><text:p>{value}</text:p></table:table-cell>'
    return f'<table:table-cell office:value-type="float" office:value="{value}"{rep}><text:p>{value:.2f}</text:p>' \
           "</table:table-cell>"


def _ods(path: Path, sheets: dict[str, list[str]]) -> None:
    """An .ods as LibreOffice writes it: each sheet's rows, then the rest of the sheet as one repeated empty row."""
    tables = "".join(f'<table:table table:name="{name}"><table:table-column table:number-columns-repeated="1024"/>'
                     + "".join(rows) + '<table:table-row table:number-rows-repeated="1048570">'
                     '<table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>'
                     for name, rows in sheets.items())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", zipfile.ZIP_STORED)
        book.writestr("content.xml", f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS}>'
                      f"<office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body>"
                      "</office:document-content>")


def _row(*cells: str, repeat: int = 1) -> str:
    rep = f' table:number-rows-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-row{rep}>{''.join(cells)}</table:table-row>"


_PARAGRAPHS = ('<table:table-cell office:value-type="string"><text:p>two<text:s text:c="2"/>spaces</text:p>'
               '<text:p>and <text:span>a line</text:span></text:p></table:table-cell>')


def test_an_ods_sheet_builds_a_game_with_its_rows_located(workspace: Path) -> None:
    _game(workspace, "{file: cards.ods, sheet: Cards}", {})
    _ods(workspace / "data" / "g" / "cards.ods", {
        "Notes": [_row(_cell("not cards"))],
        "Cards": [_row(_cell("name"), _cell("power"), _cell("count"), _cell("text")),
                  _row(_cell("Alpha"), _cell(3.0), _cell(2.0), _PARAGRAPHS),
                  _row('<table:table-cell table:number-columns-repeated="4"/>', repeat=2),
                  _row(_cell("Beta"), _cell(1.5), _cell(1.0), repeat=2)]})
    run_cli(workspace, "build", "g", expect=1)  # Beta twice: a duplicate id, at its second row
    problems = [str(p) for p in _data_problems(workspace)]
    assert "data/g/cards.ods:3: warning: blank row between cards; it is skipped (blank-row)" in problems
    assert "data/g/cards.ods:5:power: error: '1.5' is not a whole number" in problems
    assert any(p.startswith("data/g/cards.ods:6: error: duplicate card id 'beta'") for p in problems)
    _ods(workspace / "data" / "g" / "cards.ods", {"Notes": [], "Cards": [
        _row(_cell("name"), _cell("power"), _cell("count"), _cell("text")),
        _row(_cell("Alpha"), _cell(3.0), _cell(2.0), _PARAGRAPHS)]})
    run_cli(workspace, "build", "g")
    [card] = load_cards(load_game(workspace, "g"))
    assert (card.fields["power"], card.copies, card.fields["text"]) == (3, 2, "two  spaces\nand a line")


def _data_problems(root: Path) -> list:
    from cardgen.load.data import read_game_data

    return read_game_data(load_game(root, "g")).problems


def test_a_wrong_ods_sheet_names_those_there_are(workspace: Path) -> None:
    _game(workspace, "{file: cards.ods, sheet: Heroes}", {})
    _ods(workspace / "data" / "g" / "cards.ods", {"Notes": [], "Cards": []})
    assert _refused(workspace) == ["data/g/cards.ods: error: no sheet 'Heroes'. The workbook has 1: 'Notes', "
                                   "2: 'Cards' (give `sheet:` a name or a number counting from 1)"]


@pytest.mark.parametrize("rows,found", [
    ([_row(_cell("name")), _row(_cell("A"), repeat=300_000)],
     "data/g/cards.ods:200001: error: the sheet has more than 200,000 rows; the limit is 200,000 (too-long)"),
    ([_row(_cell("name")), _row(_cell("A"), _cell("x", repeat=5_000))],
     "data/g/cards.ods:2: error: the row has a value past the limit of 1,000 columns; delete what lies right of your "
     "data (too-long)"),
    ([_row('<table:table-cell table:number-columns-repeated="3"/>')],
     "data/g/cards.ods:1: error: the sheet is empty or its first row is blank; expected a header row (empty-file)"),
])
def test_an_ods_sheet_past_its_bounds_is_refused_as_it_is_read(workspace: Path, rows: list[str], found: str) -> None:
    _game(workspace, "cards.ods", {})
    _ods(workspace / "data" / "g" / "cards.ods", {"Cards": rows})
    assert _refused(workspace) == [found]


def test_an_ods_that_is_not_a_zip_or_declares_entities_is_one_error(workspace: Path) -> None:
    _game(workspace, "cards.ods", {"cards.ods": b"name,power\nA,1\n"})
    assert _refused(workspace) == ["data/g/cards.ods: error: cannot open the workbook: not an ODS file (File is not "
                                   "a zip file) (damaged-file)"]
    with zipfile.ZipFile(workspace / "data" / "g" / "cards.ods", "w") as book:
        book.writestr("content.xml", '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>')
    [found] = _refused(workspace)
    assert found.startswith("data/g/cards.ods:1: error: the sheet cannot be read from this row on (EntitiesForbidden")


# ---------------------------------------------------------------- the registry

def test_an_unknown_suffix_names_every_registered_one(workspace: Path) -> None:
    _game(workspace, "cards.numbers", {"cards.numbers": "x"})
    [found] = _refused(workspace)
    kinds = ", ".join(key for key in READERS if not key.endswith("://"))
    assert found.startswith(f"data/g/cards.numbers: error: unknown data file type '.numbers'; expected a file of "
                            f"type {kinds}")
    assert ".json" in kinds and ".ods" in kinds


def test_the_architecture_page_and_readme_name_every_registered_source() -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    sources = page.split("## How to add a new data source")[1].split("\n## ")[0]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for key, reader in READERS.items():
        module = reader.read.split(":")[0].removeprefix("cardgen.").replace(".", "/") + ".py"
        row = next((line for line in sources.splitlines() if line.startswith("|") and f"`{key}`" in line), None)
        assert row is not None, f"source {key} is not in the sources table of docs/architecture.md"
        assert module in row, f"the row of {key} does not name {module}"
        assert f"`{key}`" in readme, f"README does not name the source {key}"


# ---------------------------------------------------------------- kept tables

YAML_ROWS = "- name: Alpha\n  power: 1\n  text: Fire\n- name: Beta\n  power: 2\n  text: Ice\n"


@pytest.fixture
def yaml_parses(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The YAML tables parsed (by the name they are shown as), in a user cache of this test's own."""
    from cardgen.load import data

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    parsed: list[str] = []
    parse = data.yaml_table

    def counted(text: str, shown_as: str) -> data.Table:
        parsed.append(shown_as)
        return parse(text, shown_as)

    monkeypatch.setattr(data, "yaml_table", counted)
    return parsed


def _cards(root: Path) -> list[tuple[str, str, int]]:
    return [(c.id, c.fields["text"], c.source_row) for c in load_cards(load_game(root, "g"))]


def test_a_yaml_table_is_parsed_once_and_again_only_when_its_file_changes(workspace: Path,
                                                                           yaml_parses: list[str]) -> None:
    _game(workspace, "cards.yaml", {"cards.yaml": YAML_ROWS})
    first = _cards(workspace)
    assert _cards(workspace) == first == [("alpha", "Fire", 1), ("beta", "Ice", 4)]
    assert yaml_parses == ["data/g/cards.yaml"]  # the second load read the kept table
    (workspace / "data" / "g" / "cards.yaml").write_text(YAML_ROWS.replace("Ice", "Frost"))
    assert _cards(workspace)[1] == ("beta", "Frost", 4) and len(yaml_parses) == 2


def test_a_damaged_kept_table_is_never_served(workspace: Path, tmp_path: Path, yaml_parses: list[str]) -> None:
    from cardgen.core.storage import Cache
    from cardgen.load.sources import KEPT_TABLES

    _game(workspace, "cards.yaml", {"cards.yaml": YAML_ROWS})
    first = _cards(workspace)
    folder = tmp_path / "user-cache" / "cardgen" / KEPT_TABLES
    (entry,) = sorted(folder.rglob("*.pickle"))
    entry.write_bytes(entry.read_bytes()[:-3] + b"xyz")  # changed behind the seal
    assert _cards(workspace) == first and len(yaml_parses) == 2
    for garbage in (entry.read_bytes()[:40], b"\x80\x05K\x01."):  # sealed anew, but not a table
        Cache.in_folder(folder, ".pickle").put_bytes(entry.stem, garbage)
        assert _cards(workspace) == first
    assert len(yaml_parses) == 4


def test_a_broken_yaml_table_says_the_same_each_time(workspace: Path, yaml_parses: list[str]) -> None:
    _game(workspace, "cards.yaml", {"cards.yaml": "name: not a list\n"})
    assert _refused(workspace) == _refused(workspace) and len(yaml_parses) == 2
    assert "expected a YAML list of mappings" in _refused(workspace)[0]

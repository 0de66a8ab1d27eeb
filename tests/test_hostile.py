"""Bad and hostile input: each case is handled as legitimate input, or is a clear finding; never a crash,
a hang, a read outside the project, or a lost previous output."""
from __future__ import annotations

import csv
import io
import struct
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.build.build import BuildOptions, build_game
from cardgen.commands.cli import main
from cardgen.core.errors import CardgenError
from cardgen.load.data import load_cards
from cardgen.load.manifest import load_game
from cardgen.outputs.stage import Stage, StageContext
from cardgen.validate import validate_game
from tests.test_validate_support import FACE, MANIFEST, mini_workspace, rules_of, with_manifest, write_game


@pytest.fixture(name="ws")
def _ws(tmp_path: Path) -> Path:
    return mini_workspace(tmp_path)

IMAGE_MANIFEST = MANIFEST.replace("      text: str\n", "      text: str\n      art: str\n")
IMAGE_FACE = '<svg {{ geo.svg_attrs }}>{{ image(card.art, 10, 10, 50, 50) }}</svg>\n'


def cards(root: Path) -> list:
    return load_cards(load_game(root, "mini"))


def errors(findings: list) -> list:
    return [f for f in findings if f.severity == "error"]


# ---------------------------------------------------------------- CSV

def test_csv_with_bom(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "\ufeffname,power\nAlpha,1\n".encode("utf-8")})
    assert [c.name for c in cards(ws)] == ["Alpha"] and validate_game(ws, "mini") == []


def test_csv_in_cp1252_is_read_with_a_warning(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nCafé,Crème brûlée – 5€\n".encode("cp1252")})
    assert cards(ws)[0].fields["text"] == "Crème brûlée – 5€"
    [finding] = validate_game(ws, "mini")
    assert (finding.severity, finding.rule, finding.row) == ("warning", "encoding", 2)
    assert "read as Windows-1252 (cp1252)" in finding.message


def test_csv_in_utf16_from_excel(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name\tpower\nÉcho\t3\n".encode("utf-16")})
    assert [(c.name, c.fields["power"]) for c in cards(ws)] == [("Écho", 3)]


def test_binary_file_named_csv(ws: Path) -> None:
    write_game(ws, files={"cards.csv": b"PK\x03\x04\x00\x00binary"})
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/cards.csv" and "NUL bytes" in finding.message


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_other_delimiters_are_detected(ws: Path, delimiter: str) -> None:
    write_game(ws, files={"cards.csv": f"name{delimiter}power{delimiter}text\nA{delimiter}1{delimiter}x, y\n"})
    assert [(c.name, c.fields["power"], c.fields["text"]) for c in cards(ws)] == [("A", 1, "x, y")]


def test_ragged_rows(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,power,text\nA,1,ok,extra\nB,2\nC,3,fine\n"})
    findings = validate_game(ws, "mini")
    assert [(f.row, f.severity, f.rule) for f in findings] == [(2, "error", "ragged-row"), (3, "warning", "ragged-row")]
    assert "this row has 4 cells but the header has 3 columns" in findings[0].message


def test_duplicate_headers(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,power,power\nA,1,2\n"})
    [finding] = validate_game(ws, "mini")
    assert str(finding) == ("data/mini/cards.csv:1:power: error: column 'power' appears twice in the header "
                            "(column 3); expected unique column names (duplicate-header)")


def test_newlines_and_quotes_inside_cells(ws: Path) -> None:
    write_game(ws, files={"cards.csv": 'name,text\nA,"Line one\nLine ""two"", done"\nB,plain\n'})
    loaded = cards(ws)
    assert loaded[0].fields["text"] == 'Line one\nLine "two", done'
    assert (loaded[1].name, loaded[1].source_row) == ("B", 4)
    assert validate_game(ws, "mini") == []


def test_empty_file_and_header_only(ws: Path) -> None:
    write_game(ws, files={"cards.csv": ""})
    assert [(f.severity, f.rule) for f in validate_game(ws, "mini")] == [("error", "empty-file")]
    write_game(ws, files={"cards.csv": "name,power\n"})
    assert [(f.severity, f.rule) for f in validate_game(ws, "mini")] == [("warning", "empty-file")]


def test_blank_rows_between_cards_but_not_at_the_end(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,power\nA,1\n,\n\nB,2\n\n,,\n"})
    assert [(f.row, f.rule) for f in validate_game(ws, "mini")] == [(3, "blank-row")]


def test_control_characters_are_findings(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nA,bell\x07here\n"})
    [finding] = validate_game(ws, "mini")
    assert (finding.row, finding.column, finding.rule) == (2, "text", "control-character")


def test_huge_file_validates(ws: Path) -> None:
    rows = "".join(f"Card {i},Unit,{i % 10},1,Gain {i} :scrap:.\n" for i in range(100_000))
    write_game(ws, files={"cards.csv": "name,kind,power,count,text\n" + rows})
    assert validate_game(ws, "mini", layout=False) == []  # timing: bench/validate_huge.py


# ---------------------------------------------------------------- XLSX

def test_xlsx_formula_errors_and_empty_formatted_columns(ws: Path) -> None:
    import openpyxl
    from openpyxl.styles import PatternFill

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["name", "power", None, None])
    sheet.append(["Alpha", "#VALUE!"])
    sheet.append(["Beta", 2])
    for row in range(1, 40):  # formatting far beyond the data: empty columns and rows
        for column in "CDEF":
            sheet[f"{column}{row}"].fill = PatternFill("solid", fgColor="FFFF00")
    write_game(ws, manifest=MANIFEST.replace("source: cards.csv", "source: cards.xlsx"), files={})
    book.save(ws / "data" / "mini" / "cards.xlsx")
    findings = validate_game(ws, "mini")
    assert [str(f) for f in findings] == ["data/mini/cards.xlsx:2:power: error: the spreadsheet shows the error "
                                          "#VALUE! here; fix the formula (spreadsheet-error)"]


def test_damaged_workbook(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("source: cards.csv", "source: cards.xlsx"),
               files={"cards.xlsx": b"not a zip file"})
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/cards.xlsx" and "cannot open the workbook" in finding.message


# ---------------------------------------------------------------- YAML

def test_manifest_yaml_syntax_error_names_line(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("dpi: 100", "dpi: [100"))
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/game.yaml" and finding.row is not None
    assert finding.message.startswith("YAML syntax error")


def test_manifest_anchors_and_merges(ws: Path) -> None:
    manifest = with_manifest("").replace("  main:\n", "  main: &deck\n") + \
        "  strong:\n    <<: *deck\n    filter: \"power > 1\"\n    id: strong_id\n"
    write_game(ws, manifest=manifest, files={"cards.csv": "name,power,strong_id\nA,1,s-a\nB,2,s-b\n"})
    game = load_game(ws, "mini")
    assert game.spec.decks["strong"].face == "face.svg" and game.spec.decks["strong"].text == ["text"]
    assert [c.id for c in cards(ws)] == ["a", "b", "s-b"]
    assert validate_game(ws, "mini") == []


def test_data_yaml_anchors_and_merges(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("source: cards.csv", "source: cards.yaml"), files={"cards.yaml": """\
        - &base {name: Alpha, kind: Unit, power: 1}
        - <<: *base
          name: Beta
          power: 2
    """})
    assert [(c.name, c.fields["kind"], c.fields["power"]) for c in cards(ws)] == [("Alpha", "Unit", 1),
                                                                                  ("Beta", "Unit", 2)]


BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def test_yaml_billion_laughs_is_refused(ws: Path) -> None:
    write_game(ws, manifest=with_manifest(BILLION_LAUGHS))
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/game.yaml" and "expands to more than" in finding.message
    write_game(ws, manifest=MANIFEST.replace("source: cards.csv", "source: cards.yaml"),
               files={"cards.yaml": "- name: A\n" + "".join(f"  {line}\n" for line in BILLION_LAUGHS.splitlines())
                      + "  text: *h\n"})
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/cards.yaml" and "expands to more than" in finding.message


# ---------------------------------------------------------------- text

def test_markup_characters_emoji_and_other_scripts_render(ws: Path, tmp_path: Path) -> None:
    from xml.etree import ElementTree

    text = 'Tom & Jerry <b>not a tag</b> "quoted" \'single\' — 😀 Ελληνικά русский 日本語 العربية'
    lines = io.StringIO()
    csv.writer(lines).writerows([["name", "text"], ["A & <B>", text]])
    write_game(ws, files={"cards.csv": lines.getvalue()})
    findings = validate_game(ws, "mini")
    assert errors(findings) == [] and set(rules_of(findings)) == {"missing-glyph"}
    result = build_game(ws, "mini", BuildOptions(tmp_path / "out", jobs=1, keep_svg=True))
    svg = next((tmp_path / "out" / "mini").rglob("*.svg")).read_text(encoding="utf-8")
    ElementTree.fromstring(svg)  # valid XML: data cannot inject markup
    assert "&lt;b&gt;not" in svg and "<b>" not in svg
    assert result.cards == 1


# ---------------------------------------------------------------- images

@pytest.mark.parametrize("path,message", [
    ("/etc/passwd", "is an absolute path"),
    ("../../../../../../../../../../etc/passwd", "leads outside the project folder"),
    ("http://example.com/a.png", "is a URL"),
    ("file:///etc/passwd", "is a URL"),
    ("missing.png", "does not exist"),
    ("link.png", "leads outside the project folder"),
])
def test_image_paths_outside_the_project_are_refused(ws: Path, path: str, message: str) -> None:
    data = write_game(ws, manifest=IMAGE_MANIFEST, files={"cards.csv": f"name,art\nA,{path}\n"},
                      templates={"face.svg": IMAGE_FACE, "back.svg": IMAGE_FACE.replace("card.art", "'ok.png'")})
    (data / "link.png").symlink_to("/etc/hostname")
    _png(data / "ok.png", 10, 10)
    [finding] = validate_game(ws, "mini")
    assert (finding.file, finding.row, finding.column, finding.rule) == ("data/mini/cards.csv", 2, "art", "image")
    assert message in finding.message


def _png(path: Path, width: int, height: int) -> None:
    """A valid PNG header claiming any size, with one tiny compressed row (Pillow reads only the header)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 11))
                     + chunk(b"IEND", b""))


@pytest.mark.parametrize("name,content,message", [
    ("huge.png", None, "has far too many pixels"),
    ("big.png", (9000, 9000), "is 9000 x 9000 px"),
    ("laughs.svg", '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;">]>'
                   '<svg xmlns="http://www.w3.org/2000/svg">&b;</svg>', "DOCTYPE that declares entities"),
    ("external.svg", '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                     '<image xlink:href="file:///etc/passwd"/></svg>', "refers to an external file"),
    ("absurd.svg", '<svg xmlns="http://www.w3.org/2000/svg" width="1e9" height="10"/>',
     "declares a size of 1e+09 x 10 px"),
    ("notimage.png", "just text", "cannot be read as an image"),
])
def test_unsafe_images_are_refused(ws: Path, name: str, content: object, message: str) -> None:
    data = write_game(ws, manifest=IMAGE_MANIFEST, files={"cards.csv": f"name,art\nA,{name}\n"},
                      templates={"face.svg": IMAGE_FACE, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    if content is None:
        _png(data / name, 20000, 20000)
    elif isinstance(content, tuple):
        _png(data / name, *content)
    else:
        (data / name).write_text(str(content))
    [finding] = validate_game(ws, "mini")
    assert (finding.row, finding.column, finding.rule) == (2, "art", "image") and message in finding.message


def test_unsafe_icon_file_is_named(ws: Path) -> None:
    (ws / "icons").mkdir(exist_ok=True)
    (ws / "icons" / "evil.svg").write_text('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>')
    write_game(ws, files={"cards.csv": "name,text\nA,Boom :evil:\n"})
    [finding] = validate_game(ws, "mini")
    assert (finding.file, finding.row, finding.column) == ("data/mini/cards.csv", 2, "text")
    assert finding.message.startswith("icon file icons/evil.svg cannot be used: the SVG has a DOCTYPE")


# ---------------------------------------------------------------- outputs

def test_output_folder_that_cannot_be_written(ws: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(CardgenError, match="cannot write to the output folder"):
        build_game(ws, "mini", BuildOptions(blocker / "out", jobs=1))


@pytest.mark.parametrize("failure", [KeyboardInterrupt, RuntimeError])
def test_failed_or_interrupted_build_keeps_previous_output(ws: Path, tmp_path: Path, failure: type) -> None:
    out = tmp_path / "out"
    build_game(ws, "mini", BuildOptions(out, jobs=1))
    before = {p.relative_to(out): p.read_bytes() for p in (out / "mini").rglob("*") if p.is_file()}
    write_game(ws, files={"cards.csv": "name,power\nChanged,3\n"})

    class Failing(Stage):
        name = "failing"

        def run(self, ctx: StageContext) -> list:
            raise failure()

    with pytest.raises(failure):
        build_game(ws, "mini", BuildOptions(out, jobs=1), None, [Failing()])
    after = {p.relative_to(out): p.read_bytes() for p in (out / "mini").rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in out.iterdir()) == [".cache", ".cardgen.lock", "mini"]


# ---------------------------------------------------------------- the command line never shows a traceback

@pytest.mark.parametrize("files", [
    {"cards.csv": b"\x00\x01\x02"}, {"cards.csv": ""}, {"cards.csv": "name,power\nA,1,2,3\n"},
    {"cards.csv": "name\n" + "x" * 2_000_000 + "\n"},
])
def test_cli_reports_bad_input_without_traceback(ws: Path, tmp_path: Path, files: dict) -> None:
    write_game(ws, files=files)
    for args in (["validate"], ["build", "--out", str(tmp_path / "o"), "-j", "1"]):
        result = CliRunner().invoke(main, ["--root", str(ws), *args])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
        assert "data/mini/cards.csv" in result.output


def test_data_file_that_is_a_folder(ws: Path) -> None:
    path = ws / "data" / "mini" / "cards.csv"
    path.unlink()
    path.mkdir()
    [finding] = validate_game(ws, "mini")
    assert finding.message == "the data file does not exist"


def test_oversized_icon_file_is_refused(ws: Path) -> None:
    (ws / "icons").mkdir(exist_ok=True)
    (ws / "icons" / "huge.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
                                           + "<!-- padding -->" * 70_000 + "</svg>")
    write_game(ws, files={"cards.csv": "name,text\nA,Big :huge:\n"})
    [finding] = validate_game(ws, "mini")
    assert finding.row == 2 and "icons/huge.svg" in finding.message and "larger than 1000 kB" in finding.message


def test_template_helper_given_nonsense_is_a_finding_at_its_template_line(ws: Path) -> None:
    face = FACE.replace("12, min_size=8)", "12, min_size=8, align='sideways')")
    write_game(ws, templates={"face.svg": face, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    [finding] = validate_game(ws, "mini")
    assert (finding.file, finding.row, finding.rule) == ("templates/mini/face.svg", 4, "helper-argument")
    assert finding.message == "text_box: align is 'sideways'; expected one of left, center, right"


def test_very_long_markup_cell_is_a_finding_not_a_hang(ws: Path) -> None:
    write_game(ws, manifest=with_manifest("""\
        rules:
          - {id: terms, message: m, terms: {text: [text], known: []}}
    """), files={"cards.csv": "name,text\nA," + "**a*" * 200_000 + "\n"})
    [finding] = validate_game(ws, "mini")
    assert (finding.row, finding.column, finding.rule) == (2, "text", "too-long")
    assert "the cell holds 800,000 characters" in finding.message


@pytest.mark.parametrize("viewbox", ["0 0 1e-300 1e-300", "0 0 1e12 10"])
def test_icon_with_absurd_viewbox_is_refused(ws: Path, viewbox: str) -> None:
    (ws / "icons").mkdir(exist_ok=True)
    (ws / "icons" / "odd.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{viewbox}"/>')
    write_game(ws, files={"cards.csv": "name,text\nA,Odd :odd:\n"})
    [finding] = validate_game(ws, "mini")
    assert finding.row == 2 and "icons/odd.svg" in finding.message and "viewBox is" in finding.message


def test_a_workspace_icon_named_as_a_bundled_one_is_checked_and_a_bundled_one_is_not_read(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.load.icons import BundledIcons

    def unread(self: BundledIcons, name: str) -> None:
        raise AssertionError(f"validation read the bundled icon {name}")

    from cardgen.svg.context import BuildContext
    from cardgen.validate.references import ReferenceChecker

    write_game(ws, files={"cards.csv": "name,text\nA,Gears :gears:\n"})
    with monkeypatch.context() as patched:  # every bundled icon is checked by tests/test_bundled.py
        patched.setattr(BundledIcons, "get", unread)
        assert ReferenceChecker(BuildContext.load(ws, "mini")).check() == []
    (ws / "icons").mkdir(exist_ok=True)
    (ws / "icons" / "gears.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1e12 10"/>')
    [finding] = validate_game(ws, "mini")
    assert finding.row == 2 and "icons/gears.svg" in finding.message and "viewBox is" in finding.message


def test_yaml_nested_too_deeply(ws: Path) -> None:
    write_game(ws, manifest=with_manifest("deep: " + "[" * 5_000 + "]" * 5_000 + "\n"))
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/game.yaml" and "nested too deeply" in finding.message

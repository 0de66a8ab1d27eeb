"""Property-based tests: any text in any field renders or yields a clear finding; the CSV, YAML and XLSX readers
and the expression sandbox raise nothing but their own error types."""
from __future__ import annotations

import ast
import codecs
import csv
import io
import os
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardgen.core import bundled
from cardgen.core.errors import CardgenError
from cardgen.core.expressions import ExpressionError, check_aggregate, check_expression
from cardgen.load.data import load_cards, read_csv_table, read_xlsx_table, yaml_table
from cardgen.load.fonts import FontBook, configure_fontconfig
from cardgen.load.icons import IconLibrary
from cardgen.load.manifest import load_game
from cardgen.raster.render import draw_svg
from cardgen.svg.templates import SVGRenderer
from cardgen.validate import validate_game
from tests.test_validate_support import make_workspace, write_game

# PROPS=1000 runs more examples when hunting for bugs; 50 keeps the suite fast.
SETTINGS = settings(max_examples=int(os.environ.get("PROPS", 50)), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
CSV_ALPHABET = st.sampled_from(list(',;\t|"\'\n\r #abcAB01 é€😀\ufeff\x00\\'))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_workspace(tmp_path_factory.mktemp("props"))
    write_game(root)
    configure_fontconfig([root / "fonts"])
    return root


def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


FIELD = st.one_of(st.text(max_size=200), st.sampled_from(["Unit", "Spell", "1", "-1", "11", "", " x ", "#REF!"]))


@SETTINGS
@given(values=st.tuples(st.text(max_size=40), FIELD, FIELD, FIELD, st.text(max_size=200)))
def test_any_text_in_any_field_renders_or_is_a_clear_finding(workspace: Path, values: tuple) -> None:
    header = ["name", "kind", "power", "count", "text"]
    write_game(workspace, files={"cards.csv": _csv([header, list(values)])})
    findings = validate_game(workspace, "mini")
    errors = [f for f in findings if f.severity == "error"]
    for finding in findings:  # every finding says where and what
        assert finding.file and finding.message
    if errors:
        return
    game = load_game(workspace, "mini")
    cards = load_cards(game)
    if not cards:  # an all-blank row: the file has no cards, which is a warning
        assert [f.rule for f in findings] == ["empty-file"]
        return
    card = cards[0]
    fonts = FontBook(workspace / "fonts")
    renderer = SVGRenderer(game, fonts, IconLibrary(workspace, game.spec.icons))
    svg = renderer.render("face.svg", card.id, "main", card).svg
    ElementTree.fromstring(svg)
    image = draw_svg(svg, 173, 252, 100, workspace, game.data_dir.resolve().as_uri() + "/")
    assert image.size == (173, 252)


BOMS = st.sampled_from([b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE,
                        codecs.BOM_UTF32_BE, codecs.BOM_UTF8 * 2])


@SETTINGS
@given(content=st.one_of(st.binary(max_size=500), st.text(CSV_ALPHABET, max_size=300).map(str.encode),
                         st.tuples(BOMS, st.binary(max_size=300)).map(b"".join)))
def test_csv_loading_raises_only_cardgen_errors(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cards.csv"
        path.write_bytes(content)
        try:
            table = read_csv_table(path, "cards.csv")
        except CardgenError as exc:
            assert all(p.file == "cards.csv" and p.message for p in exc.problems)
            return
        assert all(isinstance(v, str) and "\x00" not in v for row in table.rows for v in row.values.values())


YAML_ALPHABET = st.sampled_from(list("-:&*!<>[]{},?|#'\" \n\tabcxyz019.~") + ["!!int ", "!!timestamp ",
                                                                                "!!binary ", "<<: ", "!!set "])


@SETTINGS
@given(text=st.one_of(st.text(max_size=200), st.lists(YAML_ALPHABET, max_size=80).map("".join)))
def test_yaml_data_raises_only_cardgen_errors(text: str) -> None:
    try:
        table = yaml_table(text, "cards.yaml")
    except CardgenError as exc:
        assert all(p.file == "cards.yaml" and p.message for p in exc.problems)
        return
    assert all(isinstance(v, str) for row in table.rows for v in row.values.values())
    assert all(p.file == "cards.yaml" and p.row for p in table.problems)


def _workbook_parts() -> dict[str, bytes]:
    """A small workbook as openpyxl writes it, part by part."""
    import openpyxl

    book = openpyxl.Workbook()
    for row in (["name", "power", "when"], ["Alpha", 1, 2.5], ["Beta", True, "x"]):
        book.active.append(row)
    made = io.BytesIO()
    book.save(made)
    with zipfile.ZipFile(made) as source:
        return {name: source.read(name) for name in source.namelist()}


PARTS = _workbook_parts()


@st.composite
def damaged_workbooks(draw: st.DrawFn) -> bytes:
    """The workbook with a slice of one part (most often the sheet) replaced by other bytes, or by the text of
    another cell type, reference or number."""
    name = draw(st.one_of(st.just("xl/worksheets/sheet1.xml"), st.sampled_from(sorted(PARTS))))
    part = PARTS[name]
    start = draw(st.integers(0, len(part)))
    end = draw(st.integers(start, min(len(part), start + 40)))
    new = draw(st.one_of(st.binary(max_size=20), st.sampled_from([b't="s"', b't="d"', b't="b"', b't="e"',
                                                                  b'r="XFD1048577"', b'r="A0"', b"<v>", b"</c>",
                                                                  b"-1", b"1e999", b"nan", b"99", b"<sheets/>"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for other, data in PARTS.items():
            target.writestr(other, part[:start] + new + part[end:] if other == name else data)
    packed = out.getvalue()
    at = draw(st.integers(0, len(packed)))  # and at times the packed bytes too (a part's deflate data, a header)
    return packed[:at] + draw(st.binary(max_size=8)) + packed[at + draw(st.integers(0, 8)):]


@SETTINGS
@given(content=st.one_of(st.binary(max_size=500), damaged_workbooks()))
def test_xlsx_loading_raises_only_cardgen_errors(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cards.xlsx"
        path.write_bytes(content)
        try:
            table = read_xlsx_table(path, "cards.xlsx", None)
        except CardgenError as exc:
            assert all(p.file == "cards.xlsx" and p.message and "\n" not in p.message for p in exc.problems)
            return
        assert all(isinstance(v, str) for row in table.rows for v in row.values.values())


FONT = (bundled.FONTS_DIR / "ShareTechMono-Regular.ttf").read_bytes()


@SETTINGS
@given(at=st.integers(0, len(FONT)), cut=st.integers(0, 64), new=st.binary(max_size=16),
       end=st.one_of(st.none(), st.integers(0, len(FONT))))
def test_a_damaged_font_is_a_finding_naming_it_or_a_usable_face(at: int, cut: int, new: bytes, end: int | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        fonts = Path(folder) / "fonts"
        fonts.mkdir()
        (fonts / "Damaged.ttf").write_bytes((FONT[:at] + new + FONT[at + cut:])[:end])  # end: cut short too
        try:
            book = FontBook(fonts)
        except CardgenError as exc:
            [problem] = exc.problems
            assert problem.file == "fonts/Damaged.ttf" and problem.message.startswith("cannot read the file as a font")
            return
        for face in book.faces.values():
            assert face.family and 16 <= face.units_per_em <= 16384
            assert face.width("Abc", 10) >= 0


@SETTINGS
@given(expr=st.one_of(st.text(max_size=60), st.text(st.sampled_from(list("abc_().[]'@ =<>!+-*/%0123")), max_size=40)))
def test_expression_check_raises_only_expression_errors(expr: str) -> None:
    for check in (check_expression, check_aggregate):
        try:
            tree = check(expr, {"a", "b", "c"})
        except ExpressionError:
            continue
        nodes = list(ast.walk(tree))
        assert not any(isinstance(n, (ast.Attribute, ast.Subscript, ast.Lambda, ast.comprehension)) for n in nodes)
        assert all(isinstance(n.func, ast.Name) and not n.func.id.startswith("_")
                   for n in nodes if isinstance(n, ast.Call))

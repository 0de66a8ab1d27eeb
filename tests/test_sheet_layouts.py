"""The designer's sheet: a grid of columns x rows, margins down to zero, sheet layout files (bundled and the
workspace's own `layouts/`), and crop marks kept out of the band a home printer cannot print. Checked on the
PDF read back."""
from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest

from cardgen.outputs.imposition import Rect
from tests.conftest import SIMPLE_BACK, run_cli, sample_game

PT = 72 / 25.4
BLEED = 3.175
MANIFEST = """\
    title: Ninths
    size: {width: 70mm, height: 99mm}
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
"""
FACE = """\
    <svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#d0e0f0"/></svg>
"""


@pytest.fixture
def ninths(tmp_path: Path) -> Path:
    """A built game of 18 cards of 70 x 99 mm (a ninth of A4 each)."""
    root = sample_game(tmp_path, MANIFEST, {"cards.csv": "name,count\nOne,9\nTwo,9\n"}, FACE, SIMPLE_BACK)
    run_cli(root, "build", "s", "-j", "1")
    return root


def _pages(path: Path) -> list[tuple[list[Rect], list[Rect]]]:
    """Per page: the trim box of every card image (its image less the bleed) and the box of every line, in mm."""
    def box(item: dict) -> Rect:
        return Rect(item["x0"] / PT, item["y0"] / PT, item["width"] / PT, item["height"] / PT)

    with pdfplumber.open(path) as pdf:
        return [([box(im).grow(-BLEED) for im in page.images], [box(line) for line in page.lines])
                for page in pdf.pages]


def _corners(trims: list[Rect]) -> set[tuple[float, float]]:
    return {(round(t.x, 2), round(t.y, 2)) for t in trims}


def test_a_three_by_three_grid_with_no_margin_fills_a4_and_shares_its_cuts(ninths: Path) -> None:
    # Before: `--margin: must be at least 3 mm`, and 4 cards a page.
    result = run_cli(ninths, "print", "s", "--paper", "a4", "--grid", "3x3", "--margin", "0", "--cut-lines")
    assert "warning: cards come to 0.0 mm from the edge of the a4 paper" in result.output
    pages = _pages(ninths / "output" / "s" / "print" / "s-a4-margin0mm-cut-lines-grid3x3.pdf")
    assert len(pages) == 4  # 18 cards, 9 a page: two sheets, front and back
    trims, lines = pages[0]
    assert _corners(trims) == {(x, y) for x in (0, 70, 140) for y in (0, 99, 198)}
    assert all((t.w, t.h) == pytest.approx((70, 99)) for t in trims)
    cuts = {round(line.x, 2) for line in lines if line.w < 0.01}
    assert cuts == {0, 70, 140, 210}  # one cut line where two cards touch
    back_trims, _ = pages[1]
    assert _corners(back_trims) == _corners(trims)  # mirrored left to right: the full grid again


def test_crop_marks_stay_out_of_the_quarter_inch_a_home_printer_cannot_print(ninths: Path) -> None:
    # 10 mm around a 2 x 2 block: before, the marks ran on to 4 mm from the edge; now they stop at 6.35 mm.
    result = run_cli(ninths, "print", "s", "--paper", "160x218mm")
    assert "warning" not in result.output
    for trims, lines in _pages(ninths / "output" / "s" / "print" / "s-160x218mm.pdf"):
        assert trims and lines
        for line in lines:
            assert min(line.x, line.y, 160 - line.right, 218 - line.top) >= 6.35 - 0.01, line


def test_cut_lines_answer_the_warning_about_crop_marks_in_the_band(tmp_path: Path) -> None:
    # Before: the warning's own advice, cut_lines: true, left the same warning on every build; and then the default
    # (cut_lines: false) gave it on every build of nine poker cards on Letter, as the example games are printed.
    root = sample_game(tmp_path, MANIFEST.replace("{width: 70mm, height: 99mm}", "poker"),
                       {"cards.csv": "name,count\nOne,9\n"}, FACE, SIMPLE_BACK)
    warned = run_cli(root, "print", "s", "--paper", "letter", "--no-cut-lines").output
    assert "warning: crop marks lie 3.0-5.4 mm from the edge of the letter paper" in warned
    assert "warning" not in run_cli(root, "print", "s", "--paper", "letter", "--cut-lines").output
    built = run_cli(root, "build", "s").output  # cut_lines: auto, the default
    assert "warning" not in built
    for trims, lines in _pages(root / "output" / "s" / "print" / "s-letter.pdf"):  # front and back
        cuts = {round(line.x, 2) for line in lines if line.w < 0.01 and line.h > 80}  # across the cards
        assert cuts == {round(x, 2) for t in trims for x in (t.x, t.right)} and len(cuts) == 4


TWO_UP = """\
    paper: a4
    card: {width: 70mm, height: 99mm}
    slots:
      - {x: 20mm, y: 30mm}
      - {x: 120mm, y: 30mm}
"""


def test_a_workspace_layout_places_the_cards_and_an_edit_of_it_reprints(ninths: Path) -> None:
    import textwrap

    (ninths / "layouts").mkdir()
    layout = ninths / "layouts" / "two-up.yaml"
    layout.write_text(textwrap.dedent(TWO_UP))
    manifest = ninths / "data" / "s" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print: {paper: a4, layout: two-up}\n")
    run_cli(ninths, "build", "s", "-j", "1")
    pdf = ninths / "output" / "s" / "print" / "s-a4.pdf"
    pages = _pages(pdf)
    assert len(pages) == 18  # 2 a page: 9 sheets, front and back
    assert _corners(pages[0][0]) == {(20, 297 - 30 - 99), (120, 168)}
    assert _corners(pages[1][0]) == {(210 - 20 - 70, 168), (210 - 120 - 70, 168)}  # the backs, turned over
    layout.write_text(textwrap.dedent(TWO_UP).replace("y: 30mm", "y: 40mm"))
    run_cli(ninths, "build", "s", "-j", "1")
    assert _corners(_pages(pdf)[0][0]) == {(20, 158), (120, 158)}


def test_a_layout_flag_replaces_the_manifest_grid_and_a_grid_flag_its_layout(ninths: Path) -> None:
    # Before: `options: give a grid or a layout, not both` though flags override the manifest
    manifest = ninths / "data" / "s" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print: {paper: a4, grid: 2x2}\n")
    run_cli(ninths, "print", "s", "--layout", "70x99-3x3-a4", "--out", str(ninths / "laid"))
    laid = _pages(ninths / "laid" / "s-a4-70x99-3x3-a4.pdf")  # named by the layout (was s-a4-fit-70x99-3x3-a4)
    assert _corners(laid[0][0]) == {(x, y) for x in (0, 70, 140) for y in (0, 99, 198)}
    manifest.write_text(manifest.read_text().replace("grid: 2x2", "layout: 70x99-3x3-a4"))
    run_cli(ninths, "print", "s", "--grid", "2x2", "--out", str(ninths / "grid"))
    assert len(_pages(next((ninths / "grid").glob("*.pdf")))[0][0]) == 4


@pytest.mark.parametrize("layout, message", [
    ("slots:\n  - {x: 0, y: 0}\n  - {x: 50mm, y: 0}\n",
     "layouts/bad.yaml:5: error: slots.1: the card at 50, 0 mm lies over slot 0's at 0, 0 mm"),
    ("slots:\n  - {x: 150mm, y: 0}\n",
     "layouts/bad.yaml:4: error: slots.0: a 70 x 99 mm card at 150, 0 mm runs off the 210 x 297 mm page"),
])
def test_a_layout_that_cannot_be_printed_is_an_error_at_its_line(ninths: Path, layout: str, message: str) -> None:
    (ninths / "layouts").mkdir()
    (ninths / "layouts" / "bad.yaml").write_text("paper: a4\ncard: {width: 70mm, height: 99mm}\n" + layout)
    result = run_cli(ninths, "print", "s", "--paper", "a4", "--layout", "bad", expect=1)
    assert message in result.output and "Traceback" not in result.output


def test_unknown_or_mismatched_layouts_are_manifest_errors(ninths: Path) -> None:
    manifest = ninths / "data" / "s" / "game.yaml"
    text = manifest.read_text()
    manifest.write_text(text + "print: {paper: a4, layout: tarot-9-up}\n")
    shown = run_cli(ninths, "validate", "s", expect=1).output
    assert "data/s/game.yaml:8: error: print.layout: no sheet layout 'tarot-9-up'; the layouts are 70x99-3x3-a4, " \
        "mini-4x4-a4" in shown
    manifest.write_text(text + "print: {paper: letter, layout: 70x99-3x3-a4}\n")
    shown = run_cli(ninths, "validate", "s", expect=1).output
    assert "the layout '70x99-3x3-a4' is made for a 210 x 297 mm page, not letter paper" in shown

"""Cutting-machine sheets (`cut/`, issue 34): the cards laid out with the registration marks each machine's software
looks for, and cut files whose outlines lie on the printed cards, measured from both files."""
from __future__ import annotations

import math
import re
from pathlib import Path

import ezdxf
import pdfplumber
import pytest

from cardgen.outputs.cutting import SILHOUETTE_ARM, SILHOUETTE_INSET, SILHOUETTE_LINE, SILHOUETTE_SQUARE
from cardgen.record.record import BuildRecord
from tests.conftest import run_cli, write_game

GAME = "scrapbots"  # the example game the `copy` fixture copies
MM = 25.4 / 72  # mm per PDF point
FACE = '<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#3366cc"/></svg>\n'
TOLERANCE = 0.2  # mm: the bound between a printed card and its cut line
Rect = tuple[float, float, float, float]  # x0, top, x1, bottom in mm from the page's top-left


def _game(root: Path, extra: str = "") -> None:
    names = "".join(f"Card {i}\n" for i in range(10))  # 10 poker cards: 2 Silhouette Letter sheets, 3 Cricut ones
    manifest = ("title: Cut\nbleed: 3mm\ndecks:\n  main:\n    source: cards.csv\n    face: face.svg\n"
                f"  small:\n    source: small.csv\n    face: face.svg\n    size: mini\n{extra}")
    write_game(root, "cut", manifest, {"cards.csv": "name\n" + names, "small.csv": "name\nTiny\n"},
               {"face.svg": FACE})


def _pdf(path: Path) -> list[tuple[list[Rect], list[Rect], tuple[float, float]]]:
    """Every page's filled rectangles (the marks) and images, in mm, and the page size."""
    pages = []
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            marks = [_mm(r) for r in page.rects if r["fill"]]
            images = [_mm(i) for i in page.images]
            pages.append((marks, images, (page.width * MM, page.height * MM)))
    return pages


def _mm(item: dict) -> Rect:
    return item["x0"] * MM, item["top"] * MM, item["x1"] * MM, item["bottom"] * MM


def _svg_outlines(path: Path) -> list[tuple[Rect, float]]:
    """Each path's box (from the points it passes through) and its corners' radius, in mm."""
    outlines = []
    for d in re.findall(r'<path d="([^"]+)"', path.read_text()):
        xs, ys, radius = [], [], 0.0
        for command, args in re.findall(r"([MHVAZ])([^MHVAZ]*)", d):
            numbers = [float(n) for n in args.split()]
            if command == "M":
                xs.append(numbers[0]), ys.append(numbers[1])
            elif command == "H":
                xs.append(numbers[0])
            elif command == "V":
                ys.append(numbers[0])
            elif command == "A":
                radius = numbers[0]
                xs.append(numbers[5]), ys.append(numbers[6])
        outlines.append(((min(xs), min(ys), max(xs), max(ys)), radius))
    return outlines


def _dxf_outlines(path: Path, page_height: float) -> list[tuple[Rect, float]]:
    """Each closed polyline's box (y turned to run down from the page's top) and its corners' radius, in mm."""
    outlines = []
    for line in ezdxf.readfile(path).modelspace().query("LWPOLYLINE"):
        assert line.closed
        points = list(line.get_points("xyb"))
        xs, ys = [p[0] for p in points], [page_height - p[1] for p in points]
        arcs = [(a, b) for a, b in zip(points, points[1:] + points[:1]) if a[2]]
        assert all(a[2] == pytest.approx(math.tan(math.radians(22.5))) for a, _ in arcs)  # quarter circles
        radius = math.dist(arcs[0][0][:2], arcs[0][1][:2]) / math.sqrt(2) if arcs else 0.0
        outlines.append(((min(xs), min(ys), max(xs), max(ys)), radius))
    return outlines


def _trim(image: Rect, bleed: float) -> Rect:
    return image[0] + bleed, image[1] + bleed, image[2] - bleed, image[3] - bleed


def _assert_lined_up(printed: list[Rect], outlines: list[tuple[Rect, float]], radius: float) -> None:
    """Every printed card has an outline within TOLERANCE on each edge, with corners of `radius`."""
    assert len(printed) == len(outlines)
    for card, (outline, r) in zip(sorted(printed), sorted(outlines)):
        assert max(abs(a - b) for a, b in zip(card, outline)) <= TOLERANCE, (card, outline)
        assert r == pytest.approx(radius, abs=0.01)


def _assert_marks_and_clearance(marks: list[Rect], images: list[Rect], bleed: float, width: float,
                                height: float) -> None:
    """The page's filled rectangles are the type-1 marks, and no card's print (its trim box and up to 0.5 mm of
    bleed, half the default gap) comes within 0.3 mm of one."""
    i, s, a, t = SILHOUETTE_INSET, SILHOUETTE_SQUARE, SILHOUETTE_ARM, SILHOUETTE_LINE
    expected = [(i, i, i + s, i + s),  # the square, top left
                (width - i - a, i, width - i, i + t), (width - i - t, i, width - i, i + a),  # the L, top right
                (i, height - i - a, i + t, height - i), (i, height - i - t, i + a, height - i)]  # the L, bottom left
    assert len(marks) == len(expected)
    for mark, wanted in zip(sorted(marks), sorted(expected)):
        assert mark == pytest.approx(wanted, abs=0.01)
    shown = min(bleed, 0.5)
    for image in images:
        x0, y0, x1, y1 = (image[0] + bleed - shown, image[1] + bleed - shown, image[2] - bleed + shown,
                          image[3] - bleed + shown)
        assert not any(m[0] - 0.3 < x1 and x0 < m[2] + 0.3 and m[1] - 0.3 < y1 and y0 < m[3] + 0.3
                       for m in expected), image


def test_silhouette_sheets_carry_type_1_marks_and_their_cut_files_outline_the_printed_cards(workspace) -> None:
    _game(workspace, "cut: {build: true}\n")
    run_cli(workspace, "build", "cut")
    out = workspace / "output" / "cut"
    record = BuildRecord.read(out / "build.json")
    bleed = record.decks["main"].bleed_mm
    pages = _pdf(out / "cut" / "main" / "silhouette-letter.pdf")
    assert [len(images) for _, images, _ in pages] == [8, 2]  # 10 cards, 8 to a Letter sheet
    width, height = pages[0][2]
    assert (width, height) == (pytest.approx(279.4), pytest.approx(215.9))  # landscape Letter
    assert (SILHOUETTE_INSET, SILHOUETTE_SQUARE, SILHOUETTE_ARM, SILHOUETTE_LINE) == (
        pytest.approx(9.48, abs=0.01), pytest.approx(6.10, abs=0.01), pytest.approx(8.21, abs=0.01),
        pytest.approx(1.10, abs=0.01))
    for marks, images, _ in pages:
        _assert_marks_and_clearance(marks, images, bleed, width, height)
    printed = [_trim(image, bleed) for image in pages[0][1]]
    assert {round(c[2] - c[0], 2) for c in printed} == {63.5} and {round(c[3] - c[1], 2) for c in printed} == {88.9}
    _assert_lined_up(printed, _svg_outlines(out / "cut" / "main" / "silhouette-letter.svg"), 3.175)
    _assert_lined_up(printed, _dxf_outlines(out / "cut" / "main" / "silhouette-letter.dxf", height), 3.175)
    last = [_trim(image, bleed) for image in pages[1][1]]  # the last sheet's two cards, and nothing else, are cut
    _assert_lined_up(last, _svg_outlines(out / "cut" / "main" / "silhouette-letter-last.svg"), 3.175)
    _assert_lined_up(last, _dxf_outlines(out / "cut" / "main" / "silhouette-letter-last.dxf", height), 3.175)
    # a mini card's corners are rounded in proportion to its width: 44.45 / 63.5 of 1/8 in
    small = [_trim(image, bleed) for image in _pdf(out / "cut" / "small" / "silhouette-letter.pdf")[0][1]]
    _assert_lined_up(small, _svg_outlines(out / "cut" / "small" / "silhouette-letter-last.svg"), 44.45 / 63.5 * 3.175)


def test_cricut_sheets_fill_the_print_then_cut_area_and_the_command_chooses_the_machine(workspace) -> None:
    _game(workspace)
    run_cli(workspace, "build", "cut")
    assert not (workspace / "output" / "cut" / "cut").exists()  # only when asked for
    run_cli(workspace, "cut", "cut", "--machine", "cricut")
    folder = workspace / "output" / "cut" / "cut" / "main"
    assert sorted(p.name for p in folder.iterdir()) == ["cricut-last.svg", "cricut.pdf", "cricut.svg"]
    pages = _pdf(folder / "cricut.pdf")
    assert [len(images) for _, images, _ in pages] == [4, 4, 2]
    width, height = pages[0][2]
    assert (width, height) == (pytest.approx(6.75 * 25.4), pytest.approx(9.25 * 25.4))
    assert all(not marks for marks, _, _ in pages)  # Design Space prints its own frame
    printed = [_trim(image, 3.0) for image in pages[0][1]]
    assert all(0 <= c[0] - 0.5 and c[2] + 0.5 <= width and 0 <= c[1] - 0.5 and c[3] + 0.5 <= height for c in printed)
    _assert_lined_up(printed, _svg_outlines(folder / "cricut.svg"), 3.175)
    _assert_lined_up([_trim(image, 3.0) for image in pages[2][1]], _svg_outlines(folder / "cricut-last.svg"), 3.175)


def test_brother_sheets_leave_a_white_margin_for_the_scan_and_their_cut_file_outlines_the_printed_cards(
        workspace) -> None:
    _game(workspace)
    run_cli(workspace, "cut", "cut", "--machine", "brother", "--paper", "a4")
    folder = workspace / "output" / "cut" / "cut" / "main"
    assert sorted(p.name for p in folder.iterdir()) == ["brother-a4-last.svg", "brother-a4.pdf", "brother-a4.svg"]
    pages = _pdf(folder / "brother-a4.pdf")
    assert [len(images) for _, images, _ in pages] == [8, 2]  # 10 cards, 8 to a landscape A4 sheet
    assert pages[0][2] == (pytest.approx(297.0), pytest.approx(210.0))
    assert all(not marks for marks, _, _ in pages)  # the ScanNCut scans the sheet: no marks
    small_pages = _pdf(folder.parent / "small" / "brother-a4.pdf")
    for _, images, _ in pages + small_pages:  # every card's print (trim and 0.5 mm of bleed) leaves 10 mm of paper
        printed = [_trim(image, 3.0 - 0.5) for image in images]
        assert all(c[0] >= 10 and c[1] >= 10 and c[2] <= 287 and c[3] <= 200 for c in printed), printed
    printed = [_trim(image, 3.0) for image in pages[0][1]]
    _assert_lined_up(printed, _svg_outlines(folder / "brother-a4.svg"), 3.175)
    _assert_lined_up([_trim(image, 3.0) for image in pages[1][1]], _svg_outlines(folder / "brother-a4-last.svg"), 3.175)
    small = [_trim(image, 3.0) for image in small_pages[0][1]]  # a mini card: 3 rows would reach 8.25 mm
    _assert_lined_up(small, _svg_outlines(folder.parent / "small" / "brother-a4-last.svg"), 44.45 / 63.5 * 3.175)


def test_the_example_game_gets_sheets_of_every_card_and_token_deck_through_the_cli(copy: Path) -> None:
    result = run_cli(copy, "cut", GAME, "--machine", "silhouette", "--paper", "a4")
    out = copy / "output" / GAME
    record = BuildRecord.read(out / "build.json")
    assert "cut:" not in result.output  # the board is not cut, and says nothing
    for name, deck in record.decks.items():
        folder = out / "cut" / name
        if deck.kind == "board":
            assert not folder.exists()
            continue
        pages = _pdf(folder / "silhouette-a4.pdf")
        assert pages[0][2] == (pytest.approx(297.0), pytest.approx(210.0))
        assert sum(len(images) for _, images, _ in pages) == sum(c.copies for c in record.cards if c.deck == name)
        for marks, images, _ in pages:  # 93 tokens of 22 mm on an A4 sheet: 3 places are too near a mark
            _assert_marks_and_clearance(marks, images, deck.bleed_mm, 297.0, 210.0)
        radius = deck.size_mm.width / 2 if deck.shape == "circle" else 3.175  # the tokens are round, 22 mm
        places = len(_svg_outlines(folder / "silhouette-a4.svg"))  # the places of a full sheet
        partial = len(pages[-1][1]) < places
        assert (folder / "silhouette-a4-last.svg").exists() == partial
        for index in {0, len(pages) - 1}:  # the first sheet and the last (cut by -last when not full)
            printed = [_trim(image, deck.bleed_mm) for image in pages[index][1]]
            stem = "silhouette-a4-last" if partial and index == len(pages) - 1 else "silhouette-a4"
            _assert_lined_up(printed, _svg_outlines(folder / f"{stem}.svg"), radius)
            _assert_lined_up(printed, _dxf_outlines(folder / f"{stem}.dxf", 210.0), radius)


def test_a_deck_no_sheet_can_hold_or_cut_is_a_warning_naming_it(workspace) -> None:
    decks = ("  big:\n    source: cards.csv\n    face: face.svg\n    size: {width: 200mm, height: 250mm}\n"
             "  hexes:\n    source: cards.csv\n    face: face.svg\n    id_prefix: hex-\n    shape: hex\n"
             "    size: {width: 30mm, height: 30mm}\n"
             "  spare:\n    source: none.csv\n    face: face.svg\n")  # printed 0 times: nothing to cut, no warning
    write_game(workspace, "odd", f"title: Odd\ndecks:\n{decks}",
               {"cards.csv": "name\nOne\n", "none.csv": "name,count\nSpare,0\n"}, {"face.svg": FACE})
    result = run_cli(workspace, "cut", "odd")
    lines = [line for line in result.output.splitlines() if "cut:" in line]
    assert lines == [
        "data/odd/game.yaml: warning: cut: deck 'big' (200 x 250 mm) does not fit the silhouette-letter sheet "
        "(279.4 x 215.9 mm, less the marks and margins); it is left out of that sheet",
        "data/odd/game.yaml: warning: cut: deck 'big' (200 x 250 mm) does not fit the cricut sheet "
        "(171.4 x 234.9 mm, less the marks and margins); it is left out of that sheet",
        "data/odd/game.yaml: warning: cut: deck 'big' (200 x 250 mm) does not fit the brother-letter sheet "
        "(279.4 x 215.9 mm, less the marks and margins); it is left out of that sheet",
        "data/odd/game.yaml: warning: cut: deck 'hexes' is hexagonal: cardgen cuts rectangles, rounded cards and "
        "circles; its cards are left out of cut/"]
    assert not any((workspace / "output" / "odd" / "cut" / deck).exists() for deck in ("hexes", "spare"))

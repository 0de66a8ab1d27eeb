"""Print-then-cut sheets for cutting machines (`cut/<deck>/`): the cards of a deck laid out on sheets with the
registration marks the machine's software looks for, and a cut file of the cards' outlines at the same places
(written by every build when game.yaml says `cut: {build: true}`, or by `cardgen cut GAME`).

- Silhouette (Silhouette Studio, Print & Cut, registration marks "Type 1"): a landscape Letter or A4 page with a
  filled square at the top left and an L at the top right and bottom left. Their geometry is that of
  silhouette-card-maker's registration sheets (assets/letter_registration.pdf and a4_registration.pdf, drawn at
  300 px per inch), which its Silhouette Studio cutting templates register against; docs/print.md says more.
  The cut file is SVG and DXF (Silhouette Studio's Basic Edition opens DXF, not SVG).
- Cricut (Design Space, Print Then Cut): Design Space prints its own frame around an image of at most 6.75 x 9.25 in,
  so the sheet is a page of exactly that size with no marks; the cut file is SVG.
- Brother ScanNCut (CanvasWorkspace): the machine scans the printed sheet on its mat instead of reading marks, so
  the sheet is a landscape Letter or A4 page with no marks and a white margin; the cut file is SVG, which
  CanvasWorkspace imports and places over the scanned sheet (it writes the machine's .fcm itself).

Every full sheet of a deck has the same places, cut by `<sheet>.svg`; when the last sheet is not full, its cards are
cut by `<sheet>-last.svg` (and `.dxf`), which leaves its empty places alone.

Each card is printed with its bleed up to half the gap between cards, so a cut a little off the line shows art,
not paper. Corners are cut round for a rounded deck, with the radius its size has (`corner_radius`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from reportlab.pdfgen.canvas import Canvas

from cardgen.core.errors import Problem
from cardgen.core.storage import write_atomic, write_text
from cardgen.core.units import MM_PER_INCH, PAPERS, mm_to_pt
from cardgen.options.cutting import CutSpec
from cardgen.outputs.stage import Stage, StageContext, manifest_file
from cardgen.record.record import DeckEntry

CUT = "cut"
_ASSET_MM = MM_PER_INCH / 300  # silhouette-card-maker's registration sheets are 300 px per inch
SILHOUETTE_INSET = 112 * _ASSET_MM  # 9.48 mm from the paper's edges to each mark's outer edge
SILHOUETTE_SQUARE = 72 * _ASSET_MM  # 6.10 mm, the filled square at the top left
SILHOUETTE_ARM = 97 * _ASSET_MM  # 8.21 mm, each arm of the two Ls
SILHOUETTE_LINE = 13 * _ASSET_MM  # 1.10 mm, the Ls' thickness
# mm of paper left white around each mark: the sensor can take art beside a mark for the mark. silhouette-card-maker's
# Letter poker layout leaves 0.9 mm; 0.3 mm lets 8 poker cards on a Letter sheet with a 1 mm gap.
MARK_CLEARANCE = 0.3
CRICUT_AREA = (6.75 * MM_PER_INCH, 9.25 * MM_PER_INCH)  # Design Space's largest Print Then Cut image (portrait)
# mm of white paper around a Brother sheet: beyond a home printer's unprintable border, and the page edge the
# ScanNCut's scan finds stays clear of art (the open-source CM300 sheet docs/print.md cites leaves 10 mm).
BROTHER_MARGIN = 10.0
STANDARD_CORNER = 3.175  # 1/8 in: the corner of a poker card (63.5 mm wide), the largest radius cut here


@dataclass(frozen=True)
class Box:
    """A rectangle on a sheet, in mm from the page's top-left corner."""

    x: float
    y: float
    width: float
    height: float

    def grown(self, margin: float) -> Box:
        """This box with `margin` added on every side."""
        return Box(self.x - margin, self.y - margin, self.width + 2 * margin, self.height + 2 * margin)

    def overlaps(self, other: Box) -> bool:
        """Whether the two boxes share any area."""
        return (self.x < other.x + other.width and other.x < self.x + self.width
                and self.y < other.y + other.height and other.y < self.y + self.height)


@dataclass(frozen=True)
class Sheet:
    """A machine family's page: its size, the registration marks printed on it and the area cards may take."""

    machine: str
    name: str  # the files' stem: silhouette-letter, cricut, brother-a4
    width: float
    height: float
    marks: tuple[Box, ...]  # filled black rectangles
    areas: tuple[Box, ...]  # where cards may go, each tried (between the marks' rows, between their columns)
    dxf: bool  # whether the machine's software wants the cut file as DXF too


def silhouette_sheet(paper: str) -> Sheet:
    """A landscape page of `paper` with Silhouette Studio's type-1 registration marks."""
    height, width = PAPERS[paper]
    i, s, a, t = SILHOUETTE_INSET, SILHOUETTE_SQUARE, SILHOUETTE_ARM, SILHOUETTE_LINE
    marks = (Box(i, i, s, s),  # the square, top left
             Box(width - i - a, i, a, t), Box(width - i - t, i, t, a),  # the L at the top right
             Box(i, height - i - a, t, a), Box(i, height - i - t, a, t))  # the L at the bottom left
    band = i + a + MARK_CLEARANCE  # from the paper's edge to past the marks
    areas = (Box(i, band, width - 2 * i, height - 2 * band), Box(band, i, width - 2 * band, height - 2 * i),
             Box(i, i, width - 2 * i, height - 2 * i))
    return Sheet("silhouette", f"silhouette-{paper}", width, height, marks, areas, dxf=True)


def cricut_sheet() -> Sheet:
    """Design Space's largest Print Then Cut image: the frame around it is Design Space's own."""
    width, height = CRICUT_AREA
    return Sheet("cricut", "cricut", width, height, (), (Box(0, 0, width, height),), dxf=False)


def brother_sheet(paper: str) -> Sheet:
    """A landscape page of `paper` for a ScanNCut, which scans it on the mat: no marks, a white margin."""
    height, width = PAPERS[paper]
    m = BROTHER_MARGIN
    return Sheet("brother", f"brother-{paper}", width, height, (), (Box(m, m, width - 2 * m, height - 2 * m),),
                 dxf=False)


def sheets(spec: CutSpec) -> list[Sheet]:
    """The sheets the options ask for."""
    chosen = [silhouette_sheet(spec.paper), cricut_sheet(), brother_sheet(spec.paper)]
    return [sheet for sheet in chosen if spec.machine in ("all", sheet.machine)]


def corner_radius(deck: DeckEntry) -> float:
    """The radius of a deck's cut corners in mm: none for a rectangle, half the short side for a circle, and for a
    rounded card 1/8 in at poker width (63.5 mm) and up, in proportion below it (a mini card, 44.45 mm: 2.22 mm)."""
    short = min(deck.size_mm.width, deck.size_mm.height)
    if deck.shape == "circle":
        return short / 2
    if deck.shape != "rounded":
        return 0.0
    return min(STANDARD_CORNER, short * STANDARD_CORNER / 63.5)


def slots(sheet: Sheet, width: float, height: float, gap: float, shown: float) -> list[Box]:
    """The trim boxes of the cards on a sheet, each printed `shown` mm past its trim: the grid of one of the sheet's
    areas that holds the most cards, centred, without the places whose print comes within `MARK_CLEARANCE` of a
    mark."""
    keep_out = [mark.grown(MARK_CLEARANCE) for mark in sheet.marks]
    grids = [[box for box in _grid(area, width, height, gap, shown)
              if not any(box.grown(shown).overlaps(mark) for mark in keep_out)] for area in sheet.areas]
    return max(grids, key=len)


def _grid(area: Box, width: float, height: float, gap: float, shown: float) -> list[Box]:
    """The largest grid of trim boxes whose print (`shown` mm past the trim) lies in `area`, centred in it."""
    columns = math.floor((area.width - 2 * shown + gap) / (width + gap))
    rows = math.floor((area.height - 2 * shown + gap) / (height + gap))
    left = area.x + (area.width - columns * (width + gap) + gap) / 2
    top = area.y + (area.height - rows * (height + gap) + gap) / 2
    return [Box(left + c * (width + gap), top + r * (height + gap), width, height)
            for r in range(rows) for c in range(columns)]


def outline_path(box: Box, radius: float) -> str:
    """An SVG path of a card's cut line (mm): its trim box with round corners of `radius`."""
    x, y, w, h, r = box.x, box.y, box.width, box.height, radius
    arc = f"A {r:.4f} {r:.4f} 0 0 1"
    return (f"M {x + r:.4f} {y:.4f} H {x + w - r:.4f} {arc} {x + w:.4f} {y + r:.4f} V {y + h - r:.4f} "
            f"{arc} {x + w - r:.4f} {y + h:.4f} H {x + r:.4f} {arc} {x:.4f} {y + h - r:.4f} V {y + r:.4f} "
            f"{arc} {x + r:.4f} {y:.4f} Z")


def cut_svg(sheet: Sheet, boxes: list[Box], radius: float) -> str:
    """The cut file as SVG: the page in mm, one path per card, thin red lines and no fill."""
    paths = "".join(f'  <path d="{outline_path(box, radius)}"/>\n' for box in boxes)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{sheet.width:.4f}mm" height="{sheet.height:.4f}mm" '
            f'viewBox="0 0 {sheet.width:.4f} {sheet.height:.4f}">\n'
            f'<g fill="none" stroke="#ff0000" stroke-width="0.1">\n{paths}</g>\n</svg>\n')


def write_cut_dxf(sheet: Sheet, boxes: list[Box], radius: float, path: Path) -> None:
    """The cut file as DXF (mm, y up from the page's bottom edge): one closed polyline per card, its round
    corners as bulges (a quarter circle is a bulge of tan(22.5 degrees))."""
    import ezdxf

    document = ezdxf.new("R2010", units=ezdxf.units.MM)
    space = document.modelspace()
    bulge = math.tan(math.radians(22.5))
    for box in boxes:
        left, right = box.x, box.x + box.width
        bottom, top = sheet.height - box.y - box.height, sheet.height - box.y
        r = radius
        # counter-clockwise; each point that begins a corner carries the bulge of the arc after it
        points = [(left + r, bottom, 0.0), (right - r, bottom, bulge), (right, bottom + r, 0.0),
                  (right, top - r, bulge), (right - r, top, 0.0), (left + r, top, bulge),
                  (left, top - r, 0.0), (left, bottom + r, bulge)] if r > 0 else \
            [(left, bottom, 0.0), (right, bottom, 0.0), (right, top, 0.0), (left, top, 0.0)]
        space.add_lwpolyline(points, format="xyb", close=True, dxfattribs={"layer": "CUT"})
    write_atomic(path, lambda temp: document.saveas(temp))


def write_sheets_pdf(sheet: Sheet, pages: list[list[tuple[Box, Path]]], deck: DeckEntry, shown: float,
                     path: Path) -> None:
    """The sheets as PDF: on every page the marks, and each card image with its trim box on its slot, its bleed
    shown up to half the gap."""
    def draw(temp: Path) -> None:
        canvas = Canvas(str(temp), pagesize=(mm_to_pt(sheet.width), mm_to_pt(sheet.height)))
        canvas.setTitle(f"{deck.title}: {sheet.name} print-then-cut sheets")
        for page in pages:
            canvas.setFillColorRGB(0, 0, 0)
            for mark in sheet.marks:
                canvas.rect(*_pt(sheet, mark), stroke=0, fill=1)
            for box, image in page:
                _draw_card(canvas, sheet, box, image, deck.bleed_mm, shown)
            canvas.showPage()
        canvas.save()

    write_atomic(path, draw)


def _draw_card(canvas: Canvas, sheet: Sheet, box: Box, image: Path, bleed: float, shown: float) -> None:
    """A card image with its trim box on `box`, clipped `shown` mm outside it."""
    canvas.saveState()
    clip = canvas.beginPath()
    clip.rect(*_pt(sheet, box.grown(shown)))
    canvas.clipPath(clip, stroke=0, fill=0)
    canvas.drawImage(str(image), *_pt(sheet, box.grown(bleed)))
    canvas.restoreState()


def _pt(sheet: Sheet, box: Box) -> tuple[float, float, float, float]:
    """A box in PDF points, y up from the page's bottom edge: x, y, width, height."""
    return (mm_to_pt(box.x), mm_to_pt(sheet.height - box.y - box.height), mm_to_pt(box.width), mm_to_pt(box.height))


class CutStage(Stage[CutSpec]):
    """`cut/`: print-then-cut sheets and cut files per deck and machine (`cut: {build: true}` or `cardgen cut`)."""

    name = CUT

    def run(self, ctx: StageContext) -> list[Problem]:
        """cut/<deck>/<sheet>.pdf, .svg (and .dxf) for every deck the sheets can hold."""
        spec = self.config
        problems: list[Problem] = []
        for name, deck in ctx.record.decks.items():
            images = [ctx.image_file(card.face) for card in ctx.record.cards if card.deck == name
                      for _ in range(card.copies)]
            if images:  # a deck printed 0 times has nothing to cut
                problems += _deck(ctx, spec, name, deck, images)
        return problems


def _deck(ctx: StageContext, spec: CutSpec, name: str, deck: DeckEntry, images: list[Path]) -> list[Problem]:
    """A deck's sheets and cut files for every machine asked for, and what kept it off a sheet."""
    where = manifest_file(ctx.game)
    if deck.shape == "hex":
        return [Problem(f"cut: deck {name!r} is hexagonal: cardgen cuts rectangles, rounded cards and circles; "
                        "its cards are left out of cut/", file=where, severity="warning")]
    problems = []
    for sheet in sheets(spec):
        shown = min(deck.bleed_mm, spec.gap / 2)
        boxes = slots(sheet, deck.size_mm.width, deck.size_mm.height, spec.gap, shown)
        if boxes:
            _write_sheet(ctx.out_dir / CUT / name, sheet, deck, boxes, images, shown)
        elif deck.kind != "board":  # a board is not cut by machine: no need to say so
            problems.append(Problem(
                f"cut: deck {name!r} ({deck.size_mm.width:g} x {deck.size_mm.height:g} mm) does not fit the "
                f"{sheet.name} sheet ({sheet.width:.1f} x {sheet.height:.1f} mm, less the marks and margins); "
                "it is left out of that sheet", file=where, severity="warning"))
    return problems


def _write_sheet(folder: Path, sheet: Sheet, deck: DeckEntry, boxes: list[Box], images: list[Path],
                 shown: float) -> None:
    """One machine's sheets of a deck (`<sheet>.pdf`) and their cut files (`<sheet>.svg`, `-last.svg`, DXF)."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = [list(zip(boxes, images[i:i + len(boxes)])) for i in range(0, len(images), len(boxes))]
    write_sheets_pdf(sheet, pages, deck, shown, folder / f"{sheet.name}.pdf")
    radius = corner_radius(deck)
    layouts = {sheet.name: boxes}
    if len(pages[-1]) < len(boxes):  # the last sheet's empty places are not cut
        layouts[f"{sheet.name}-last"] = boxes[:len(pages[-1])]
    for stem, cut in layouts.items():
        write_text(folder / f"{stem}.svg", cut_svg(sheet, cut, radius))
        if sheet.dxf:
            write_cut_dxf(sheet, cut, radius, folder / f"{stem}.dxf")

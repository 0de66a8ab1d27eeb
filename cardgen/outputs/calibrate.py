"""A one-sheet duplex calibration page: read the printer's back-side misalignment off fine rulers.

The front shows five targets (cross lines with rulers); the back shows rulers at the mirrored
places, labelled in mm. Held against a window, each front cross line shows through the back at
the ruler value that is the correction to enter as `back_offset` (x to the right, y up).
"""
from __future__ import annotations

from pathlib import Path

from cardgen.core.storage import write_atomic
from cardgen.core.units import mm_to_pt, parse_paper
from cardgen.outputs.imposition import Duplex, mirror_axis

RULER_MM = 6          # each ruler reads from -6 to +6 mm
TARGET_INSET_MM = 40  # corner targets sit this far from the paper edges
AWAY = 8              # rulers start this far from the centre, clear of each other

INSTRUCTIONS = {
    "front": ["cardgen duplex calibration sheet: FRONT ({paper}, {duplex} duplex)",
              "Print double-sided at 100% (actual size, no 'fit to page'). The bar below must measure 100 mm.",
              "Then turn to the back side."],
    "back": ["cardgen duplex calibration sheet: BACK ({paper}, {duplex} duplex)",
             "Hold the sheet against a window. At each target, read where the front's cross lines show through:",
             "X on the horizontal ruler, Y on the vertical one (in mm). Average the five targets and put them in",
             "game.yaml as   print: {{back_offset: \"X,Y\"}}   or pass --back-offset X,Y to cardgen print."],
}


def calibration_targets(width: float, height: float) -> list[tuple[str, float, float]]:
    """The five targets of the front page: centre and four near the corners (label, x, y in mm)."""
    i = TARGET_INSET_MM
    return [("A", i, height - i), ("B", width - i, height - i), ("C", width / 2, height / 2),
            ("D", i, i), ("E", width - i, i)]


def write_calibration_pdf(target: Path, paper: str = "letter", duplex: Duplex = "long-edge") -> Path:
    """Write the two-page (one sheet) duplex calibration PDF for a paper, portrait."""
    width, height = min(parse_paper(paper)), max(parse_paper(paper))
    write_atomic(target, lambda temp: _draw(temp, paper, duplex, width, height))
    return target


def _draw(path: Path, paper: str, duplex: Duplex, width: float, height: float) -> None:
    from reportlab import rl_config
    from reportlab.pdfgen import canvas

    rl_config.useA85 = 0
    pdf = canvas.Canvas(str(path), pagesize=(mm_to_pt(width), mm_to_pt(height)), pageCompression=1)
    pdf.setTitle(f"cardgen duplex calibration ({paper}, {duplex})")
    axis = mirror_axis(duplex, width, height)
    for side in ("front", "back"):
        _instructions(pdf, side, paper, duplex, height)
        for label, x, y in calibration_targets(width, height):
            if side == "back":
                x, y = (width - x, y) if axis == "x" else (x, height - y)
            # Back rulers below and left; front ones where their mirror image lands above and right.
            signs = (-1, -1) if side == "back" else ((-1, 1) if axis == "x" else (1, -1))
            _target(pdf, label, x, y, side == "front", *signs)
        if side == "front":
            _scale_bar(pdf, width / 2 - 50, height / 2 + 45)
        pdf.showPage()
    pdf.save()


def _instructions(pdf, side: str, paper: str, duplex: str, height: float) -> None:
    pdf.setFont("Helvetica", 8)
    pdf.setFillColorRGB(0, 0, 0)
    for n, line in enumerate(INSTRUCTIONS[side]):
        pdf.drawString(mm_to_pt(15), mm_to_pt(height - 15 - 4.5 * n), line.format(paper=paper, duplex=duplex))


def _scale_bar(pdf, x: float, y: float) -> None:
    """A 100 mm bar with 10 mm ticks to check the print scale."""
    pdf.setLineWidth(0.5)
    pdf.line(mm_to_pt(x), mm_to_pt(y), mm_to_pt(x + 100), mm_to_pt(y))
    for n in range(11):
        pdf.line(mm_to_pt(x + 10 * n), mm_to_pt(y), mm_to_pt(x + 10 * n), mm_to_pt(y + (3 if n % 5 else 5)))
    pdf.setFont("Helvetica", 6)
    pdf.drawCentredString(mm_to_pt(x + 50), mm_to_pt(y - 3), "100 mm")


def _target(pdf, label: str, x: float, y: float, cross: bool, sx: int, sy: int) -> None:
    """Rulers centred on (x, y): ticks every 0.5 mm, numbers every mm; the front adds long cross lines.

    The horizontal ruler (reads X) lies on side sy of the centre line, the vertical one (reads Y) on
    side sx; the two sides of the sheet use opposite sides so their rulers do not overlap in the light.
    """
    pdf.setStrokeColorRGB(0, 0, 0)
    pdf.setFillColorRGB(0, 0, 0)
    if cross:
        pdf.setLineWidth(0.35)
        pdf.line(mm_to_pt(x - 20), mm_to_pt(y), mm_to_pt(x + 20), mm_to_pt(y))
        pdf.line(mm_to_pt(x), mm_to_pt(y - 20), mm_to_pt(x), mm_to_pt(y + 20))
    pdf.setLineWidth(0.15)
    pdf.setFont("Helvetica", 3.5)
    for half in range(-2 * RULER_MM, 2 * RULER_MM + 1):
        d = half / 2
        tick = 1.0 if half % 2 else (2.5 if half else 4.0)
        pdf.line(mm_to_pt(x + d), mm_to_pt(y + sy * AWAY), mm_to_pt(x + d), mm_to_pt(y + sy * (AWAY + tick)))
        pdf.line(mm_to_pt(x + sx * AWAY), mm_to_pt(y + d), mm_to_pt(x + sx * (AWAY + tick)), mm_to_pt(y + d))
        if half % 4 == 0:  # numbers every 2 mm: closer ones would overlap at this size
            text = f"{d:+g}" if d else "0"
            pdf.drawCentredString(mm_to_pt(x + d), mm_to_pt(y + sy * (AWAY + 5.5) - (1 if sy < 0 else 0)), text)
            draw = pdf.drawRightString if sx < 0 else pdf.drawString
            draw(mm_to_pt(x + sx * (AWAY + 5)), mm_to_pt(y + d - 0.4), text)
    pdf.setFont("Helvetica-Bold", 7)
    pdf.drawString(mm_to_pt(x + 2), mm_to_pt(y + 2), label)

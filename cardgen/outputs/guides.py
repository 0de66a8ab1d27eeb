"""Layout guides (`cardgen build --guides`): copies of the card images under `guides/` with the bleed, the
trim line, the safe zone and the box of every helper call that records one (text_box, text_line, icon, image:
see `svg/helper_table.py`) drawn over them.

The real card images, PDF and Tabletop Simulator files are not touched; the gallery shows the same guides
as an overlay it can switch on and off.
"""
from __future__ import annotations

from pathlib import Path

from cardgen.core.errors import Problem
from cardgen.core.storage import write_atomic
from cardgen.outputs.stage import Stage, StageContext
from cardgen.record.record import DeckEntry, GuideBox
from cardgen.svg.helper_table import GUIDE_COLORS

GUIDES = "guides"
_RED, _CYAN = (229, 57, 53), (0, 188, 212)


def _dashed_rect(draw, box: tuple[float, float, float, float], color: tuple, width: int, dash: int) -> None:
    x0, y0, x1, y1 = box
    for start, end, horizontal in (((x0, y0), x1, True), ((x0, y1), x1, True), ((x0, y0), y1, False),
                                   ((x1, y0), y1, False)):
        along = start[0] if horizontal else start[1]
        while along < end:
            stop = min(along + dash, end)
            line = [(along, start[1]), (stop, start[1])] if horizontal else [(start[0], along), (start[0], stop)]
            draw.line(line, fill=color, width=width)
            along += 2 * dash


def draw_guides(image_path: Path, deck: DeckEntry, boxes: list[GuideBox], target: Path) -> None:
    """Write a copy of a card image with its layout guides drawn over it."""
    from PIL import Image, ImageColor, ImageDraw

    with Image.open(image_path) as opened:
        card = opened.convert("RGBA")
    w, h = card.size
    line = max(2, round(w / 300))
    bleed = deck.bleed_mm / 25.4 * deck.dpi
    safe = bleed + deck.safe_mm / 25.4 * deck.dpi
    overlay = Image.new("RGBA", card.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    bands = ((0, 0, w, bleed), (0, h - bleed, w, h), (0, bleed, bleed, h - bleed), (w - bleed, bleed, w, h - bleed))
    for band in bands:
        draw.rectangle(band, fill=(*_RED, 70))
    draw.rectangle((bleed, bleed, w - bleed, h - bleed), outline=(*_RED, 255), width=line)
    _dashed_rect(draw, (safe, safe, w - safe, h - safe), (*_CYAN, 255), line, 4 * line)
    for box in boxes:
        corners = (box.x, box.y, box.x + box.width, box.y + box.height)
        if box.overflow:
            draw.rectangle(corners, fill=(*_RED, 80))
        draw.rectangle(corners, outline=(*ImageColor.getrgb(GUIDE_COLORS.get(box.kind, "#ffffff")), 255),
                       width=line)
    result = Image.alpha_composite(card, overlay).convert("RGB")
    write_atomic(target, lambda temp: result.save(temp, format="PNG", compress_level=1))


class GuidesStage(Stage):
    """`guides/`: copies of the card images with their layout guides drawn over them (`build --guides`)."""

    name = "guides"

    def run(self, ctx: StageContext) -> list[Problem]:
        """guides/<same path as the image>.png for every face and back."""
        record, out_dir = ctx.record, ctx.out_dir
        for card in record.cards:
            draw_guides(out_dir / card.face, record.decks[card.deck], card.boxes, out_dir / GUIDES / card.face)
        for back in record.backs.values():
            draw_guides(out_dir / back.image, record.decks[back.deck], back.boxes, out_dir / GUIDES / back.image)
        return []

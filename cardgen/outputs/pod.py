"""Print-on-demand export: one PNG per printed card with bleed at exact pixel size, plus the backs.

The Game Crafter (and similar services) want each card as trim + 1/8 in bleed on every side at
300 DPI: a poker card is 825 x 1125 px. A bulk upload makes one card per file, so every copy gets
its own file (hard links: no extra disk space), numbered in data order: `pod/<deck>/<nnn>-<id>.png`,
with the deck's back as `pod/<deck>/back.png` (`back-<name>.png` each when its cards have different backs) and a
`pod/<deck>/cards.csv` listing them, each with its back.
"""
from __future__ import annotations

import csv
import functools
from pathlib import Path

from cardgen.core.errors import Problem
from cardgen.core.storage import place_file, write_atomic
from cardgen.core.units import MM_PER_INCH
from cardgen.load.manifest import Game
from cardgen.outputs.stage import Stage, StageContext
from cardgen.record.record import BuildRecord

POD_DPI = 300
POD_BLEED_IN = 0.125


def pod_pixels(width_mm: float, height_mm: float) -> tuple[int, int]:
    """Pixel size a print-on-demand service expects for a trim size: trim + 1/8 in bleed, 300 DPI."""
    return tuple(round((mm / MM_PER_INCH + 2 * POD_BLEED_IN) * POD_DPI) for mm in (width_mm, height_mm))  # type: ignore[return-value]


def write_pod(game: Game, record: BuildRecord, out_dir: Path) -> None:
    """Write `pod/` into a game's output folder (an output stage, run by `cardgen build --pod`)."""
    pod = out_dir / "pod"
    for deck in dict.fromkeys(card.deck for card in record.cards):
        cards = record.cards_of(deck)
        folder = pod / deck
        size = pod_pixels(cards[0].size_mm.width, cards[0].size_mm.height)
        backs = sorted({c.back for c in cards if c.back})
        back_files = {back: "back.png" if len(backs) == 1 else f"back-{Path(back).stem}.png" for back in backs}
        rows = [("file", "id", "name", "copy", "of", "back")]
        number = 0
        for card in cards:
            first = None
            for copy in range(1, card.copies + 1):
                number += 1
                target = folder / f"{number:03d}-{card.id}.png"
                if first is None:
                    _export(out_dir / card.face, target, size, card.dpi)
                    first = target
                else:
                    place_file(first, target)
                rows.append((target.name, card.id, card.name, str(copy), str(card.copies),
                             back_files[card.back] if card.back else ""))
        for back, name in back_files.items():
            _export(out_dir / back, folder / name, size, cards[0].dpi)
        write_atomic(folder / "cards.csv", functools.partial(_write_csv, rows=rows))


class PodStage(Stage):
    """`pod/`: the print-on-demand export, when the manifest asks for it (`print: {pod: true}`) or `build --pod`."""

    name = "pod"

    def enabled(self, game: Game) -> bool:
        """Only when the manifest's `print:` section says `pod: true`."""
        return bool(getattr(game.options("print"), "pod", False))

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write the export."""
        write_pod(ctx.game, ctx.record, ctx.out_dir)
        return []


def _write_csv(path: Path, rows: list[tuple[str, str, str, str, str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def _export(source: Path, target: Path, size: tuple[int, int], dpi: int) -> None:
    """Copy an image at the exact pixel size: as is when it matches, else rescaled to 300 DPI and re-cut."""
    from PIL import Image

    target.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(source) as image:
        if image.size == size:
            place_file(source, target)
            return
        # Scale to 300 DPI, then crop (or stretch, for less bleed than 1/8 in) around the centre.
        scale = POD_DPI / dpi
        scaled = image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS)
        left, top = (scaled.width - size[0]) // 2, (scaled.height - size[1]) // 2
        if left >= 0 and top >= 0:
            scaled = scaled.crop((left, top, left + size[0], top + size[1]))
        else:
            scaled = scaled.resize(size, Image.Resampling.LANCZOS)
        write_atomic(target, lambda temp: scaled.save(temp, "PNG"))

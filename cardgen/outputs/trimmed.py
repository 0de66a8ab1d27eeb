"""Trimmed images (`trimmed/`): every card face and back cut at its trim line, without the bleed, for a rulebook,
a website or a print shop that adds its own bleed (Squib's `trim:`). `trimmed/cards/<deck>/<id>.png` and
`trimmed/backs/<name>.png` mirror the card files; written by every build when game.yaml says `trimmed: {build:
true}`, or by `cardgen trimmed GAME [--dpi N]` for the built game.

The trim line lies `bleed` from each edge of a card image, rarely on a whole pixel (1/8 in at 300 DPI is 37.5 px):
each image is resampled from exactly that box to the trim size in whole pixels at the chosen resolution, so a
63.5 x 88.9 mm card at 300 DPI is 750 x 1050 px.
"""
from __future__ import annotations

import functools
from pathlib import Path

from cardgen.core.errors import Problem
from cardgen.options.trimmed import TrimmedSpec
from cardgen.outputs.reuse import reuse_or_make
from cardgen.outputs.stage import Stage, StageContext
from cardgen.outputs.tables import cut_card
from cardgen.record.record import DeckEntry

TRIMMED = "trimmed"


def trim_pixels(deck: DeckEntry, dpi: int) -> tuple[int, int]:
    """The pixel size of a deck's cards cut at the trim line, at `dpi`."""
    return round(deck.size_mm.width / 25.4 * dpi), round(deck.size_mm.height / 25.4 * dpi)


def write_trimmed(source: Path, deck: DeckEntry, dpi: int, target: Path) -> None:
    """Write a card image cut at its trim line (the bleed removed), at `dpi`, as PNG at `target`."""
    cut_card(source, deck, trim_pixels(deck, dpi)).save(target, format="PNG", dpi=(dpi, dpi))


class TrimmedStage(Stage[TrimmedSpec]):
    """`trimmed/`: the card images without bleed (game.yaml's `trimmed: {build: true}`, or `cardgen trimmed`)."""

    name = TRIMMED

    def run(self, ctx: StageContext) -> list[Problem]:
        """trimmed/<same path as the image>.png for every face and back, never finer than the card was drawn."""
        spec = self.config
        record, out_dir = ctx.record, ctx.out_dir
        images = [(card.face, record.decks[card.deck]) for card in record.cards]
        images += [(back.image, record.decks[back.deck]) for back in record.backs.values()]
        hashes = record.image_hashes()
        for image, deck in images:
            dpi = min(spec.dpi or deck.dpi, deck.dpi)  # more pixels than drawn would add nothing but size
            # kept in the output root's cache by what it is made from: a rebuild cuts only the images it drew again
            inputs = [TRIMMED, hashes[image], dpi, deck.bleed_mm, deck.size_mm.width, deck.size_mm.height, deck.dpi]
            reuse_or_make(ctx.out_root, out_dir / TRIMMED / image, [str(i) for i in inputs],
                          functools.partial(write_trimmed, ctx.image_file(image), deck, dpi), __name__)
        return []

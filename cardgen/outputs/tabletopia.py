"""Tabletopia (`tabletopia/`): the card images laid out for Tabletopia's workshop, written by every build when game.yaml
says `tabletopia: {build: true}`, or by `cardgen tabletopia GAME` for the built game.

Tabletopia imports no file: a designer uploads each component's images in its workshop. Its creator checklist and
graphics guide ask for images at 10 px per mm by default and at most 4000 x 4000 px, the front and the back of a card in
different files (a 52-card deck is 53 files), and the same pixel size for every card of a stack
(help.tabletopia.com/knowledge-base/how-to-prepare-graphics/; tabletopia.com/news/game-creator-checklist). So each deck
is a folder `tabletopia/<deck>/` of its faces cut at the trim line (`faces/<id>.png`) and its back (`backs/back.png`, or
`backs/<id>.png` when each card has its own), all of the deck's size; `tabletopia/components.csv` lists every file with
its copies and size, for the workshop's fields.
"""
from __future__ import annotations

import csv
import functools
import io

from cardgen.core.errors import Problem
from cardgen.core.storage import write_text
from cardgen.options.tables import TabletopiaSpec
from cardgen.outputs.reuse import reuse_or_make
from cardgen.outputs.stage import Stage, StageContext, manifest_file
from cardgen.outputs.tables import DeckCards, decks_on_table, fitted, pixels_at, write_cut

TABLETOPIA = "tabletopia"
MAX_SIDE_PX = 4000  # "max 4000 x 4000" (Tabletopia's graphics guide)
COLUMNS = ["deck", "component", "front", "back", "copies", "width_mm", "height_mm", "width_px", "height_px"]


class TabletopiaStage(Stage[TabletopiaSpec]):
    """`tabletopia/`: one folder per deck for Tabletopia's workshop (`tabletopia: {build: true}` or `cardgen
    tabletopia`)."""

    name = TABLETOPIA

    def run(self, ctx: StageContext) -> list[Problem]:
        """Every deck's faces and backs at one size; `components.csv`; a finding for a deck shrunk to the limit."""
        spec = self.config
        rows: list[list[object]] = []
        problems: list[Problem] = []
        for deck in decks_on_table(ctx.record):
            wanted = pixels_at(deck.deck, spec.px_per_mm)
            size = fitted(wanted, MAX_SIDE_PX)
            if size != wanted:
                problems.append(Problem(
                    f"deck '{deck.name}': its cards at {spec.px_per_mm} px per mm would be {wanted[0]} x {wanted[1]} "
                    f"px; Tabletopia takes at most {MAX_SIDE_PX} x {MAX_SIDE_PX}, so they are {size[0]} x {size[1]}",
                    file=manifest_file(ctx.game), severity="warning"))
            rows += self._write_deck(ctx, deck, size)
        table = io.StringIO()
        csv.writer(table, lineterminator="\n").writerows([COLUMNS, *rows])
        write_text(ctx.out_dir / TABLETOPIA / "components.csv", table.getvalue())
        return problems

    def _write_deck(self, ctx: StageContext, deck: DeckCards, size: tuple[int, int]) -> list[list[object]]:
        """Write a deck's faces and backs at `size`; its rows of `components.csv`."""
        shared = deck.shared_back
        files: dict[str, str] = {}  # image path in the build -> file name in the deck's folder
        if shared:
            files[shared] = "backs/back.png"
        for card in deck.cards:  # faces and backs in folders of their own: a card id is any file name
            files[card.face] = f"faces/{card.id}.png"
            if card.back and not shared:
                files[card.back] = f"backs/{card.id}.png"
        hashes = ctx.record.image_hashes()
        for image, name in files.items():
            inputs = [TABLETOPIA, *size, deck.deck.bleed_mm, deck.deck.dpi, hashes[image]]
            make = functools.partial(write_cut, ctx.image_file(image), deck.deck, size)
            reuse_or_make(ctx.out_root, ctx.out_dir / TABLETOPIA / deck.name / name, [str(i) for i in inputs], make,
                          __name__)
        mm = deck.deck.size_mm
        return [[deck.name, card.name, f"{deck.name}/{files[card.face]}",
                 f"{deck.name}/{files[card.back]}" if card.back else "", card.copies, mm.width, mm.height, *size]
                for card in deck.cards]

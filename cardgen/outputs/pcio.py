"""playingcards.io (`pcio/<game>.pcio`): a room file to import in the room's editor, written by every build when
game.yaml says `pcio: {build: true}`, or by `cardgen pcio GAME` for the built game.

playingcards.io publishes no specification; the format is what the open-source tools that read and write it do. A
`.pcio` file is a ZIP holding `widgets.json`, a list of widgets: a `cardDeck` holds the deck's `cardTypes` (one per
card, its fields) and a `faceTemplate` and `backTemplate` (objects drawn on the card: an `image` whose `valueType`
`dynamic` names a card field, `static` a fixed image); a `card` names its deck and card type and the `cardPile` it
lies in (`parent`); a `hand` holds each player's cards (georgiamoon/techpolicycards: widgets.json.template,
render-pcio.py). Images travel in the ZIP under `userassets/` and are named `package://userassets/<file>`;
virtualtabletop.io's importer (ArnoldSmith86/virtualtabletop, server/pcioimport.mjs) reads those under 2 MiB and
takes `cardWidth` and `cardHeight` (default 103 x 160) as the deck's card size in the room's pixels.
"""
from __future__ import annotations

import functools
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from cardgen.core.errors import Problem
from cardgen.core.storage import write_bytes
from cardgen.options.tables import PcioSpec
from cardgen.outputs.reuse import make_cached
from cardgen.outputs.stage import Stage, StageContext, manifest_file
from cardgen.outputs.tables import DeckCards, cut_card, decks_on_table, pixels_at
from cardgen.record.record import DeckEntry

PCIO = "pcio"
ROOM_PX_PER_MM = 160 / 88.9  # a poker card is as tall as playingcards.io's default card, 160 room pixels
MAX_IMAGE_BYTES = 2 * 1024 * 1024  # virtualtabletop.io's importer skips larger images
MAX_WIDGETS = 1200  # "playingcards io has a limit of around 1200 widgets" (cah-to-csv README)
PILE_GAP, HAND_HEIGHT = 40, 180


def asset(image: str) -> str:
    """The ZIP path of a card image: `userassets/` and its path in the build (`cards/<deck>/<id>.png`)."""
    return f"userassets/{image}"


def image_object(width: int, height: int, value: str, dynamic: bool) -> dict[str, Any]:
    """A template object that covers the card with an image: a card field's (`dynamic`) or a fixed one."""
    return {"type": "image", "x": 0, "y": 0, "w": width, "h": height, "color": "transparent",
            "valueType": "dynamic" if dynamic else "static", "value": value}


def deck_widgets(deck: DeckCards, x: int, y: int) -> list[dict[str, Any]]:
    """A deck's widgets: its pile, the deck with one card type per card, and one card widget per copy."""
    width, height = pixels_at(deck.deck, ROOM_PX_PER_MM)
    pile, deck_id = f"{deck.name}/pile", f"{deck.name}/deck"  # "/" is in no name: ids stay apart
    shared, own_backs = deck.shared_back, any(card.back for card in deck.cards)
    # one back for the deck: a fixed image; backs of their own: each card type's `back`; none: the face again
    back = image_object(width, height, "package://" + asset(shared) if shared else "back" if own_backs else "image",
                        dynamic=not shared)
    card_types = {card.id: {"label": card.name, "image": "package://" + asset(card.face),
                            **({"back": "package://" + asset(card.back or card.face)} if own_backs and not shared
                               else {})}
                  for card in deck.cards}
    widgets: list[dict[str, Any]] = [
        {"id": pile, "type": "cardPile", "x": x, "y": y, "z": 1, "width": width, "height": height,
         "label": deck.deck.title, "hasShuffleButton": True, "dragging": None},
        {"id": deck_id, "type": "cardDeck", "parent": pile, "x": x, "y": y, "z": 2, "cardWidth": width,
         "cardHeight": height, "cardTypes": card_types, "dragging": None, "owner": None,
         "faceTemplate": {"includeBorder": False, "includeRadius": deck.deck.shape == "rounded",
                          "objects": [image_object(width, height, "image", True)]},
         "backTemplate": {"includeBorder": False, "includeRadius": deck.deck.shape == "rounded",
                          "objects": [back]}},
    ]
    copies = [(card, n) for card in deck.cards for n in range(card.copies)]
    widgets += [{"id": f"{deck.name}/{card.id}/{n + 1}", "type": "card", "deck": deck_id, "cardType": card.id,
                 "parent": pile, "x": x, "y": y, "z": 3 + i, "faceup": False, "dragging": None, "owner": None}
                for i, (card, n) in enumerate(copies)]
    return widgets


def room_widgets(decks: list[DeckCards]) -> list[dict[str, Any]]:
    """Every deck's widgets, the piles side by side in a row under the players' hand."""
    widgets: list[dict[str, Any]] = [{"id": "hand", "type": "hand", "x": 50, "y": 50, "z": 1, "enabled": True,
                                      "dragging": None}]
    x = 50
    for deck in decks:
        widgets += deck_widgets(deck, x, 50 + HAND_HEIGHT + PILE_GAP)
        x += pixels_at(deck.deck, ROOM_PX_PER_MM)[0] + PILE_GAP
    return widgets


def write_card_png(source: Path, deck: DeckEntry, px_per_mm: float, target: Path) -> None:
    """Write a card image cut at the trim line at `px_per_mm` as PNG at `target`, halved until it is under the
    importer's bound (a board drawn with photographs can be larger)."""
    size = pixels_at(deck, px_per_mm)
    while True:
        buffer = io.BytesIO()
        cut_card(source, deck, size).save(buffer, format="PNG")
        if buffer.tell() < MAX_IMAGE_BYTES or max(size) < 64:
            break
        size = (max(1, size[0] // 2), max(1, size[1] // 2))
    target.write_bytes(buffer.getvalue())


class PcioStage(Stage[PcioSpec]):
    """`pcio/<game>.pcio`: a playingcards.io room (`pcio: {build: true}` or `cardgen pcio`)."""

    name = PCIO

    def run(self, ctx: StageContext) -> list[Problem]:
        """The room file: `widgets.json` and every face and back it names; a finding past the widget limit."""
        spec = self.config
        decks = decks_on_table(ctx.record)
        widgets = room_widgets(decks)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as room:
            room.writestr("widgets.json", json.dumps(widgets, indent=1))
            # each image once, though decks share a back; PNG is compressed already: stored as it is
            images = {image: deck for deck in decks for card in deck.cards for image in (card.face, card.back) if image}
            hashes = ctx.record.image_hashes()
            for image, deck in images.items():
                # kept in the output root's cache by what it is cut from: a rebuild cuts only what it drew again
                inputs = [PCIO, hashes[image], spec.dpi, deck.deck.bleed_mm, deck.deck.dpi, deck.deck.size_mm]
                make = functools.partial(write_card_png, ctx.image_file(image), deck.deck, spec.dpi / 25.4)
                cut = make_cached(ctx.out_root, ".png", [str(i) for i in inputs], make, __name__)
                room.write(cut, asset(image), compress_type=zipfile.ZIP_STORED)
        write_bytes(ctx.out_dir / PCIO / f"{ctx.record.game.name}.pcio", buffer.getvalue())
        if len(widgets) <= MAX_WIDGETS:
            return []
        return [Problem(f"the playingcards.io room has {len(widgets)} widgets (a card per copy); playingcards.io "
                        f"holds about {MAX_WIDGETS}: import fewer copies or split the game into rooms",
                        file=manifest_file(ctx.game), severity="warning")]

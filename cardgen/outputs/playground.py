"""Tabletop Playground (`playground/<game>/`): a package folder with one card template per texture of a deck in
`Templates/` (`<deck>.cards.json`, or `<deck>.cards-1.json`, `-2`, ...) and its textures in `Textures/`
(`<deck>.faces.png`, `<deck>.back.png` or `<deck>.backs.png`), written by every build when game.yaml says `playground:
{build: true}`, or by `cardgen playground GAME` for the built game.

The templates follow Tabletop Playground's published schema (plasticity-studios/tabletop-playground-schemas,
`src/templates.ts` and `schema.json`, `CardTemplate`): a texture is a grid of NumHorizontal x NumVertical cards (each at
most 128), `Indices` lists the cards of the stack by their place on it (a card with three copies is there three times),
sizes are in centimetres. A deck whose cards do not fit one texture of `texture_size` pixels is split into several
templates, one per texture: the schema has no field for a second front texture. The back is a separate file (`BackIndex`
-2: one back for the deck; -3: a texture of backs laid out as the faces are, when the cards have backs of their own),
and a card hidden in a hand shows its back (`HiddenIndex` -3).
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from cardgen.core.errors import Problem
from cardgen.core.storage import write_text
from cardgen.options.tables import PlaygroundSpec
from cardgen.outputs.reuse import reuse_or_make
from cardgen.outputs.stage import Stage, StageContext
from cardgen.outputs.tables import DeckCards, cut_card, decks_on_table, fitted, pixels_at
from cardgen.record.record import BuildRecord

PLAYGROUND = "playground"
MAX_GRID = 128  # NumHorizontal and NumVertical: at most 128 (the schema's maximum)
MODELS = {"rounded": "Rounded", "circle": "Round", "hex": "Hexagonal"}  # any other shape: "Square"


def texture_grid(count: int, cell: tuple[int, int], limit: int) -> tuple[int, int]:
    """Columns and rows of the largest grid of `cell`-sized cards within `limit` pixels a side, for `count` cards."""
    columns = min(count, MAX_GRID, max(1, limit // cell[0]))
    rows = min(math.ceil(count / columns), MAX_GRID, max(1, limit // cell[1]))
    return columns, rows


def write_texture(sources: list[Path], deck: DeckCards, cell: tuple[int, int], columns: int, target: Path) -> None:
    """Write the cards' images cut at the trim line into a grid `columns` wide, as PNG at `target`."""
    from PIL import Image

    rows = math.ceil(len(sources) / columns)
    sheet = Image.new("RGBA", (columns * cell[0], rows * cell[1]))
    for slot, source in enumerate(sources):
        sheet.paste(cut_card(source, deck.deck, cell), ((slot % columns) * cell[0], (slot // columns) * cell[1]))
    sheet.save(target, format="PNG")


def template_guid(*parts: str) -> str:
    """A stable 32-hex-digit GUID (the schema's form) for a template: the same game and deck keep their GUID."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32].upper()


class PlaygroundStage(Stage[PlaygroundSpec]):
    """`playground/<game>/`: a Tabletop Playground package (`playground: {build: true}` or `cardgen playground`)."""

    name = PLAYGROUND

    def run(self, ctx: StageContext) -> list[Problem]:
        """One template and its textures per texture's worth of cards of every deck."""
        spec = self.config
        package = ctx.out_dir / PLAYGROUND / ctx.record.game.name
        for deck in decks_on_table(ctx.record):
            dpi = min(spec.dpi or deck.deck.dpi, deck.deck.dpi)
            cell = fitted(pixels_at(deck.deck, dpi / 25.4), spec.texture_size)
            columns, rows = texture_grid(len(deck.cards), cell, spec.texture_size)
            per_texture = columns * rows
            parts = math.ceil(len(deck.cards) / per_texture)
            for part in range(parts):
                cards = DeckCards(deck.name, deck.deck, deck.cards[part * per_texture:(part + 1) * per_texture])
                number = "" if parts == 1 else f"-{part + 1}"
                template = self._write_part(ctx, package, cards, number, cell, columns)
                template["Name"] = deck.deck.title if parts == 1 else f"{deck.deck.title} ({part + 1}/{parts})"
                text = json.dumps(template, indent=2) + "\n"
                write_text(package / "Templates" / f"{deck.name}.cards{number}.json", text)
        return []

    def _write_part(self, ctx: StageContext, package: Path, deck: DeckCards, number: str, cell: tuple[int, int],
                    columns: int) -> dict[str, Any]:
        """Write one texture of a deck (and its backs) into `Textures/`; the card template that names them.

        Files are `<deck>.<what><number>.png`: read from the right, no two decks' names can make the same one."""
        textures, front = package / "Textures", f"{deck.name}.faces{number}.png"
        self._texture(ctx, [card.face for card in deck.cards], deck, cell, columns, textures / front)
        back_index, back_texture = -1, None  # no back at all: the face shows on both sides
        if deck.shared_back:
            back_index, back_texture = -2, f"{deck.name}.back.png"
            self._texture(ctx, [deck.shared_back], deck, cell, 1, textures / back_texture)
        elif any(card.back for card in deck.cards):
            back_index, back_texture = -3, f"{deck.name}.backs{number}.png"
            backs = [card.back or card.face for card in deck.cards]
            self._texture(ctx, backs, deck, cell, columns, textures / back_texture)
        return card_template(ctx.record, deck, front, back_texture, back_index, columns)

    def _texture(self, ctx: StageContext, images: list[str], deck: DeckCards, cell: tuple[int, int], columns: int,
                 target: Path) -> None:
        """Write a texture of `images` unless the cache holds it made from the same images and sizes."""
        hashes = ctx.record.image_hashes()
        inputs = [PLAYGROUND, *cell, columns, deck.deck.bleed_mm, deck.deck.dpi, *(hashes[i] for i in images)]
        sources = [ctx.image_file(image) for image in images]
        reuse_or_make(ctx.out_root, target, [str(i) for i in inputs],
                      lambda path: write_texture(sources, deck, cell, columns, path), __name__)


def card_template(record: BuildRecord, deck: DeckCards, front: str, back: str | None, back_index: int,
                  columns: int) -> dict[str, Any]:
    """The card template (a `CardTemplate` of the schema) of one texture of a deck; its Name is the deck's title."""
    size = deck.deck.size_mm
    template: dict[str, Any] = {
        "Type": "Card", "GUID": template_guid(record.game.name, front), "Name": deck.deck.title, "Metadata": "",
        "CollisionType": "Regular", "SurfaceType": "Cardboard", "Models": [], "Tags": [],
        "FrontTexture": front, "BackIndex": back_index,
        "HiddenIndex": -3 if back else -1,  # in a hand, others see the card's back (or the grey blur without one)
        "NumHorizontal": columns, "NumVertical": math.ceil(len(deck.cards) / columns),
        "Width": round(size.width / 10, 3), "Height": round(size.height / 10, 3),
        "Indices": [slot for slot, card in enumerate(deck.cards) for _ in range(card.copies)],
        "CardNames": {str(slot): card.name for slot, card in enumerate(deck.cards)},
        "CardMetadata": {str(slot): card.id for slot, card in enumerate(deck.cards)},
        "CardTags": {str(slot): [deck.name] for slot, card in enumerate(deck.cards)},
        "HiddenInHand": deck.deck.kind == "card", "Model": MODELS.get(deck.deck.shape, "Square"),
        "CanStack": deck.deck.kind != "board",
    }
    if back:
        template["BackTexture"] = back
    return template

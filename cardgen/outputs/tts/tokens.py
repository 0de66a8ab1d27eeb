"""A token in the export: a Custom_Tile (or a Custom_Token cut out of its transparency), one per copy or in an
endless bag."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cardgen.outputs.tts.objects import base_object, transform, tts_text
from cardgen.outputs.tts.sizes import tile_scale
from cardgen.record.record import CardEntry, DeckEntry

if TYPE_CHECKING:
    from cardgen.outputs.tts.exporter import Exporter

TILE_TYPES = {"rectangle": 0, "square": 0, "hex": 1, "circle": 2, "rounded": 3}


def token_objects(export: Exporter, deck_name: str, deck: DeckEntry, card: CardEntry, x: float,
                  z: float) -> list[dict]:
    """A token as a Custom_Tile (or Custom_Token when cut out): in an Infinite_Bag for an endless
    supply, else one object per copy, stacked."""
    url = export.component_image(card, deck, keep_alpha=True)
    back_url = export.component_image(card.model_copy(update={"face": card.back, "id": f"{card.id}-back"}), deck,
                                      keep_alpha=True) if card.back else url
    image = {"ImageURL": url, "ImageSecondaryURL": back_url, "ImageScalar": 1.0, "WidthScale": 0.0}
    if deck_name in export.options.cutout:
        kind = "Custom_Token"
        image["CustomToken"] = {"Thickness": 0.2, "MergeDistancePixels": 15.0, "StandUp": False,
                                "Stackable": True}
    else:
        kind = "Custom_Tile"
        # Stretch off: the tile takes the image's proportions, which are already the token's.
        image["CustomTile"] = {"Type": TILE_TYPES[deck.shape], "Thickness": 0.2, "Stackable": True,
                               "Stretch": False}
    scale = tile_scale(deck.size_mm.height)

    def token(name: str, y: float) -> dict:
        return base_object(kind, export.guid(name), card.name, tts_text(card.text),
                           transform(x, z, y=y, scale=scale), CustomImage=image)

    if deck.supply:
        return [base_object("Infinite_Bag", export.guid(f"bag/{card.id}"), card.name,
                            f"Endless supply: {tts_text(card.text)}", transform(x, z),
                            ContainedObjects=[token(f"token/{card.id}", 1.0)])]
    return [token(f"token/{card.id}/{copy}", 1.0 + 0.25 * copy) for copy in range(card.copies)]

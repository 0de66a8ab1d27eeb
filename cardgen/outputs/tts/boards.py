"""A board in the export: a locked Custom_Board with the snap points of `tts: snap_points:`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cardgen.outputs.tts.layout import snap_grid
from cardgen.outputs.tts.objects import base_object, transform, tts_text
from cardgen.outputs.tts.sizes import board_scale
from cardgen.record.record import CardEntry, DeckEntry

if TYPE_CHECKING:
    from cardgen.outputs.tts.exporter import Exporter


def board(export: Exporter, deck_name: str, deck: DeckEntry, card: CardEntry, x: float, z: float) -> dict:
    """A Custom_Board, locked as Tabletop Simulator makes boards; `WidthScale` is its image's width over
    its height, as Tabletop Simulator stores it for every board. The grids of `tts: snap_points:` for its
    deck become its `AttachedSnapPoints`."""
    url = export.component_image(card, deck, keep_alpha=export.options.image_format == "png")
    size = deck.size_mm
    snaps = [point for grid in export.options.snap_points.get(deck_name, ()) for point in snap_grid(
        grid.columns, grid.rows, grid.across, grid.down, (size.width, size.height), (grid.x, grid.y))]
    return base_object("Custom_Board", export.guid(f"board/{card.id}"), card.name, tts_text(card.text),
                       transform(x, z, scale=board_scale(size.height)), Locked=True,
                       CustomImage={"ImageURL": url, "ImageSecondaryURL": "", "ImageScalar": 1.0,
                                    "WidthScale": round(size.width / size.height, 6)},
                       **({"AttachedSnapPoints": snaps} if snaps else {}))

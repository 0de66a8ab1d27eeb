"""Sizes on the Tabletop Simulator table: the `Transform` scale that gives an object its size in mm.

Tabletop Simulator stores no physical size, only a scale over each object type's own size at scale 1.
Those sizes, in table units, were measured on saves Tabletop Simulator wrote (docs/tts.md names the
files): a card at scale 1 is 3.1 units long, a square `Custom_Tile` 2 units, a `Custom_Board` 16.7 units
high (and `WidthScale` times that wide). A card at scale 1 is taken to be a poker card, 88.9 mm long,
so one table unit stands for 28.7 mm and everything else is scaled to match: a 22 mm token sits next
to a poker card as it would on a real table.
"""
from __future__ import annotations

CARD_MM = 88.9  # a card at scale 1 is a poker card: 63.5 x 88.9 mm
CARD_UNITS = 3.1  # its long side in table units (a poker card at scale 1 is about 2.2 x 3.1 units)
TILE_UNITS = 2.0  # a Custom_Tile (or Custom_Token) at scale 1: its height; width follows the image
BOARD_UNITS = 16.7  # a Custom_Board at scale 1: its height; its width is WidthScale times that
MM_PER_UNIT = CARD_MM / CARD_UNITS


def card_scale(width_mm: float, height_mm: float) -> float:
    """A card's scale: its long side over a poker card's, whichever way up (landscape cards are sideways).

    Real decks of landscape cards stay at scale 1 with `SidewaysCard` (swlegion/tts), and Arkham Horror's
    landscape investigators at 1.15 are "15% larger" than its portrait cards at 1.0 (argonui/SCED).
    """
    return max(width_mm, height_mm) / CARD_MM


def tile_scale(height_mm: float) -> float:
    """The scale of a Custom_Tile or Custom_Token `height_mm` high."""
    return height_mm / (TILE_UNITS * MM_PER_UNIT)


def board_scale(height_mm: float) -> float:
    """The scale of a Custom_Board `height_mm` high."""
    return height_mm / (BOARD_UNITS * MM_PER_UNIT)


def table_units(length_mm: float) -> float:
    """A length on the table, in table units."""
    return length_mm / MM_PER_UNIT

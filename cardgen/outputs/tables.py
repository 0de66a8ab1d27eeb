"""What the exports to virtual tables (Tabletop Playground, playingcards.io, Tabletopia) share: a card image cut at
its trim line to a size in pixels, sizes fitted under a platform's limit, and which cards of a deck are on the table.

Every table draws its own card outline, so the images are cut at the trim line (no bleed), as `trimmed/` cuts them.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cardgen.record.record import BuildRecord, CardEntry, DeckEntry

if TYPE_CHECKING:
    from PIL import Image


class DeckCards(NamedTuple):
    """A deck on the table: its name, its entry and its cards with at least one copy, in data order."""

    name: str
    deck: DeckEntry
    cards: list[CardEntry]

    @property
    def shared_back(self) -> str | None:
        """The one back every card of the deck shows (its image path), or None when backs differ or are missing."""
        backs = {card.back for card in self.cards}
        return backs.pop() if len(backs) == 1 else None


def decks_on_table(record: BuildRecord) -> list[DeckCards]:
    """Every deck that has a card with a copy to play with, in the record's order."""
    decks = [DeckCards(name, deck, [c for c in record.cards_of(name) if c.copies > 0])
             for name, deck in record.decks.items()]
    return [deck for deck in decks if deck.cards]


def pixels_at(deck: DeckEntry, px_per_mm: float) -> tuple[int, int]:
    """The pixel size of a deck's cards cut at the trim line, at `px_per_mm` (at least one pixel each way)."""
    return max(1, round(deck.size_mm.width * px_per_mm)), max(1, round(deck.size_mm.height * px_per_mm))


def fitted(size: tuple[int, int], limit: int) -> tuple[int, int]:
    """`size` scaled down, keeping its proportions, until neither side is over `limit` (never scaled up)."""
    scale = min(1.0, limit / max(size))
    return max(1, int(size[0] * scale)), max(1, int(size[1] * scale))


def cut_card(source: Path, deck: DeckEntry, size: tuple[int, int]) -> Image.Image:
    """A card image cut at its trim line (the bleed removed) and resampled to `size` pixels."""
    from PIL import Image

    bleed = deck.bleed_mm / 25.4 * deck.dpi  # in the image's pixels: rarely whole
    with Image.open(source) as image:
        box = (bleed, bleed, image.width - bleed, image.height - bleed)
        return image.convert("RGBA").resize(size, Image.Resampling.LANCZOS, box=box)


def write_cut(source: Path, deck: DeckEntry, size: tuple[int, int], target: Path) -> None:
    """Write a card image cut at its trim line at `size` pixels, as PNG at `target`."""
    cut_card(source, deck, size).save(target, format="PNG")

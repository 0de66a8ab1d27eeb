"""Tabletop Simulator deck sheets as plain data: which card sits in which slot of which sheet, the sheet grid
and cell size, the `CustomDeck` keys and the object GUIDs. Nothing here reads or writes an image.

Tabletop Simulator cuts a sheet into NumWidth x NumHeight equal cells (at most 10 x 7) and names the card in
slot k of the sheet with key K `CardID = K * 100 + k`. Keys are shared by everything loaded on one table, and
a table keeps the images it loaded first for a key: keys are derived from the game, the deck and what the
sheet shows, so they stay the same while the cards do, change when a card changes, and differ between games.
"""
from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Callable

from cardgen.outputs.jpeg_tiles import BLOCK_PX

MAX_COLUMNS, MAX_ROWS = 10, 7
SLOTS_PER_SHEET = MAX_COLUMNS * MAX_ROWS
MAX_SIDE_PX = 4096
# Keys have 7 digits: CardID = key * 100 + slot stays below 2**31 (Tabletop Simulator stores it as an int),
# and 9 million keys make a clash between two games' few keys very unlikely.
KEY_FIRST, KEY_COUNT = 1_000_000, 9_000_000


@dataclass(frozen=True)
class Sheet:
    """One sheet of a deck: its key, the card id in each slot, its grid and its cell size in pixels."""

    key: int
    card_ids: tuple[str, ...]
    columns: int
    rows: int
    cell_width: int
    cell_height: int

    @property
    def width(self) -> int:
        """Sheet width in pixels."""
        return self.columns * self.cell_width

    @property
    def height(self) -> int:
        """Sheet height in pixels."""
        return self.rows * self.cell_height

    def tts_id(self, slot: int) -> int:
        """The CardID of a slot."""
        return self.key * 100 + slot

    def origin(self, slot: int) -> tuple[int, int]:
        """Top-left pixel of a slot's cell (slots run row by row)."""
        return (slot % self.columns) * self.cell_width, (slot // self.columns) * self.cell_height


def cell_size(width: int, height: int, columns: int, rows: int) -> tuple[int, int]:
    """The largest cell of a width:height card that fits columns x rows within the size limit, in whole JPEG blocks
    (8 px: a JPEG sheet is put together from its cells' own JPEG data, see `jpeg_tiles`).

    Cards are never scaled up; one side is rounded down to whole blocks and the other follows it to the nearest
    block, so the aspect ratio is kept to within half a block (Tabletop Simulator stretches every card's picture
    over its card's shape anyway).
    """
    scale = min(1.0, MAX_SIDE_PX / (columns * width), MAX_SIDE_PX / (rows * height))
    by_width = _blocks(width * scale)
    by_height = _blocks(height * scale)
    candidates = [(by_width, _blocks(by_width * height / width, nearest=True)),
                  (_blocks(by_height * width / height, nearest=True), by_height)]
    fitting = [(w, h) for w, h in candidates if w * columns <= MAX_SIDE_PX and h * rows <= MAX_SIDE_PX
               and w <= max(width, BLOCK_PX) and h <= max(height, BLOCK_PX)]
    return max(fitting, key=lambda c: c[0] * c[1], default=(by_width, by_height))


def _blocks(pixels: float, nearest: bool = False) -> int:
    """A length in whole JPEG blocks: rounded down (or to the nearest), at least one block."""
    return max(1, round(pixels / BLOCK_PX) if nearest else math.floor(pixels / BLOCK_PX)) * BLOCK_PX


@functools.lru_cache(maxsize=256)  # asked for every sheet of every build: a full sheet of a deck is always the same
def choose_grid(count: int, width: int, height: int) -> tuple[int, int]:
    """The grid for `count` cards (1..70): the sharpest cells first, then the fewest empty cells and rows."""
    if not 1 <= count <= SLOTS_PER_SHEET:
        raise ValueError(f"a sheet holds 1 to {SLOTS_PER_SHEET} cards, not {count}")
    grids = [(c, r) for c in range(1, MAX_COLUMNS + 1) for r in range(1, MAX_ROWS + 1) if c * r >= count]

    def rank(grid: tuple[int, int]) -> tuple[int, int, int]:
        cell = cell_size(width, height, *grid)
        return -cell[0] * cell[1], grid[0] * grid[1] - count, grid[1]

    return min(grids, key=rank)


def derive_key(game: str, deck: str, index: int, taken: set[int], content: str = "") -> int:
    """A CustomDeck key from the game, deck, sheet number and what the sheet shows (`first_key`); the next free one if
    that is taken."""
    key = first_key(game, deck, index, content)
    while key in taken:
        key = KEY_FIRST + (key - KEY_FIRST + 1) % KEY_COUNT
    taken.add(key)
    return key


def first_key(game: str, deck: str, index: int, content: str = "") -> int:
    """The key a sheet takes unless another sheet of the export took it first (see `derive_key`)."""
    digest = hashlib.sha256(f"cardgen/{game}/{deck}/{index}/{content}".encode()).digest()
    return KEY_FIRST + int.from_bytes(digest[:8], "big") % KEY_COUNT


def plan_sheets(game: str, deck: str, card_ids: list[str], width: int, height: int, taken: set[int],
                content: Callable[[tuple[str, ...]], str] = "|".join) -> list[Sheet]:
    """Spread a deck's distinct cards (each width x height px) over sheets of up to 70 slots, in order.

    `content(card_ids)` describes what a sheet of those cards shows (their images), for its key.
    """
    return [plan_sheet(game, deck, index, ids, width, height, taken, content(ids))
            for index, ids in enumerate(tuple(card_ids[start:start + SLOTS_PER_SHEET])
                                        for start in range(0, len(card_ids), SLOTS_PER_SHEET))]


def plan_sheet(game: str, deck: str, index: int, card_ids: tuple[str, ...], width: int, height: int,
               taken: set[int], content: str) -> Sheet:
    """Sheet `index` of a deck: its cards (1 to 70, each width x height px) on their grid, its key taken from those
    in `taken` by what it shows (`content`, see `derive_key`)."""
    columns, rows = choose_grid(len(card_ids), width, height)
    return Sheet(derive_key(game, deck, index, taken, content), card_ids, columns, rows,
                 *cell_size(width, height, columns, rows))


class Guids:
    """Unique 6-hex-digit GUIDs, derived from a name so that a rebuild gives the same file."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.used: set[str] = set()

    def __call__(self, name: str) -> str:
        """The GUID of the object called `name` (a different one if it is already used)."""
        attempt = 0
        while True:
            guid = _guid(self.seed, name, attempt)
            if guid not in self.used:
                self.used.add(guid)
                return guid
            attempt += 1

    def take(self, names: tuple[str, ...], guids: tuple[str, ...], first_choices: bool) -> bool:
        """Take GUIDs a rebuild handed out before to the names, when each is the one its name gets now (asked in
        order): none is used now, when each was its name's first choice (`first_choices`, by a C loop); else each
        name's choices before its GUID are used now and its GUID is not (at 10,000 cards ~3 GUIDs are a second
        choice: their sheets' objects were made again at every edit). False (nothing taken) otherwise."""
        if first_choices:
            if not self.used.isdisjoint(guids):
                return False
            self.used.update(guids)
            return True
        taken: list[str] = []
        for name, guid in zip(names, guids):
            attempt = 0
            while (choice := _guid(self.seed, name, attempt)) != guid and choice in self.used:
                attempt += 1
            if choice != guid or guid in self.used:
                self.used.difference_update(taken)
                return False
            self.used.add(guid)
            taken.append(guid)
        return True

    def first_choices(self, names: list[str], guids: tuple[str, ...]) -> bool:
        """Whether each name got its first choice of GUID (none was taken already when it was asked for)."""
        return all(guid == _guid(self.seed, name, 0) for name, guid in zip(names, guids))


# Asked for every copy of every card of each export (twice a build): worked out once per process.
@functools.lru_cache(maxsize=1 << 16)
def _guid(seed: str, name: str, attempt: int) -> str:
    """The GUID a name takes at an attempt."""
    return hashlib.sha256(f"{seed}/{name}/{attempt}".encode()).hexdigest()[:6]

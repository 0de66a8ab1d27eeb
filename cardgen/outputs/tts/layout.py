"""Where the Tabletop Simulator export lays a game on the table, and the snap points of its boards.

Plain geometry in table units (`sizes`): x runs right and z away from the player at the table's south edge
(White's seat), as Tabletop Simulator's own axes do. A game is laid out as a player sets one up: its boards in
the middle, the card decks in rows in front of them (the player's side) and the tokens in rows behind, every row
centred and wrapped so that the whole game stays inside `PLAY_AREA`.
"""
from __future__ import annotations

from dataclasses import dataclass

from cardgen.outputs.tts.sizes import BOARD_UNITS

# Half the side of the square the export keeps every object inside. Saves Tabletop Simulator wrote put the hand
# zones of the default table near x = +-21.5 (issue 35); a hand zone is about 4 units deep, so anything within
# 19 units of the centre lies on the table in front of the hands, never in one.
PLAY_AREA = 19.0
GAP_UNITS = 1.0  # space between objects, and between the rows of a group
# A board's snap points' local y, its top surface: all 187 on the Custom_Board at scale 1 of a save Tabletop
# Simulator wrote (alanhaugen/Tabletop-Simulator `Saves/dwarves.json`, commit 1207772) sit at 0.592. scaleY stays 1,
# so it holds at any scale.
SNAP_HEIGHT = 0.592


@dataclass(frozen=True)
class Footprint:
    """What an object covers on the table: its width (along x) and depth (along z), in table units."""

    width: float
    depth: float


def lay_out(front: list[Footprint], middle: list[Footprint], back: list[Footprint]) -> list[tuple[float, float]]:
    """The centre (x, z) of every object of three groups, in the order given: `middle` (the boards) around the
    table's centre, `front` (the card decks) in rows in front of it, `back` (the tokens) in rows behind.

    Each group is a block of rows at most `2 * PLAY_AREA` wide; the blocks are stacked front to back with a gap,
    the middle block centred on the table, then the whole stack moved in (when one side sticks out) to stay
    inside the play area wherever it fits.
    """
    blocks = [_rows(group) for group in (front, middle, back)]
    depths = [depth for _, depth in blocks]
    gaps = [GAP_UNITS if depth and any(depths[i + 1:]) else 0.0 for i, depth in enumerate(depths)]
    # z of each block's front edge, the stack starting at 0
    edges = [sum(depths[:i]) + sum(gaps[:i]) for i in range(3)]
    total = edges[2] + depths[2]
    shift = -(edges[1] + depths[1] / 2)  # the middle block's centre on the table's centre
    shift = min(max(shift, -PLAY_AREA), PLAY_AREA - total) if total <= 2 * PLAY_AREA else -total / 2
    return [(x, edge + shift + z) for (places, _), edge in zip(blocks, edges) for x, z in places]


def outside(places: list[tuple[float, float]], footprints: list[Footprint]) -> int:
    """How many of the objects laid at `places` reach past the play area."""
    return sum(abs(x) + item.width / 2 > PLAY_AREA + 1e-9 or abs(z) + item.depth / 2 > PLAY_AREA + 1e-9
               for (x, z), item in zip(places, footprints))


def _rows(group: list[Footprint]) -> tuple[list[tuple[float, float]], float]:
    """A group's objects in rows, left to right and front to back, each row centred on x = 0: the centre of each
    (z from the block's front edge) and the block's depth."""
    rows: list[list[Footprint]] = []
    for item in group:
        row = rows[-1] if rows else None
        if row is None or _width(row) + GAP_UNITS + item.width > 2 * PLAY_AREA:
            rows.append([item])
        else:
            row.append(item)
    places: list[tuple[float, float]] = []
    z = 0.0
    for row in rows:
        depth = max(item.depth for item in row)
        x = -_width(row) / 2
        for item in row:
            places.append((x + item.width / 2, z + depth / 2))
            x += item.width + GAP_UNITS
        z += depth + GAP_UNITS
    return places, max(z - GAP_UNITS, 0.0)


def _width(row: list[Footprint]) -> float:
    return sum(item.width for item in row) + GAP_UNITS * (len(row) - 1)


def snap_grid(columns: int, rows: int, across_mm: float, down_mm: float, board_mm: tuple[float, float],
              offset_mm: tuple[float, float] = (0.0, 0.0)) -> list[dict]:
    """The `AttachedSnapPoints` of a grid of `columns` x `rows` cells `across_mm` x `down_mm` apart, centred on the
    board (moved by `offset_mm`, right and down on its image), at each cell's centre.

    Positions are in the board's local coordinates, which do not scale with the object: a board at scale 1 is
    `BOARD_UNITS` high, so a point `d` mm from its centre lies `d / height_mm * BOARD_UNITS` units out. The board
    lies turned 180 degrees (`rotY` 180, facing the south seat), so its image's right is local -x and its image's
    top local -z.
    """
    per_mm = BOARD_UNITS / board_mm[1]
    points = []
    for row in range(rows):
        for column in range(columns):
            x_mm = offset_mm[0] + (column - (columns - 1) / 2) * across_mm
            y_mm = offset_mm[1] + (row - (rows - 1) / 2) * down_mm
            points.append({"Position": {"x": round(-x_mm * per_mm, 4), "y": SNAP_HEIGHT,
                                        "z": round(y_mm * per_mm, 4)}})
    return points

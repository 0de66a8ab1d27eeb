"""JPEG images put together from smaller JPEGs laid out in a grid, without decoding them or encoding again.

A baseline JPEG is a stream of 8 x 8 pixel blocks, row of blocks after row of blocks. With a restart marker
after every row of blocks of a tile (`encode_tile`), each of those rows is a piece of the stream that depends on
nothing before it. A grid of tiles of one size, encoded with the same tables, is then one JPEG: for each row of
blocks of the grid, the pieces of the tiles side by side, one after the other (`join_tiles`), with the grid's
width and height in its header. Its pixels are the tiles' pixels, exactly: nothing is decoded, nothing lost.

A Tabletop Simulator deck sheet is made so from its cells (~10 ms where decoding 70 cells and encoding the
4096 px sheet took ~0.25 s), and each cell is encoded once, at the sheet's quality, not twice.
"""
from __future__ import annotations

import io
import itertools
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from PIL import Image

BLOCK_PX = 8  # a JPEG block; without chroma subsampling a block is also the smallest unit of the stream (an MCU)
_SOI, _EOI = b"\xff\xd8", b"\xff\xd9"
_SOF0, _SOS, _DRI = 0xC0, 0xDA, 0xDD
_RESTART = re.compile(rb"\xff[\xd0-\xd7]")  # a 0xFF byte of the data itself is followed by 0x00: never a marker
_RESTARTS = [bytes((0xFF, 0xD0 + number)) for number in range(8)]


@dataclass(frozen=True)
class Tile:
    """A JPEG cut into its rows of blocks: its header (its tables) around the frame's size, and `rows`, the stream
    of each row of blocks."""

    size: tuple[int, int]
    header: tuple[bytes, bytes]  # from the start of the image to the size in its frame, from after it to the data
    rows: tuple[bytes, ...]


def encode_tile(image: Image.Image, quality: int) -> bytes:
    """An RGB image whose sides are whole blocks as a JPEG that `read_tile` can cut into rows: baseline, no chroma
    subsampling, standard Huffman tables (the same for every tile of a quality), a restart after each row."""
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality, subsampling=0, optimize=False, progressive=False,
               restart_marker_blocks=image.width // BLOCK_PX)
    return buffer.getvalue()


def read_tile(data: bytes, size: tuple[int, int]) -> Tile:
    """The tile a JPEG of `size` is, or ValueError when it is not one (another kind of JPEG, another size)."""
    width, height = size
    if width % BLOCK_PX or height % BLOCK_PX or not data.startswith(_SOI) or not data.endswith(_EOI):
        raise ValueError("not a JPEG of whole blocks")
    try:
        frame, scan = _header(data, width)
        if struct.unpack_from(">HH", data, frame + 5) != (height, width):
            raise ValueError("not a tile of this size")
    except (struct.error, IndexError):  # a segment that ends before its fields do
        raise ValueError("a damaged JPEG header") from None
    rows = tuple(_RESTART.split(data[scan:-2]))
    if len(rows) != height // BLOCK_PX:
        raise ValueError("not a restart after each row of blocks")
    return Tile(size, (data[:frame + 5], data[frame + 9:scan]), rows)


def _header(data: bytes, width: int) -> tuple[int, int]:
    """Where the frame's segment and the scan's data begin in a JPEG that can be a tile `width` wide: baseline, RGB
    in one scan, no subsampling, a restart after each row of blocks (ValueError otherwise)."""
    position, frame, interval, components = 2, -1, 0, 0
    while True:
        if data[position] != 0xFF:
            raise ValueError("a damaged JPEG header")
        marker, length = data[position + 1], struct.unpack_from(">H", data, position + 2)[0]
        if marker == _SOF0:
            frame = position
        elif 0xC1 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # another kind of frame (progressive...)
            raise ValueError("not a baseline JPEG")
        elif marker == _DRI:
            interval = struct.unpack_from(">H", data, position + 4)[0]
        elif marker == _SOS:
            components = data[position + 4]
        position += 2 + length
        if marker == _SOS:
            break
    if frame < 0 or data[frame + 9] != 3 or any(data[frame + 11 + 3 * c] != 0x11 for c in range(3)) \
            or interval != width // BLOCK_PX or components != 3:
        raise ValueError("not a tile (RGB in one scan, no subsampling, a restart after each row of blocks)")
    return frame, position


def join_tiles(tiles: Sequence[Tile], columns: int) -> bytes:
    """One JPEG of tiles of one size and the same tables laid out `columns` to a row, row after row (the grid's
    last row is full: `tiles` holds columns x rows of them); ValueError when they do not fit together."""
    first = tiles[0]
    if len(tiles) % columns or any(t.size != first.size or t.header != first.header for t in tiles):
        raise ValueError("tiles of other sizes or tables do not make one JPEG")
    (width, height), grid_rows = first.size, len(tiles) // columns
    # Each grid row's rows of blocks, row by row across its tiles, a restart marker between any two (counting 0 to 7,
    # over and over); put together by iterators, not a Python step a piece (~6,000 pieces a sheet of 70 cells).
    pieces = [row for start in range(0, len(tiles), columns)
              for rows in zip(*(tile.rows for tile in tiles[start:start + columns])) for row in rows]
    markers = itertools.islice(itertools.cycle(_RESTARTS), len(pieces) - 1)
    return b"".join([first.header[0], struct.pack(">HH", height * grid_rows, width * columns), first.header[1],
                     pieces[0], *itertools.chain.from_iterable(zip(markers, pieces[1:])), _EOI])

"""The export's images as recipes.

Every image of the export is made from a recipe: plain data that names the card images it is made of (by
content hash). `cardgen build` hands the recipes to the render workers (`work.TTSCardWork`), which make a card's
share of them while its image is in memory: its sheet cells, its token or board image, and a sheet once
its last cell is there. The export then finds those images in the cache and makes what is missing from
the same recipes, so a build makes the same files whichever process made which image.
"""
from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cardgen.core.storage import Cache, builds_again
from cardgen.outputs.jpeg_tiles import Tile, encode_tile, join_tiles, read_tile
from cardgen.outputs.reuse import inputs_key, make_cached
from cardgen.outputs.tts.sheets import MAX_SIDE_PX, SLOTS_PER_SHEET
from cardgen.raster.render import DrawnCard, scaled

if TYPE_CHECKING:
    from PIL import Image


PLAIN_BACK = "#3a3733"  # the back of cards whose deck declares none
EMPTY_SLOT = "black"  # a slot of a sheet's grid that holds no card (its last row may not be full)
# The keys of cells and images (`inputs_key`) hold cardgen's code digest: a change in how they are made changes
# their keys, so that an output root's cache never mixes cells made one way into sheets made another, and image
# names (URLs) change too.
CELL_CACHE = "tts-cells"  # the cache of sheet cells, in the output root's .cache/
COVER_CACHE = "tts-cover"  # the cache of the thumbnail's faces
COVER_FACE_PX = (110, 154)  # a face on the thumbnail fits this box


@dataclass(frozen=True)
class Source:
    """A card image of the build: its content hash, its path in the build folder, the bleed to cut off."""

    hash: str
    path: str
    bleed: int

    def trimmed(self, image: Image.Image) -> Image.Image:
        """The card image with its bleed cut off."""
        b = self.bleed
        return image.crop((b, b, image.width - b, image.height - b))

    def cell(self, card: DrawnCard, size: tuple[int, int]) -> Image.Image:
        """The card with its bleed cut off, resampled from its pixels to a sheet cell, in RGB (see `render.scaled`:
        ~1 ms a gen1000 card, where drawing it again from its vectors took ~2 ms and recording them more).

        Every cell is made from the card's pixels, whether the card was drawn now or found in the cache, so a sheet
        is the same file whatever the cache held.
        """
        b = self.bleed
        width, height = card.image.size
        return scaled(card, size, (b, b, width - b, height - b))


CardImages = Callable[[Source], DrawnCard]  # the card of a source: its pixels


@dataclass(frozen=True)
class Cell:
    """A card trimmed and scaled to a sheet cell, kept in the tts-cells cache by its hash, size and format: for a
    JPEG sheet a JPEG tile at the sheet's quality (see `jpeg_tiles`: the sheet is put together from its cells'
    own JPEG data, each cell encoded once), for a PNG sheet a PNG (`quality` None).

    Sheets are always made from the stored cells, so a sheet remade after an edit is the same file a cold build
    makes.
    """

    source: Source
    size: tuple[int, int]
    quality: int | None

    @property
    def key(self) -> str:
        """Its key in the cell cache."""
        return inputs_key(["cell", self.source.hash, f"{self.size}", f"{self.source.bleed}",
                           str(self.quality or "png")], __name__)

    def cache(self, out_root: Path) -> Cache:
        """The cache of cells of this format."""
        return Cache(out_root, CELL_CACHE, ".png" if self.quality is None else ".jpg")

    def store(self, out_root: Path, card: DrawnCard) -> None:
        """Make and store the cell from the card, unless it is stored already."""
        cache = self.cache(out_root)
        if cache.has(self.key):
            return
        image = self.source.cell(card, self.size)
        if self.quality is None:
            cache.write(self.key, lambda temp: image.save(temp, format="PNG", compress_level=1))
        else:
            data = encode_tile(image, self.quality)
            cache.write_bytes(self.key, data)
            _made(self.key, data)

    def stored(self, out_root: Path, cards: CardImages) -> Path:
        """The stored cell's file (made first when missing)."""
        if not self.cache(out_root).has(self.key):
            self.store(out_root, cards(self.source))
        return self.cache(out_root).path(self.key)

    def load(self, out_root: Path, cards: CardImages) -> Image.Image:
        """The stored cell, decoded (made first when missing)."""
        from PIL import Image

        with Image.open(self.stored(out_root, cards)) as stored:
            stored.load()
            return stored if stored.mode == "RGB" else stored.convert("RGB")  # not copied when RGB already


@dataclass(frozen=True)
class Plain:
    """A plain image of one colour (the back of a deck that has none)."""

    size: tuple[int, int]
    colour: str = PLAIN_BACK

    def image(self) -> Image.Image:
        """The image."""
        from PIL import Image

        return Image.new("RGB", self.size, self.colour)


@dataclass(frozen=True)
class SheetPicture:
    """A deck sheet: cells pasted in slot order (slot k at column k % columns, row k // columns), no gaps."""

    width: int
    height: int
    columns: int
    slots: tuple[Cell | Plain, ...]

    @property
    def sources(self) -> set[str]:
        """The hashes of the card images it shows."""
        return {slot.source.hash for slot in self.slots if isinstance(slot, Cell)}

    def make(self, out_root: Path, cards: CardImages) -> Image.Image:
        """The sheet, its cells decoded; cells are loaded one at a time, so a large deck never sits in memory whole."""
        from PIL import Image

        canvas = Image.new("RGB", (self.width, self.height), EMPTY_SLOT)
        for slot, cell in enumerate(self.slots):
            width, height = cell.size
            picture = cell.load(out_root, cards) if isinstance(cell, Cell) else cell.image()
            canvas.paste(picture, ((slot % self.columns) * width, (slot // self.columns) * height))
        return canvas

    def joined(self, out_root: Path, cards: CardImages, quality: int) -> bytes | None:
        """The sheet as a JPEG of `quality` put together from its cells' JPEG tiles, not decoded and encoded again
        (None when a cell is not such a tile: the sheet is then made from the decoded cells)."""
        size = self.slots[0].size
        empty = Plain(size, EMPTY_SLOT)
        slots = [*self.slots, *[empty] * ((self.width // size[0]) * (self.height // size[1]) - len(self.slots))]
        tiles: dict[str, Tile] = {}
        try:
            joined = join_tiles([_cell_tile(slot, out_root, cards, tiles) if isinstance(slot, Cell)
                                 else _plain_tile(slot, quality) for slot in slots], self.columns)
        except ValueError:
            return None
        if builds_again():  # an edit of a card joins its sheet again: its other cells are these
            _TILES.clear()
            _TILES.update(tiles)
        return joined


# In a process that builds again, the cells of the sheet it joined last, as tiles, by their keys (content-addressed:
# each read from its verified cache entry): the next edit of a card of that sheet reads its new cell only, not the
# 70 (~10 ms of a 1,000-card edit: reading, looking up and cutting each into rows).
_TILES: dict[str, Tile] = {}


# The JPEG cells this process made, by their keys, until the sheet it joins from them takes them: a render worker
# joins a sheet from the cells it made itself without reading their files back (the read and the seal's check, ~0.15
# ms a cell); the other worker's cells are read from the cache. Cards are drawn in about slot order, so beyond
# MADE_AT_MOST (two sheets' worth) the oldest, of sheets the other worker joined, are let go.
_MADE: dict[str, bytes] = {}
MADE_AT_MOST = 2 * SLOTS_PER_SHEET


def _made(key: str, data: bytes) -> None:
    """Keep a cell this process made and stored (see `_MADE`)."""
    _MADE[key] = data
    while len(_MADE) > MADE_AT_MOST:
        del _MADE[next(iter(_MADE))]


def _cell_tile(cell: Cell, out_root: Path, cards: CardImages, tiles: dict[str, Tile]) -> Tile:
    """A cell of a JPEG sheet as a tile (ValueError when its file is not one), noted in `tiles`."""
    key = cell.key
    tile = tiles.get(key) or (_TILES.get(key) if builds_again() else None) or read_tile(
        _MADE.pop(key, b"") or cell.stored(out_root, cards).read_bytes(), cell.size)
    tiles[key] = tile
    return tile


@functools.lru_cache(maxsize=8)
def _plain_tile(plain: Plain, quality: int) -> Tile:
    """A plain slot of a JPEG sheet as a tile (made once: every sheet of a deck without a back has them)."""
    return read_tile(encode_tile(plain.image(), quality), plain.size)


@dataclass(frozen=True)
class Scaled:
    """One card image, trimmed and scaled to a size (a deck's shared back)."""

    source: Source
    size: tuple[int, int]

    @property
    def sources(self) -> set[str]:
        """The hash of the card image it shows."""
        return {self.source.hash}

    def make(self, out_root: Path, cards: CardImages) -> Image.Image:
        """The image."""
        return self.source.cell(cards(self.source), self.size)


@dataclass(frozen=True)
class Component:
    """A token's or board's image: trimmed, and kept within the size limit."""

    source: Source

    @property
    def sources(self) -> set[str]:
        """The hash of the card image it shows."""
        return {self.source.hash}

    def make(self, out_root: Path, cards: CardImages) -> Image.Image:
        """The image."""
        from PIL import Image

        image = self.source.trimmed(cards(self.source).image)
        image.thumbnail((MAX_SIDE_PX, MAX_SIDE_PX), Image.Resampling.LANCZOS)
        return image

    def on_white(self, out_root: Path, cards: CardImages) -> Image.Image | None:
        """The image on white in RGB, as `encode` flattens it for a JPEG, pasted straight from the card's pixels with
        its bleed left outside: not trimmed into a copy and its alpha channel into another first (a 2362x1772 board
        in a cold build: ~10 ms of CPU, not ~25, most of it the copies' new memory). None when the card is opaque
        (nothing to flatten) or must shrink to fit the size limit (made by `make` then)."""
        from PIL import Image

        card = cards(self.source).image
        b = self.source.bleed
        size = (card.width - 2 * b, card.height - 2 * b)
        if card.mode != "RGBA" or max(size) > MAX_SIDE_PX:
            return None
        flat = Image.new("RGB", size, "white")
        flat.paste(card, (-b, -b), card)
        return flat


@dataclass(frozen=True)
class CoverFace:
    """A deck's first face as the saved object's thumbnail shows it: trimmed and shrunk into `COVER_FACE_PX`. Kept
    in the tts-cover cache by its source and made in the render workers while the card is in memory, so that the
    thumbnail is put together from three small images, not from three card images decoded after the last card
    (~75 ms of every first build, and of every edit of a deck's first card)."""

    source: Source

    @property
    def key(self) -> str:
        """Its key in the cover cache."""
        return inputs_key(["cover", self.source.hash, f"{self.source.bleed}", f"{COVER_FACE_PX}"], __name__)

    def cache(self, out_root: Path) -> Cache:
        """The cache of cover faces."""
        return Cache(out_root, COVER_CACHE, ".png")

    def store(self, out_root: Path, card: DrawnCard) -> None:
        """Make and store the face from the card (PNG: lossless, so a stored face is the face made now)."""
        from PIL import Image

        if self.cache(out_root).has(self.key):
            return
        # Shrunk before it is made RGBA: an opaque card's pixels are not copied whole into RGBA first (~4 ms a card
        # face, of ~6); the same face, its alpha all opaque either way.
        face = self.source.trimmed(card.image)
        face.thumbnail(COVER_FACE_PX, Image.Resampling.LANCZOS)
        face = face.convert("RGBA")
        self.cache(out_root).write(self.key, lambda temp: face.save(temp, format="PNG", compress_level=1))

    def load(self, out_root: Path, cards: CardImages) -> Image.Image:
        """The stored face (made first when missing)."""
        if not self.cache(out_root).has(self.key):
            self.store(out_root, cards(self.source))
        from PIL import Image

        with Image.open(self.cache(out_root).path(self.key)) as stored:
            stored.load()
            return stored


Picture = SheetPicture | Scaled | Component | Plain


def shown_paths(picture: Picture) -> list[str]:
    """The paths (in the build folder) of the card images a picture shows."""
    if isinstance(picture, SheetPicture):
        return [slot.source.path for slot in picture.slots if isinstance(slot, Cell)]
    return [] if isinstance(picture, Plain) else [picture.source.path]


def make_picture(picture: Picture, out_root: Path, cards: CardImages) -> Image.Image:
    """The image a recipe describes."""
    return picture.image() if isinstance(picture, Plain) else picture.make(out_root, cards)


def encode(image: Image.Image, png: bool, quality: int) -> bytes:
    """The image as PNG, or as JPEG (transparent parts white, as on paper; 4:4:4 keeps coloured edges sharp)."""
    buffer = io.BytesIO()
    if png:
        image.save(buffer, format="PNG")
        return buffer.getvalue()
    flat = image
    if image.mode != "RGB":  # an opaque RGB image (every sheet) is encoded as it is, not copied first
        from PIL import Image

        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.getchannel("A") if image.mode == "RGBA" else None)
    # No Huffman optimisation: it halves the encoding speed of a 4096 px sheet (0.3 s against 0.15 s, in
    # every cold build and every edit of a card) for files 11% smaller (measured on the example games).
    flat.save(buffer, format="JPEG", quality=quality, subsampling=0)
    return buffer.getvalue()


@dataclass(frozen=True)
class ExportImage:
    """One image file of the export: its recipe, its format and its key in the outputs cache."""

    picture: Picture
    png: bool
    quality: int
    inputs: tuple[str, ...]

    @property
    def suffix(self) -> str:
        """The file suffix of its format."""
        return ".png" if self.png else ".jpg"

    @functools.cached_property
    def key(self) -> str:
        """Its key in the outputs cache (made once: an export's image is kept for the next, see
        `Exporter.save_cached`)."""
        return inputs_key(self.inputs, __name__)

    def cached(self, out_root: Path) -> bool:
        """Whether the image is in the cache."""
        return Cache(out_root, "outputs", self.suffix).has(self.key)

    def make(self, out_root: Path, cards: CardImages) -> Path:
        """The cached file of this image (made now unless it is cached already)."""
        return make_cached(out_root, self.suffix, self.inputs,
                           lambda temp: temp.write_bytes(self.encoded(out_root, cards)), __name__)

    def encoded(self, out_root: Path, cards: CardImages) -> bytes:
        """The image file's content: a JPEG sheet put together from its cells' tiles, any other image encoded."""
        if isinstance(self.picture, SheetPicture) and not self.png:
            joined = self.picture.joined(out_root, cards, self.quality)
            if joined is not None:
                return joined
        if isinstance(self.picture, Component) and not self.png:
            flat = self.picture.on_white(out_root, cards)
            if flat is not None:
                return encode(flat, False, self.quality)
        return encode(make_picture(self.picture, out_root, cards), self.png, self.quality)

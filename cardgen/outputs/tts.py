"""Tabletop Simulator export: deck sheet images, token and board images, and a saved-object JSON.

Writes `output/<game>/tts/`: `<Game-title>.json` (every deck face down, tokens, bags and boards, laid out on the
table by `tts_layout.py`), `<Game-title>.png` (256 x 256 thumbnail) and the images, named with a hash of their
content so that Tabletop Simulator, which caches images by URL, never shows a stale one. Sheet packing and keys
are plain data in `tts_sheets.py`; copying into Tabletop Simulator's Saved Objects folder is `tts_install.py`.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import pickle
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.core.filenames import slugify
from cardgen.core.ownership import make_staging, remove_ours
from cardgen.core.storage import Cache, place_file, swap_into_place, write_bytes
from cardgen.load.freshness import PreviousOutputs
from cardgen.load.manifest import Game
from cardgen.load.markup import parse
from cardgen.options.tts import SnapGrid, TTSSpec
from cardgen.outputs.jpeg_tiles import Tile, encode_tile, join_tiles, read_tile
from cardgen.outputs.reuse import inputs_key, make_cached, reuse_or_make
from cardgen.outputs.stage import Stage, StageContext
from cardgen.outputs.tts_layout import PLAY_AREA, Footprint, lay_out, outside, snap_grid
from cardgen.outputs.tts_sheets import MAX_SIDE_PX, Guids, Sheet, plan_sheets
from cardgen.outputs.tts_sizes import MM_PER_UNIT, board_scale, card_scale, table_units, tile_scale
from cardgen.raster.render import Drawing, DrawnCard
from cardgen.record.record import BuildRecord, CardEntry, DeckEntry

if TYPE_CHECKING:
    from PIL import Image

TTS_DIR = "tts"
THUMBNAIL_PX = 256
TILE_TYPES = {"rectangle": 0, "square": 0, "hex": 1, "circle": 2, "rounded": 3}
DECK_TYPES = {"rounded": 0, "rectangle": 1, "square": 1, "hex": 3, "circle": 4}
PLAIN_BACK = "#3a3733"  # the back of cards whose deck declares none
EMPTY_SLOT = "black"  # a slot of a sheet's grid that holds no card (its last row may not be full)
# The keys of cells and images (`inputs_key`) hold cardgen's code digest: a change in how they are made changes
# their keys, so that an output root's cache never mixes cells made one way into sheets made another, and image
# names (URLs) change too.
CELL_CACHE = "tts-cells"  # the cache of sheet cells, in the output root's .cache/
COVER_CACHE = "tts-cover"  # the cache of the thumbnail's faces
COVER_FACE_PX = (110, 154)  # a face on the thumbnail fits this box


@dataclass(frozen=True)
class TTSOptions:
    """How images are encoded and addressed: format, JPEG quality, and the base URL (None: file:/// paths)."""

    image_format: str = "jpeg"
    jpeg_quality: int = 92
    base_url: str | None = None
    cutout: tuple[str, ...] = ()
    snap_points: Mapping[str, list[SnapGrid]] = field(default_factory=dict)  # board deck -> its grids

    @classmethod
    def from_spec(cls, spec: TTSSpec, **overrides: object) -> "TTSOptions":
        """Options from the manifest's `tts:` section, with command-line values (not None) on top."""
        values: dict[str, Any] = {"image_format": spec.image_format, "jpeg_quality": spec.jpeg_quality,
                  "base_url": spec.base_url, "cutout": tuple(spec.cutout), "snap_points": spec.snap_points}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class TTSStage(Stage):
    """`tts/`: the Tabletop Simulator export, written as the manifest's `tts:` section says."""

    name = "tts"  # its options: `TTSSpec` (cardgen.options.tts), as the registry says
    # Pillow (~17 ms to import) is imported when the export draws, not with this module (see `select_stages`).
    while_drawing = True  # each image waits for the card files it shows (their cells and sheets come with them)

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write the export."""
        problems: list[Problem] = []
        export_tts(ctx.game, ctx.record, ctx.out_dir, TTSOptions.from_spec(self.spec), ctx.previous, ctx.drawings,
                   ctx.wait_for, problems)
        return problems

    def card_work(self, game: Game, record: BuildRecord, out_root: Path) -> dict[str, TTSCardWork]:
        """Each card's sheet cell, resampled in the render workers (see `card_work`)."""
        return card_work(game.name, record, TTSOptions.from_spec(self.spec), out_root)

    @property
    def spec(self) -> TTSSpec:
        """The options, as the `tts:` section's model."""
        assert isinstance(self.options, TTSSpec)
        return self.options


def export_tts(game: Game, record: BuildRecord, out_dir: Path, options: TTSOptions,
               previous: PreviousOutputs | None = None, drawings: Callable[[], Mapping[str, Drawing]] = dict,
               wait: Callable[[str], Path | None] = lambda image: None, problems: list[Problem] | None = None) -> Path:
    """Write `<out_dir>/tts/` from a build record; return the saved-object JSON path (at its final place). Warnings
    for the designer go into `problems`: a game too large for the table's play area.

    Images the `previous` build wrote with the same content are kept, not copied again from the cache. A sheet
    cell missing from the cache is drawn from the card's vectors: `drawings()` says how the game draws each card
    image (asked only then). `wait(image)` returns once the image of a path of the record is drawn (during a build,
    as the workers draw it and make its cells), with the file to read it from (None: its path in `out_dir`): each
    image of the export waits for the cards it shows.
    """
    _check_cutout(game, record, options)
    _check_snap_points(game, record, options)
    # During `cardgen build` out_dir is a staging folder renamed to output/<game> at the end: URLs name the
    # final place.
    final_dir = out_dir.parent / game.name / TTS_DIR
    staging = make_staging(out_dir, TTS_DIR)
    try:
        exporter = _Exporter(game.name, record, out_dir, staging, options, _url_maker(options.base_url, final_dir),
                             previous=previous, drawings=drawings, wait=wait)
        saved = exporter.saved_object()
        if exporter.outside and problems is not None:
            problems.append(Problem(
                f"Tabletop Simulator: {exporter.outside} object(s) reach past the default table's play area "
                f"({PLAY_AREA:g} units, {PLAY_AREA * MM_PER_UNIT / 10:.0f} cm, from its centre): the game holds more "
                "than a table's worth of pieces laid side by side; move them in the game",
                file=relative(game.manifest_path, game.root), severity="warning"))
        exporter.put_last()
        stem = file_stem(record.game.title)
        write_saved_object(staging / f"{stem}.json", saved)
        reuse_or_make(out_dir, staging / f"{stem}.png", ["thumbnail", *exporter.cover_hashes()],
                      lambda temp: exporter.thumbnail().save(temp, format="PNG"))
        swap_into_place(staging, out_dir / TTS_DIR)
    finally:
        remove_ours(staging)
    return final_dir / f"{stem}.json"


def write_saved_object(path: Path, saved: dict) -> None:
    """Write the saved object as `json.dumps(indent=2, ensure_ascii=False)` writes it, with pydantic's JSON writer:
    an indent makes the json module use its pure-Python encoder (0.14 s at 1,000 cards, against 0.02 s). The one
    difference, numbers under 1e-4 written without an exponent (the same value), does not arise in a saved object:
    its numbers are positions, scales and proportions of objects on a table, rounded to 3 to 6 places."""
    import pydantic_core

    write_bytes(path, pydantic_core.to_json(saved, indent=2))


def card_work(game: str, record: BuildRecord, options: TTSOptions, out_root: Path) -> dict[str, TTSCardWork]:
    """The export's work on card images for the render workers of a build, by image hash (see `TTSCardWork`):
    what the caches under `out_root` lack."""
    recipes = _Recipes()
    exporter = _Exporter(game, record, out_root / game, out_root / game, options, lambda name: name, recipes)
    exporter.saved_object()
    recipes.faces = {face.source.hash: face for face in exporter.cover_faces()}
    return recipes.work(out_root)


def saved_object_path(out_dir: Path, record: BuildRecord) -> Path:
    """Where the export of a built game (in `out_dir`) puts its saved object."""
    return out_dir / TTS_DIR / f"{file_stem(record.game.title)}.json"


def file_stem(title: str) -> str:
    """The saved object's file name from the game's title, a safe slug ('#Shitstorm' -> 'Shitstorm', 'Con' ->
    'Con-game'); the title itself stays the object's name inside the JSON."""
    return slugify(title, "game", keep_case=True)


def _check_cutout(game: Game, record: BuildRecord, options: TTSOptions) -> None:
    for name in options.cutout:
        if name not in record.decks or record.decks[name].kind != "token":
            raise CardgenError(f"tts.cutout: '{name}' is not a token deck of this game",
                               file=relative(game.manifest_path, game.root), row=game.line("tts", "cutout"))


def _check_snap_points(game: Game, record: BuildRecord, options: TTSOptions) -> None:
    """Each grid of `tts: snap_points:` is on a board deck of the game, its cells' centres on the board."""
    for name, grids in options.snap_points.items():
        where = {"file": relative(game.manifest_path, game.root), "row": game.line("tts", "snap_points", name)}
        deck = record.decks.get(name)
        if deck is None or deck.kind != "board":
            raise CardgenError(f"tts.snap_points: '{name}' is not a board deck of this game", **where)
        size = deck.size_mm
        for grid in grids:
            reach_x = abs(grid.x) + (grid.columns - 1) * grid.across / 2
            reach_y = abs(grid.y) + (grid.rows - 1) * grid.down / 2
            if reach_x > size.width / 2 or reach_y > size.height / 2:
                raise CardgenError(
                    f"tts.snap_points.{name}: a grid of {grid.columns} x {grid.rows} cells {grid.across:g} x "
                    f"{grid.down:g} mm apart reaches past the {size.width:g} x {size.height:g} mm board; give it "
                    "fewer cells or smaller steps", **where)


def file_url(path: Path) -> str:
    """A file:/// URL as Tabletop Simulator writes one for a local image: the plain absolute path with its
    spaces (file:///C:/Users/Me/My Games/... on Windows), except `%` and `#`, which would otherwise start an
    escape or cut the address short."""
    absolute = _escaped(path.resolve().as_posix())
    return "file://" + (absolute if absolute.startswith("/") else "/" + absolute)


def _escaped(path: str) -> str:
    return path.replace("%", "%25").replace("#", "%23")


def _url_maker(base_url: str | None, folder: Path) -> Callable[[str], str]:
    if base_url:
        return lambda name: f"{base_url.rstrip('/')}/{urllib.parse.quote(name)}"
    # The folder resolved once, not each image's path: resolving walks every folder of it again (~0.5 ms an image).
    at = file_url(folder)
    return lambda name: f"{at}/{_escaped(name)}"


# Names Tabletop Simulator would read as a rich-text tag if an icon were written as `[name]`.
_TTS_TAG = re.compile(r"[biusc]|sub|sup|[0-9a-f]{6}|[0-9a-f]{8}|-", re.IGNORECASE)


def tts_icon(name: str) -> str:
    """An inline icon as a readable word: its name as written, in brackets (`:power_up:` -> `[power up]`)."""
    word = re.sub(r"[_-]+", " ", name).strip()
    return f"[{word} ]" if _TTS_TAG.fullmatch(word) else f"[{word}]"


def tts_text(text: str) -> str:
    """Card markup as Tabletop Simulator rich text: [b]bold[/b], [i]italic[/i], icons as `[name]`."""
    out: list[str] = []
    open_tags: list[str] = []
    for span in parse(text):
        wanted = [tag for tag, on in (("b", span.bold), ("i", span.italic)) if on]
        while set(open_tags) - set(wanted):  # tags nest: close down to the last one still wanted
            out.append(f"[/{open_tags.pop()}]")
        for tag in (t for t in wanted if t not in open_tags):
            out.append(f"[{tag}]")
            open_tags.append(tag)
        out.append(tts_icon(span.text) if span.kind == "icon" else span.text)
    out += [f"[/{tag}]" for tag in reversed(open_tags)]
    return "".join(out)


def game_tag(game: str) -> str:
    """The tag every object of a game's export carries on the table (`cardgen tts --push` finds them by it)."""
    return f"cardgen:{game}"


def mark_for_push(objects: list[dict], game: str) -> None:
    """Tag the objects so that a push into a running game finds them (`commands/tts_push.py`), and note in each
    object's `Memo` a hash of what it is, but where it lies, so that a push replaces only objects that changed.

    Every object and everything in it carries the game's tag; an object laid on the table also carries its place's
    own tag, `cardgen:<game>:<GUID>` (GUIDs are derived from the deck and card names, so a rebuild keeps them). A
    card dealt from a deck has the game's tag only, which is how a push tells it from the decks. The hash leaves
    out every `Transform`: a deck that moves over for a new one is the same deck.
    """
    tag = game_tag(game)
    for obj in objects:
        for inner in obj.get("ContainedObjects", []):
            inner["Tags"] = [tag]
        obj["Tags"] = [tag, f"{tag}:{obj['GUID']}"]
        obj["Memo"] = hashlib.sha256(json.dumps(_placeless(obj), sort_keys=True).encode()).hexdigest()[:16]


def _placeless(node: Any) -> Any:
    """A saved object without its `Transform`s (its own and its cards', which copy it) and its `Memo`, and its
    `file:///` addresses by file name only (the name holds the image's hash; the folder is where the export was
    written, which changes nothing on the table)."""
    if isinstance(node, dict):
        return {k: _placeless(v) for k, v in node.items() if k not in ("Transform", "Memo")}
    if isinstance(node, list):
        return [_placeless(v) for v in node]
    if isinstance(node, str) and node.startswith("file:///"):
        return node.rsplit("/", 1)[-1]
    return node


def _footprint(deck: DeckEntry, least: float = 0.0) -> Footprint:
    """What one object of a deck covers on the table: its size, at least `least` units a side (a token's bag)."""
    return Footprint(max(table_units(deck.size_mm.width), least), max(table_units(deck.size_mm.height), least))


def _transform(x: float, z: float, y: float = 1.0, face_down: bool = False, scale: float = 1.0) -> dict:
    return {"posX": round(x, 3), "posY": y, "posZ": round(z, 3), "rotX": 0, "rotY": 180,
            "rotZ": 180 if face_down else 0, "scaleX": round(scale, 4), "scaleY": 1, "scaleZ": round(scale, 4)}


def _base(name: str, guid: str, nickname: str, description: str, transform: dict, **extra: object) -> dict:
    """The fields every saved object has."""
    return {"Name": name, "Transform": transform, "Nickname": nickname, "Description": description,
            "GMNotes": "", "ColorDiffuse": {"r": 0.713, "g": 0.713, "b": 0.713}, "Locked": False, "Grid": True,
            "Snap": True, "IgnoreFoW": False, "Autoraise": True, "Sticky": True, "Tooltip": True,
            "GridProjection": False, "HideWhenFaceDown": False, "Hands": False, **extra,
            "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "GUID": guid}


# ------------------------------------------------------------ images as recipes
# Every image of the export is made from a recipe: plain data that names the card images it is made of (by
# content hash). `cardgen build` hands the recipes to the render workers (`TTSCardWork`), which make a card's
# share of them while its image is in memory: its sheet cells, its token or board image, and a sheet once
# its last cell is there. The export then finds those images in the cache and makes what is missing from
# the same recipes, so a build makes the same files whichever process made which image.


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
        """The card with its bleed cut off, drawn to a sheet cell in RGB from its vectors.

        Drawn, not resampled from the card's pixels: text and edges come out as sharp as the cell's size allows
        (a cell is what a player reads when zooming in Tabletop Simulator), and replaying the card's recorded
        drawing took ~2 ms where a BICUBIC resample of its pixels took ~9 (gen1000 cards, 825x1125 to 409x572).
        Every cell is drawn this way, whether the card was drawn now or found in the cache, so a sheet is the
        same file whatever the cache held.
        """
        b = self.bleed
        width, height = card.vectors.size
        return card.vectors.scaled(size, (b, b, width - b, height - b))


CardImages = Callable[[Source], DrawnCard]  # the card of a source: its pixels and its vectors


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
                           str(self.quality or "png")])

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
            tile = encode_tile(image, self.quality)
            cache.write(self.key, lambda temp: temp.write_bytes(tile))

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
        try:
            return join_tiles([read_tile(slot.stored(out_root, cards).read_bytes(), size) if isinstance(slot, Cell)
                               else _plain_tile(slot, quality) for slot in slots], self.columns)
        except ValueError:
            return None


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
        return inputs_key(["cover", self.source.hash, f"{self.source.bleed}", f"{COVER_FACE_PX}"])

    def cache(self, out_root: Path) -> Cache:
        """The cache of cover faces."""
        return Cache(out_root, COVER_CACHE, ".png")

    def store(self, out_root: Path, card: DrawnCard) -> None:
        """Make and store the face from the card (PNG: lossless, so a stored face is the face made now)."""
        from PIL import Image

        if self.cache(out_root).has(self.key):
            return
        face = self.source.trimmed(card.image).convert("RGBA")
        face.thumbnail(COVER_FACE_PX, Image.Resampling.LANCZOS)
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

    def cached(self, out_root: Path) -> bool:
        """Whether the image is in the cache."""
        return Cache(out_root, "outputs", self.suffix).has(inputs_key(self.inputs))

    def make(self, out_root: Path, cards: CardImages) -> Path:
        """The cached file of this image (made now unless it is cached already)."""
        return make_cached(out_root, self.suffix, self.inputs,
                           lambda temp: temp.write_bytes(self.encoded(out_root, cards)))

    def encoded(self, out_root: Path, cards: CardImages) -> bytes:
        """The image file's content: a JPEG sheet put together from its cells' tiles, any other image encoded."""
        if isinstance(self.picture, SheetPicture) and not self.png:
            joined = self.picture.joined(out_root, cards, self.quality)
            if joined is not None:
                return joined
        return encode(make_picture(self.picture, out_root, cards), self.png, self.quality)


@dataclass(frozen=True)
class SheetWork:
    """A sheet as the jobs of its cards carry it to the render workers: its cells' cache and keys, last slot first,
    to see whether a card's cell completed it, and its image's recipe pickled once for all its cards. As 70 cells in
    every card's job the recipe was 7.6 of a job's 14 kB, pickled and unpickled again for each card (~0.5 ms a
    card at 1,000 cards); as bytes it is copied, and unpickled only by the card that completes the sheet."""

    cache: Cache
    cells: tuple[str, ...]
    recipe: bytes

    @classmethod
    def of(cls, image: ExportImage, out_root: Path) -> SheetWork:
        """The work of a sheet image."""
        picture = image.picture
        assert isinstance(picture, SheetPicture)
        cells = [slot for slot in reversed(picture.slots) if isinstance(slot, Cell)]
        return cls(cells[0].cache(out_root), tuple(cell.key for cell in cells), pickle.dumps(image))

    def ready(self) -> bool:
        """Whether every cell is stored (by its file alone: each card asks this, and `make` verifies every cell it
        reads). Cards are drawn in about slot order, so the last slot is looked at first: one look for most cards."""
        return all(self.cache.path(key).is_file() for key in self.cells)

    def image(self) -> ExportImage:
        """The sheet image's recipe."""
        image = pickle.loads(self.recipe)
        assert isinstance(image, ExportImage)
        return image


@dataclass(frozen=True)
class TTSCardWork:
    """The export's work on one card image, done in a render worker while the image is in memory: the
    card's missing sheet cells, its token or board image, and each sheet whose last missing cell it has."""

    out_root: Path
    key: str  # the card image's content hash
    cells: tuple[Cell, ...]
    images: tuple[ExportImage, ...]  # images other than sheets
    sheets: tuple[SheetWork, ...] = ()
    faces: tuple[CoverFace, ...] = ()  # its face on the thumbnail, when it is a deck's first

    def __call__(self, card: DrawnCard) -> None:
        """Do the work on the card."""
        for cell in self.cells:
            cell.store(self.out_root, card)
        for face in self.faces:
            face.store(self.out_root, card)

        def only_this(source: Source) -> DrawnCard:
            if source.hash != self.key:  # a cell gone since `ready`: the export makes this image itself
                raise LookupError(source.hash)
            return card

        sheets = [sheet.image() for sheet in self.sheets if sheet.ready()]  # one not ready: a later card completes it
        for image in [*self.images, *sheets]:
            try:
                image.make(self.out_root, only_this)
            except LookupError:
                pass


class _Recipes:
    """Every image of an export (collected by a planning run of the exporter), to share out as card work."""

    def __init__(self) -> None:
        self.cells: dict[str, list[Cell]] = {}  # by card image hash
        self.images: dict[str, list[ExportImage]] = {}  # images made from a card image, by its hash
        self.faces: dict[str, CoverFace] = {}  # the thumbnail's faces, by card image hash

    def add(self, image: ExportImage) -> None:
        """Take in one image of the export."""
        picture = image.picture
        if isinstance(picture, Plain):
            return
        for source in picture.sources:
            self.images.setdefault(source, []).append(image)
        for slot in picture.slots if isinstance(picture, SheetPicture) else ():
            if isinstance(slot, Cell) and slot not in self.cells.setdefault(slot.source.hash, []):
                self.cells[slot.source.hash].append(slot)

    def work(self, out_root: Path) -> dict[str, TTSCardWork]:
        """What is missing from the caches, as work on the card images it is made from."""
        # An export image object is shared by its cards: looked up in the cache, and a sheet's work made, once.
        shared = {id(image): image for images in self.images.values() for image in images}
        missing_images = {key: image for key, image in shared.items() if not image.cached(out_root)}
        sheets = {key: (set(image.picture.slots), SheetWork.of(image, out_root))
                  for key, image in missing_images.items() if isinstance(image.picture, SheetPicture)}
        stored = _stored_cells(out_root)
        work = {}
        for key in {*self.cells, *self.images, *self.faces}:
            missing = tuple(c for c in self.cells.get(key, ()) if not stored(c))
            images = [image for image in self.images.get(key, ()) if id(image) in missing_images]
            sheet_work = tuple(sheets[id(image)][1] for image in images if id(image) in sheets
                               and any(c in sheets[id(image)][0] for c in missing))
            others = tuple(image for image in images if id(image) not in sheets)
            faces = tuple(face for face in [self.faces.get(key)] if face and not face.cache(out_root).has(face.key))
            if missing or others or sheet_work or faces:
                work[key] = TTSCardWork(out_root, key, missing, others, sheet_work, faces)
        return work


def _stored_cells(out_root: Path) -> Callable[[Cell], bool]:
    """Whether a cell is in the cell cache: none is while the cache has no folder (a first build into an output
    root), so its 1,000 cells' cache paths are not made and looked at one by one."""
    if not Cache(out_root, CELL_CACHE).folder.is_dir():
        return lambda cell: False
    return lambda cell: cell.cache(out_root).has(cell.key)


class _Exporter:
    """Writes one game's images into the staging folder and builds its objects."""

    def __init__(self, game: str, record: BuildRecord, out_dir: Path, staging: Path, options: TTSOptions,
                 url: Callable[[str], str], recipes: _Recipes | None = None,
                 previous: PreviousOutputs | None = None, drawings: Callable[[], Mapping[str, Drawing]] = dict,
                 wait: Callable[[str], Path | None] = lambda image: None) -> None:
        self.game, self.record, self.out_dir, self.staging = game, record, out_dir, staging
        self.options, self.url = options, url
        self.recipes = recipes  # when given, images are only collected there (see `card_work`), not made
        self.guid = Guids(game)
        self.keys: set[int] = set()
        self.cover: list[tuple[str, DeckEntry]] = []  # (face image path, deck) of each deck's first card
        self.hashes = record.image_hashes()  # looked up for every card: once, not a scan of the record each time
        self.previous = previous  # the previous build's images to keep (during a build)
        self.drawings = drawings  # how the game draws each card image, by hash: asked once, when a cell is missing
        self.known_drawings: Mapping[str, Drawing] | None = None
        self.wait = wait  # returns once the image of a path is drawn, with its file (see `export_tts`)
        self.path_of = {digest: path for path, digest in self.hashes.items()}  # a path of each image, by hash
        self.last: list[Callable[[], None]] = []  # images to put in once every other is (see `save_cached`)
        self.outside = 0  # objects the layout could not keep inside the play area

    # ------------------------------------------------------------ images

    def card_image(self, source: Source) -> DrawnCard:
        """A card of the build: its pixels read from its file, its vectors drawn again from its SVG when asked
        (how the game draws it is looked up only then: outside the render workers, a cell cache deleted or other
        export options)."""
        return DrawnCard(self.wait(source.path) or self.out_dir / source.path, lambda: self.drawing(source))

    def drawing(self, source: Source) -> Drawing:
        """How the game draws a card image of the build (a CardgenError when it no longer draws it)."""
        if self.known_drawings is None:
            self.known_drawings = self.drawings()
        drawing = self.known_drawings.get(source.hash)
        if drawing is None:
            raise CardgenError(f"the Tabletop Simulator export must draw {source.path} again, but the game no longer "
                               "draws that image; build the game again (cardgen build)", file=str(source.path))
        return drawing

    def source(self, path: str, deck: DeckEntry) -> Source:
        """A face or back image of the build, with what to cut off."""
        return Source(self.image_hash(path), path, deck.bleed_px)

    def save_cached(self, picture: Picture, stem: str, inputs: list[str], keep_alpha: bool = False,
                    last: bool = False) -> str:
        """Put an image into the export, made from its recipe or reused from the cache; return its URL. An image
        put `last` is put in once every other is (`put_last`): a build draws the backs after the faces, and the
        faces' sheets and texts are made as their cards are drawn, not after a deck's back.

        The name carries a hash of the inputs (card hashes, cell size, format), which changes whenever the
        content does.
        """
        png = keep_alpha or self.options.image_format == "png"
        key = inputs_key([*inputs, str(png), str(self.options.jpeg_quality)])
        name = f"{self.game}-{stem}-{key[:12]}{'.png' if png else '.jpg'}"
        image = ExportImage(picture, png, self.options.jpeg_quality, (key,))
        if self.recipes is not None:
            self.recipes.add(image)
        elif last:
            self.last.append(functools.partial(self._put, image, key, name))
        else:
            self._put(image, key, name)
        return self.url(name)

    def put_last(self) -> None:
        """Put in the images put `last` (see `save_cached`)."""
        for put in self.last:
            put()
        self.last.clear()

    def _put(self, image: ExportImage, key: str, name: str) -> None:
        """Put an image into the export's folder once the cards it shows are drawn."""
        picture = image.picture
        for digest in picture.sources if not isinstance(picture, Plain) else ():
            self.wait(self.path_of.get(digest, digest))
        if self.previous is None:
            place_file(image.make(self.out_dir.parent, self.card_image), self.staging / name)
        else:
            self.previous.place(self.staging / name, key, lambda target: place_file(
                image.make(self.out_dir.parent, self.card_image), target), name=f"{TTS_DIR}/{name}")

    def description(self, card: CardEntry) -> str:
        """A card's text as its description in Tabletop Simulator (none while only collecting recipes: the
        saved object is not kept then, and the markup of 1,000 cards took ~50 ms before the first card's job)."""
        return tts_text(card.text) if self.recipes is None else ""

    def image_hash(self, path: str | None) -> str:
        """The content hash the build recorded for a face or back image path."""
        return (self.hashes.get(path) if path is not None else None) or str(path)

    def sheet_picture(self, sheet: Sheet, images: list[str | None], deck: DeckEntry) -> SheetPicture:
        """A sheet's recipe from the image of each of its slots (None: a plain back)."""
        png, size = self.options.image_format == "png", (sheet.cell_width, sheet.cell_height)
        return SheetPicture(sheet.width, sheet.height, sheet.columns, tuple(
            Cell(self.source(path, deck), size, None if png else self.options.jpeg_quality) if path else Plain(size)
            for path in images))

    # ------------------------------------------------------------ objects

    def saved_object(self) -> dict:
        """The whole saved-object file: header plus every deck, token supply and board of the game.

        Boards lie in the middle of the table, the decks face down in rows in front of them and the tokens in
        rows behind, each at its size in game.yaml (see `tts_sizes`), all inside the play area (`tts_layout`).
        """
        rows: dict[str, list[tuple[str, DeckEntry, list[CardEntry]]]] = {"card": [], "token": [], "board": []}
        for deck_name, deck in self.record.decks.items():
            cards = self.record.cards_of(deck_name)
            if cards:
                rows[deck.kind].append((deck_name, deck, cards))
        tokens = [(deck_name, deck, card) for deck_name, deck, cards in rows["token"] for card in cards]
        boards = [(deck_name, deck, card) for deck_name, deck, cards in rows["board"] for card in cards]
        groups = ([_footprint(deck) for _, deck, _ in rows["card"]], [_footprint(deck) for _, deck, _ in boards],
                  [_footprint(deck, least=1.0) for _, deck, _ in tokens])
        laid = lay_out(*groups)
        self.outside = outside(laid, [item for group in groups for item in group])
        places = iter(laid)
        objects = []
        for deck_name, deck, cards in rows["card"]:
            x, z = next(places)
            objects.append(self.card_deck(deck_name, deck, cards, _transform(
                x, z, face_down=True, scale=card_scale(deck.size_mm.width, deck.size_mm.height))))
        board_objects = [self.board(deck_name, deck, card, *next(places)) for deck_name, deck, card in boards]
        for deck_name, deck, card in tokens:
            objects += self.token_objects(deck_name, deck, card, *next(places))
        objects += board_objects
        mark_for_push(objects, self.game)
        game = self.record.game
        return {"SaveName": game.title, "Date": self.record.built_at, "VersionNumber": "",
                "GameMode": game.title, "GameType": "", "GameComplexity": "", "Tags": [], "Gravity": 0.5,
                "PlayArea": 0.5, "Table": "", "Sky": "", "Note": "", "TabStates": {},
                "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "ObjectStates": objects}

    def card_deck(self, deck_name: str, deck: DeckEntry, cards: list[CardEntry], transform: dict) -> dict:
        """A DeckCustom of a deck's cards (copies repeated), or a lone Card when it has one card."""
        by_id = {c.id: c for c in cards}
        bleed = 2 * deck.bleed_px
        card_size = (deck.pixels.width - bleed, deck.pixels.height - bleed)  # as `trimmed` cuts
        self.cover.append((cards[0].face, deck))
        # A key names the sheet's images: it changes whenever they do, or a table holding an older export
        # of the deck would show the first images loaded under that key for both.
        picture = f"{card_size}/{deck.bleed_mm}/{self.options.image_format}/{self.options.jpeg_quality}"
        sheets = plan_sheets(self.game, deck_name, list(by_id), *card_size, self.keys, lambda ids: "|".join(
            [picture, *(f"{by_id[i].hash}/{self.image_hash(by_id[i].back)}" for i in ids)]))
        unique_back = len({c.back for c in cards}) > 1  # different backs: a back sheet per face sheet
        if not unique_back:  # one back image for the deck (and one file for decks sharing a back)
            sharpest = max(sheets, key=lambda s: s.cell_width * s.cell_height)
            size = (sharpest.cell_width, sharpest.cell_height)
            back_inputs = [self.image_hash(cards[0].back), f"{size}", f"{deck.bleed_mm}"]
            back = cards[0].back
            shared_back = self.save_cached(Scaled(self.source(back, deck), size) if back else Plain(size), "back",
                                           back_inputs, last=True)
        custom = {}
        for index, sheet in enumerate(sheets):
            layout = f"{sheet.width}x{sheet.height}/{sheet.cell_width}x{sheet.cell_height}/{deck.bleed_mm}"
            faces = self.sheet_picture(sheet, [by_id[i].face for i in sheet.card_ids], deck)
            face_url = self.save_cached(faces, f"{deck_name}-{index + 1}",
                                        [layout, *(by_id[i].hash for i in sheet.card_ids)])
            if unique_back:
                backs = self.sheet_picture(sheet, [by_id[i].back for i in sheet.card_ids], deck)
                back_url = self.save_cached(backs, f"{deck_name}-{index + 1}-backs",
                                            [layout, *(self.image_hash(by_id[i].back) for i in sheet.card_ids)],
                                            last=True)
            else:
                back_url = shared_back
            custom[str(sheet.key)] = {"FaceURL": face_url, "BackURL": back_url, "NumWidth": sheet.columns,
                                      "NumHeight": sheet.rows, "BackIsHidden": True, "UniqueBack": unique_back,
                                      "Type": DECK_TYPES[deck.shape]}
        sideways = deck.size_mm.width > deck.size_mm.height
        contained = []
        for sheet in sheets:
            for slot, card_id in enumerate(sheet.card_ids):
                card = by_id[card_id]
                for copy in range(card.copies):
                    contained.append(_base(
                        "Card", self.guid(f"card/{card_id}/{copy}"), card.name, self.description(card),
                        dict(transform), CardID=sheet.tts_id(slot), SidewaysCard=sideways,
                        CustomDeck={str(sheet.key): custom[str(sheet.key)]}, Hands=True, HideWhenFaceDown=True,
                        GMNotes=card_id))
        if len(contained) == 1:
            return contained[0]
        return _base("DeckCustom", self.guid(f"deck/{deck_name}"), deck.title,
                     f"{self.record.game.title} v{self.record.game.version}: {len(contained)} cards",
                     transform, SidewaysCard=sideways, HideWhenFaceDown=True,
                     DeckIDs=[c["CardID"] for c in contained], CustomDeck=custom, ContainedObjects=contained)

    def component_image(self, card: CardEntry, deck: DeckEntry, keep_alpha: bool) -> str:
        """A token's or board's image, trimmed and kept within the size limit; its URL."""
        self.cover.append((card.face, deck))
        return self.save_cached(Component(self.source(card.face, deck)), card.id, [card.hash, f"{deck.bleed_mm}"],
                                keep_alpha)

    def token_objects(self, deck_name: str, deck: DeckEntry, card: CardEntry, x: float, z: float) -> list[dict]:
        """A token as a Custom_Tile (or Custom_Token when cut out): in an Infinite_Bag for an endless
        supply, else one object per copy, stacked."""
        url = self.component_image(card, deck, keep_alpha=True)
        back_url = self.component_image(card.model_copy(update={"face": card.back, "id": f"{card.id}-back"}), deck,
                                        keep_alpha=True) if card.back else url
        image = {"ImageURL": url, "ImageSecondaryURL": back_url, "ImageScalar": 1.0, "WidthScale": 0.0}
        if deck_name in self.options.cutout:
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
            return _base(kind, self.guid(name), card.name, tts_text(card.text),
                         _transform(x, z, y=y, scale=scale), CustomImage=image)

        if deck.supply:
            return [_base("Infinite_Bag", self.guid(f"bag/{card.id}"), card.name,
                          f"Endless supply: {tts_text(card.text)}", _transform(x, z),
                          ContainedObjects=[token(f"token/{card.id}", 1.0)])]
        return [token(f"token/{card.id}/{copy}", 1.0 + 0.25 * copy) for copy in range(card.copies)]

    def board(self, deck_name: str, deck: DeckEntry, card: CardEntry, x: float, z: float) -> dict:
        """A Custom_Board, locked as Tabletop Simulator makes boards; `WidthScale` is its image's width over
        its height, as Tabletop Simulator stores it for every board. The grids of `tts: snap_points:` for its
        deck become its `AttachedSnapPoints`."""
        url = self.component_image(card, deck, keep_alpha=self.options.image_format == "png")
        size = deck.size_mm
        snaps = [point for grid in self.options.snap_points.get(deck_name, ()) for point in snap_grid(
            grid.columns, grid.rows, grid.across, grid.down, (size.width, size.height), (grid.x, grid.y))]
        return _base("Custom_Board", self.guid(f"board/{card.id}"), card.name, tts_text(card.text),
                     _transform(x, z, scale=board_scale(size.height)), Locked=True,
                     CustomImage={"ImageURL": url, "ImageSecondaryURL": "", "ImageScalar": 1.0,
                                  "WidthScale": round(size.width / size.height, 6)},
                     **({"AttachedSnapPoints": snaps} if snaps else {}))

    def cover_hashes(self) -> list[str]:
        """What the thumbnail shows, as content hashes (it is remade only when they change)."""
        return [self.image_hash(path) for path, _ in self.cover[:3]]

    def cover_faces(self) -> list[CoverFace]:
        """The faces the thumbnail shows: the first face of up to three decks."""
        return [CoverFace(self.source(path, deck)) for path, deck in self.cover[:3]]

    def thumbnail(self) -> Image.Image:
        """A 256 x 256 picture of the game: the first face of up to three decks, fanned out."""
        from PIL import Image

        canvas = Image.new("RGBA", (THUMBNAIL_PX, THUMBNAIL_PX), "#1f1d1a")
        shown = self.cover_faces()
        for path, _ in self.cover[:3]:
            self.wait(path)
        for i, cover in enumerate(shown):
            face = cover.load(self.out_dir.parent, self.card_image)
            angle = (i - (len(shown) - 1) / 2) * -12
            turned = face.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
            x = (THUMBNAIL_PX - turned.width) // 2 + round((i - (len(shown) - 1) / 2) * 50)
            canvas.alpha_composite(turned, (max(0, x), (THUMBNAIL_PX - turned.height) // 2))
        return canvas.convert("RGB")

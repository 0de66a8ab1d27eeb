"""The export's work on card images in the render workers of a build: each card's missing sheet cells, its token
or board image, its face on the thumbnail, and each sheet whose last missing cell it has."""
from __future__ import annotations

import itertools
import operator
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from cardgen.core.folderwatch import entry_trust
from cardgen.core.storage import Cache, verify
from cardgen.outputs.tts.pictures import Cell, CoverFace, ExportImage, Plain, SheetPicture, Source
from cardgen.raster.render import DrawnCard

if TYPE_CHECKING:
    pass


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


class Recipes:
    """Every image of an export (collected by a planning run of the exporter), to share out as card work."""

    def __init__(self) -> None:
        self.images: dict[int, ExportImage] = {}  # by identity (an image object shared by decks is one image)
        self.faces: dict[str, CoverFace] = {}  # the thumbnail's faces, by card image hash

    def add(self, image: ExportImage) -> None:
        """Take in one image of the export."""
        if not isinstance(image.picture, Plain):
            self.images[id(image)] = image

    def entries(self, out_root: Path) -> Iterator[str]:
        """The cache entries the export uses (paths as text): its images, their sheets' cells, the cover's faces."""
        outputs = Cache(out_root, "outputs")
        cells: dict[int | None, Cache] = {}  # by quality (a Cache made for each of 10,000 cells: ~0.1 s)
        last, sheets = _SHEET_CELLS.get(out_root, {}), dict[str, tuple[str, ...]]()
        _SHEET_CELLS[out_root] = sheets
        for image in self.images.values():
            path = outputs.path_text(image.key, image.suffix)
            yield path
            if isinstance(image.picture, SheetPicture):
                if path not in last:  # (a sheet's key holds its cells' own: those of a sheet listed before, kept)
                    last[path] = tuple(
                        (cells.get(cell.quality) or cells.setdefault(cell.quality, cell.cache(out_root))
                         ).path_text(cell.key) for cell in image.picture.slots if isinstance(cell, Cell))
                sheets[path] = last[path]
                yield from sheets[path]
        for face in self.faces.values():
            yield face.cache(out_root).path_text(face.key)

    def work(self, out_root: Path) -> dict[str, TTSCardWork]:
        """What is missing from the caches, as work on the card images it is made from: the cells of each sheet
        missing, and the sheet itself (done by the card that completes it), and each other image missing.

        Only the cells of sheets missing are looked up: a cell is made for a sheet only (an edit's are the 70 of
        its card's sheet, not the game's every cell, ~20 ms of a watch's edit at 1,000 cards)."""
        cells: dict[str, dict[Cell, None]] = {}  # by card image hash, in order
        sheets: dict[str, dict[int, SheetWork]] = {}  # the sheets a card's cells complete, by card image hash
        others: dict[str, list[ExportImage]] = {}
        for image in _uncached(out_root, list(self.images.values())):
            picture = image.picture
            if isinstance(picture, Plain):  # (not added)
                continue
            if not isinstance(picture, SheetPicture):
                for source in picture.sources:
                    others.setdefault(source, []).append(image)
                continue
            sheet = SheetWork.of(image, out_root)
            slots = list(dict.fromkeys(slot for slot in picture.slots if isinstance(slot, Cell)))
            for cell in itertools.compress(slots, map(operator.not_, _stored_cells(out_root, slots))):
                cells.setdefault(cell.source.hash, {})[cell] = None
                sheets.setdefault(cell.source.hash, {})[id(image)] = sheet
        faces = {key: face for key, face in self.faces.items() if not face.cache(out_root).has(face.key)}
        return {key: TTSCardWork(out_root, key, tuple(cells.get(key, ())), tuple(others.get(key, ())),
                                 tuple(sheets.get(key, {}).values()), tuple([faces[key]] if key in faces else []))
                for key in {*cells, *others, *faces}}


# The cells of each sheet `Recipes.entries` last listed, by the sheet's cache path, by output root: an edit's sheets
# are its last ones but the edited card's (~50 ms a listing at 10,000 cards, the cells' keys made again).
_SHEET_CELLS: dict[Path, dict[str, tuple[str, ...]]] = {}


def _uncached(out_root: Path, images: list[ExportImage]) -> list[ExportImage]:
    """The images the outputs cache lacks (see `_trusted`)."""
    cache = Cache(out_root, "outputs")
    paths = list(map(cache.path_text, map(_KEY, images), map(_SUFFIX, images)))
    return list(itertools.compress(images, map(operator.not_, _trusted(cache, paths))))


def _stored_cells(out_root: Path, cells: list[Cell]) -> list[bool]:
    """Whether each cell (of one sheet: one format) is in the cell cache (see `_trusted`): none is while the cache
    has no folder (a first build into an output root), so its 1,000 cells' cache paths are not looked at one by
    one."""
    cache = cells[0].cache(out_root) if cells else None
    if cache is None or not cache.folder.is_dir():
        return [False] * len(cells)
    return _trusted(cache, list(map(cache.path_text, map(_KEY, cells))))


def _trusted(cache: Cache, paths: list[str]) -> list[bool]:
    """Whether each entry of a cache (by path) is there and verifies. In a process that builds again, an entry it
    verified that nothing has touched since (`folderwatch.entry_trust`) is taken by C loops, not looked at (a `stat`
    and four paths made each: ~150 sheets and the ~70 cells of an edited card's sheet an edit at 10,000 cards); the
    others are verified, and trusted from then on."""
    watch = entry_trust(cache.folder)
    found = watch.untouched(paths) if watch is not None else [False] * len(paths)
    trusted = []
    for place in itertools.compress(range(len(paths)), map(operator.not_, found)):
        if verify(Path(paths[place])):
            trusted.append(paths[place])
            found[place] = True
    if watch is not None:
        watch.trust(trusted)
    return found


_KEY, _SUFFIX = operator.attrgetter("key"), operator.attrgetter("suffix")

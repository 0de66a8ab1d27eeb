"""The export's work on card images in the render workers of a build: each card's missing sheet cells, its token
or board image, its face on the thumbnail, and each sheet whose last missing cell it has."""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cardgen.core.storage import Cache
from cardgen.outputs.tts.pictures import CELL_CACHE, Cell, CoverFace, ExportImage, Plain, SheetPicture, Source
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
        # A cell is made for a sheet only: the cells of sheets in the cache are not looked up (an edit's are the
        # 70 of its card's sheet, not the game's every cell: ~20 ms of a watch's edit at 1,000 cards).
        wanted = set().union(*(slots for slots, _ in sheets.values()))
        stored = _stored_cells(out_root)
        work = {}
        for key in {*self.cells, *self.images, *self.faces}:
            missing = tuple(c for c in self.cells.get(key, ()) if c in wanted and not stored(c))
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

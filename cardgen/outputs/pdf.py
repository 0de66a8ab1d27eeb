"""The print-and-play PDF: pages laid out by `cardgen.outputs.imposition`, drawn with reportlab.

Each distinct image is embedded once: reportlab reuses an image drawn twice from the same file
name, and images with the same content (by the hash the build record holds) are mapped to one name first.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import struct
from concurrent.futures import BrokenExecutor, Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable

from cardgen.core.errors import Problem
from cardgen.core.storage import KeptByGame, after_rebuild, cache_root, derived, write_atomic
from cardgen.core.units import mm_to_pt
from cardgen.load.freshness import PreviousOutputs
from cardgen.load.manifest import Game
from cardgen.options.pdf import PrintSpec
from cardgen.outputs import reportlab_compat as rl
from cardgen.outputs.imposition import Page, Rect, impose_cards
from cardgen.outputs.kept_prints import pdf_name, read_kept, write_kept
from cardgen.outputs.pdf_update import (
    AHEAD_FOLDER,
    FILE_KEY,
    Written,
    append_revision,
    copy_ahead,
    image_object,
    written_whole,
)
from cardgen.outputs.print_work import MaskedImage, PrintJPEG
from cardgen.outputs.stage import Stage, StageContext, manifest_file
from cardgen.raster.render import CardWork
from cardgen.record.record import BuildRecord, CardEntry, cards_by_deck, face_values

MARK_WIDTH_PT = 0.3
PAGES_PER_FILE = 120  # at most; a duplex front page and its back page always share a file
FOOTER_MAX_PT = 6.0
FOOTER_MIN_PT = 3.5
_FOOTER_FONT = "Helvetica"


@dataclass
class PrintResult:
    """What writing the print PDF made: files, page counts and warnings."""

    files: list[Path] = field(default_factory=list)
    pages: int = 0
    back_pages: int = 0
    warnings: list[str] = field(default_factory=list)


def write_print_pdf(record: BuildRecord, build_dir: Path, options: PrintSpec, target: Path,
                    cards: list[CardEntry] | None = None, previous: PreviousOutputs | None = None,
                    wait: Callable[[str], Path | None] = lambda image: None,
                    helpers: Executor | None = None) -> PrintResult:
    """Write the print PDF of a build record (or of some of its cards) to `target`.

    `build_dir` is the folder the record's image paths are relative to; `wait(image)` returns once the image of
    a path is drawn (during a build, as the workers draw), with the file to read it from (None: its path). With
    duplex `none` the backs go to a second file next to it, `<name>-backs.pdf`. A file of a long print (see `_volumes`)
    that the `previous` build wrote from the same pages, images and text is kept, not drawn again; one that differs
    from it in card images only is that file with a revision appended (see `write_volume`). With `helpers`
    (a build's render workers), the files of a long print are written by them, each once its images are drawn.
    """
    imposition = impose_cards(record.cards if cards is None else cards, options, record.game.name)
    result = PrintResult(pages=len(imposition.pages), back_pages=len(imposition.back_pages),
                         warnings=imposition.warnings)
    images = ImageFiles(build_dir, record.image_hashes(), options, build_dir.parent, wait,  # caches beside it
                        _opaque_sizes(record))
    step = 2 if imposition.paired else 1
    documents = _volumes(target, imposition.pages, step)
    if imposition.back_pages:
        documents += _volumes(target.with_name(f"{target.stem}-backs.pdf"), imposition.back_pages, step)
    document = Document.of(record)
    writer = _VolumeWriter(document, images, helpers if len(documents) > 1 else None)
    settings = repr(options), dataclasses.replace(document, built_at=document.built_at[:10])  # (what it prints)
    for path, pages, first, total in documents:
        # its layout key and its slots' images: the last build's while its pages are the same (`storage.derived`)
        layout, slots = derived(("print-file", record.game.name, path.name), pages, (settings, first, total),
                                functools.partial(_file_facts, pages, document, options, first, total), _same_pages)
        volume = Volume(record.game.name, pages, first, total, layout)
        if previous is None:
            writer.write(volume, path)
        else:  # the previous build's file: a revision may be appended to a copy of it (see `pdf_update`)
            base = previous.final / path.relative_to(previous.staging)
            previous.place(path, _volume_key(volume, images, slots), functools.partial(writer.write, volume, base=base))
        result.files.append(path)
    writer.finish()
    return result


@dataclass(frozen=True)
class Document:
    """What a print PDF says beside its cards: the game's title and version, the decks' titles, which cardgen made
    it and when (the parts of a build record its files read, sent to a helper process whole)."""

    title: str
    version: str
    cardgen: str
    built_at: str
    decks: dict[str, str]  # titles, by deck name

    @classmethod
    def of(cls, record: BuildRecord) -> Document:
        """What a build record's print PDF says."""
        return cls(record.game.title, record.game.version, record.cardgen, record.built_at,
                   {name: deck.title for name, deck in record.decks.items()})

    def deck_title(self, deck: str) -> str:
        """A deck's title (its name when the record has no such deck)."""
        return self.decks.get(deck, deck)


@dataclass(frozen=True)
class Volume:
    """One file of a print: its pages, numbered `first` on of `total` in the whole print, and the hash of all it
    draws but the images' content (`_layout_key`)."""

    game: str
    pages: list[Page]
    first: int
    total: int
    layout: str

    def names(self, images: ImageFiles) -> list[str]:
        """The name of the image drawn in each slot, page after page."""
        name = images.hashes.__getitem__  # (`ImageFiles.name`, without a Python call for each of ~20,000 slots)
        return list(map(name, [slot.image for page in self.pages for slot in page.slots]))

    def kept(self, out_root: Path, path: Path) -> KeptByGame:
        """The pages the last build drew into the file of this name (see `_draw_pages`), and what that write made
        (`pdf_update.Written`). In a process that builds again, an edit's are kept in memory (`KeptByGame.deferred`)
        and written to the entry's file once the build has reported (`written_later`): a process that read the entry
        then found an earlier write's state, which the file no longer was (`Written.is_file`), and wrote the file
        whole (a watch's first edit after another's: ~0.1 s of CPU at 1,000 cards)."""
        kept = KeptByGame(out_root, "print-pages", f"{self.game}\0{path.name}")
        kept.deferred = kept.written_later = True
        return kept


class _VolumeWriter:
    """Writes the files of a print: here, or in `helpers` (a build's render workers), each handed its file once every
    image on its pages is drawn. Jobs are taken in order, so the helpers write once they have drawn every card: a
    file written beside the drawing takes more from the two cores than it saves after it (measured: backs drawn
    first, so that the files could be written while the faces are drawn, made a 3,000-card build slower)."""

    def __init__(self, document: Document, images: ImageFiles, helpers: Executor | None) -> None:
        self.document, self.images, self.helpers = document, images, helpers
        self.writing: list[Future[None]] = []

    def write(self, volume: Volume, path: Path, base: Path | None = None) -> None:
        """Write (or have a helper write) the file of a volume at `path` (a copy of `base` with a revision, when it
        can be: see `write_volume`)."""
        if self.helpers is not None:
            job = self.images.drawn([slot.image for page in volume.pages for slot in page.slots])  # waits
            with contextlib.suppress(BrokenExecutor, RuntimeError):  # a pool broken or shut down: written here
                self.writing.append(self.helpers.submit(write_volume, path, volume, self.document, job, base))
                return
        write_volume(path, volume, self.document, self.images, base)

    def finish(self) -> None:
        """Wait until every file is written; raise the error that stopped a helper writing one."""
        for future in self.writing:
            future.result()


def write_volume(path: Path, volume: Volume, document: Document, images: ImageFiles,
                 base: Path | None = None) -> None:
    """Write the file of a volume at `path`, atomically (in a helper process, or in the build's).

    When `base` is the file the last write of this name made and the volume differs from it only in card images,
    `path` is a copy of it with a revision holding the new images (`_update`); otherwise it is drawn whole. Either
    way, what the write made is kept beside the pages (`pdf_update.Written`) for the next.
    """
    kept = volume.kept(images.out_root, path)
    if base is not None and _update(path, base, volume, images, kept):
        return
    last = Written.of(kept.kept.get(FILE_KEY))  # the last write's, which no update took
    objects: dict[str, list[int]] = {}
    write_atomic(path, functools.partial(_draw, pages=volume.pages, document=document, images=images,
                                         first=volume.first, total=volume.total, kept=kept, objects=objects))
    names = volume.names(images)
    written = written_whole(path, volume.layout, names, objects) if objects else None
    if written is not None:
        kept.used[FILE_KEY] = written.as_kept()
    kept.save()  # once the file is whole: its pages are what the next build may reuse
    if written is not None and base is not None and last is not None and \
            last.replacements(volume.layout, names) is not None:  # only images changed: the file stopped the update
        _copy_ahead_later(base, written, images.out_root)


def _update(path: Path, base: Path, volume: Volume, images: ImageFiles, kept: KeptByGame) -> bool:
    """Write at `path` the file `base` with a revision replacing the images that changed, each new image under
    the object numbers of the one it replaces; False, with nothing written, where that cannot be done: `base` is
    not the file the last write made, the pages differ in more than images (see `Written.replacements`), a new
    image needs more objects than the old (a soft mask) or has another pixel size, or the file would grow past
    its bounds (`Written.may_grow`)."""
    written = Written.of(kept.kept.get(FILE_KEY))
    names = volume.names(images)
    swaps = written.replacements(volume.layout, names) if written is not None else None
    if written is None or swaps is None or not written.is_file(base):
        return False
    slots = {images.name(slot.image): slot.image for page in volume.pages for slot in page.slots}
    objects = {name: numbers for name, numbers in written.objects.items() if name not in swaps}

    def revision() -> dict[int, bytes] | None:
        """The new images' objects, once they are drawn (waited for here)."""
        new = {name: _pixels(*images(slots[name]), images) for name in swaps.values()}
        pixels = {name: each for name, each in new.items() if each is not None}
        formatted = (_revision_objects(swaps, pixels, written, objects) if len(pixels) == len(new)
                     else _revision_by_reportlab(swaps, slots, images, written, objects))
        return formatted if formatted is not None and written.may_grow(sum(map(len, formatted.values()))) else None

    now = append_revision(base, path, written, names, objects, revision)  # the file copied while the cards draw
    if now is None:
        return False
    kept.used = {**kept.kept, FILE_KEY: now.as_kept()}  # the pages as they were: a whole write may reuse them
    kept.save()
    _copy_ahead_later(base, now, images.out_root)
    return True


def _copy_ahead_later(final: Path, written: Written, out_root: Path) -> None:
    """Leave for the wait after the report (in a process that builds again: `after_rebuild`) a copy of the file
    `written` describes, at `final` by then, which the next edit's update of it takes (`pdf_update.copy_ahead`):
    after an update, and after a whole write that only changed images (a watch's first edit of a file whose kept
    pages describe an earlier state: the previous watch kept its last edits in memory only). Else that next edit
    copied the file itself (~25 ms of the print's thread and 72 MB copied at 10,000 cards, measured). Not after a
    first build's or a new layout's whole writes: every file of a print, ~70 MB each, none likely edited next."""
    after_rebuild(functools.partial(copy_ahead, final, written, cache_root(out_root) / AHEAD_FOLDER))


def _revision_objects(swaps: dict[str, str], new: dict[str, _Pixels], written: Written,
                      objects: dict[str, list[int]]) -> dict[int, bytes] | None:
    """The objects of a revision (by number): each new image under the numbers of the one it replaces, which
    `objects` then gives for it; None when one cannot take them (another pixel size, a soft mask more or fewer).

    Formatted as reportlab formats them (`pdf_update.image_object`), without importing it (~30 ms of an edit).
    """
    formatted = {}
    for old, name in swaps.items():
        pixels, (width, height, number, mask) = new[name], written.objects[old]
        if (pixels.width, pixels.height) != (width, height) or bool(pixels.alpha) != bool(mask):
            return None
        formatted[number] = image_object(number, width, height, "DeviceRGB", b"".join(pixels.rgb()), png=pixels.png,
                                         mask=mask)
        if mask:
            formatted[mask] = image_object(mask, width, height, "DeviceGray", pixels.alpha)
        objects[name] = written.objects[old]
    return formatted


def _revision_by_reportlab(swaps: dict[str, str], slots: dict[str, str], images: ImageFiles, written: Written,
                           objects: dict[str, list[int]]) -> dict[int, bytes] | None:
    """`_revision_objects` for new images of which one is a picture reportlab reads itself (see `_embed`)."""
    pdf = _canvas(io.BytesIO())  # registers the new images as a whole write would, to format them
    numbers: dict[str, int] = {}  # the objects to write, by their names in `pdf`: the numbers they replace
    for old, new in swaps.items():
        name, drawn = images(slots[new])
        if not _embed(pdf, name, drawn, images):
            return None
        own, old_numbers = rl.embedded_objects(pdf, name), written.objects[old]
        if rl.pixel_size(pdf, own[0]) != tuple(old_numbers[:2]) or len(own) != 1 + bool(old_numbers[3]):
            return None
        numbers.update(zip(own, old_numbers[2:]))
        objects[new] = old_numbers
    return rl.formatted_objects(pdf, numbers)


def _opaque_sizes(record: BuildRecord) -> dict[str, tuple[int, int]]:
    """The pixel sizes of a record's card images that cardgen draws opaque (8-bit RGB), by path: the faces and
    backs of decks of cards (tokens and boards keep their transparency); the faces' made again only for the changed
    cards in a process that builds again (`record.face_values`)."""
    decks = {name: (deck.pixels.width, deck.pixels.height) for name, deck in record.decks.items()
             if deck.kind == "card"}
    sizes = {back.image: decks[back.deck] for back in record.backs.values() if back.deck in decks}
    faces = face_values(("opaque-sizes", record.game.name), record.cards, tuple(decks.items()),
                        lambda card: decks.get(card.deck))
    return {**sizes, **faces}


def _layout_key(pages: list[Page], document: Document, options: PrintSpec, first: int, total: int) -> str:
    """A hash of everything `_draw` writes into one file but the images' content: the pages (their slots, marks
    and footer places, by their digests: made once a page, and a watch's edit lays out anew only the sheets whose
    cards changed), the footer texts' parts, the options and the versions drawing it."""
    from reportlab import Version

    from cardgen.core.bundled import code_digest

    decks = sorted({page.deck for page in pages})
    digest = hashlib.sha256(repr((code_digest(__name__), document.cardgen, Version, options, first, total,
                                  document.title, document.version, document.built_at[:10],
                                  [document.deck_title(d) for d in decks])).encode())
    for page in pages:
        digest.update(page.digest.encode())
    return digest.hexdigest()[:32]


def _volume_key(volume: Volume, images: ImageFiles, slots: list[str]) -> str:
    """A hash of everything `_draw` writes into a volume's file: its layout and the content of every image drawn
    (`slots`: the image of each slot of its pages, see `_file_facts`)."""
    names = list(map(images.hashes.__getitem__, slots))  # (by C loops)
    digest = hashlib.sha256(volume.layout.encode())
    for start in range(0, len(names), SLOTS_HASHED):
        digest.update(_names_digest(tuple(names[start:start + SLOTS_HASHED])))
    return digest.hexdigest()[:32]


SLOTS_HASHED = 64  # the names of this many slots hashed at once, each such block's digest kept (`_names_digest`)


@functools.lru_cache(maxsize=4096)
def _names_digest(names: tuple[str, ...]) -> bytes:
    """The digest of the image names of a block of slots (kept: an edit's file hashes again only the blocks whose
    images changed, not ~20,000 names)."""
    return hashlib.sha256("".join(names).encode()).digest()


def _file_facts(pages: list[Page], document: Document, options: PrintSpec, first: int, total: int
                ) -> tuple[str, list[str]]:
    """Of a print file's pages: their layout key (`_layout_key`) and the image path of each slot, page after page."""
    return _layout_key(pages, document, options, first, total), [slot.image for page in pages for slot in page.slots]


def _same_pages(made: Any, last: list[Page], places: list[int] | None) -> Any:
    """What was made of a file's pages, while they are the same objects (`storage.derived`: pages are not changed
    once imposed, and a watch's edit keeps the pages it does not lay out again, see `imposition.impose_cards`)."""
    return made if places == [] else None


def _volumes(path: Path, pages: list[Page], step: int) -> list[tuple[Path, list[Page], int, int]]:
    """Split a long document into files of at most PAGES_PER_FILE pages: (path, pages, first page, all pages).

    reportlab keeps a document's images in memory until it is saved, so a game of thousands of
    cards is written as several files (`<name>-part1of3.pdf`, ...) to keep memory bounded. Files
    hold whole groups of `step` pages: 2 for duplex, so that no file ends between a front and
    its back. A fronts file and its backs file (duplex none) are split at the same pages.
    """
    size = max(step, PAGES_PER_FILE - PAGES_PER_FILE % step)
    if len(pages) <= size:
        return [(path, pages, 1, len(pages))]
    starts = range(0, len(pages), size)
    return [(path.with_name(f"{path.stem}-part{n}of{len(starts)}.pdf"), pages[i:i + size], i + 1,
             len(pages)) for n, i in enumerate(starts, 1)]


class ImageFiles:
    """Maps build image paths to the images drawn: one per distinct content (JPEG if asked), named by it.

    Contents are told apart by the hashes of the build record (`hashes`, by image path); no image
    file is hashed again. Naming an image by its content (not by its file's path, as reportlab does)
    makes the PDF of a rebuild the same file as the PDF of a cold build.
    """

    def __init__(self, build_dir: Path, hashes: dict[str, str], options: PrintSpec, out_root: Path,
                 wait: Callable[[str], Path | None] = lambda image: None,
                 opaque: dict[str, tuple[int, int]] | None = None) -> None:
        self.build_dir = build_dir
        self.hashes = hashes
        self.options = options
        self.out_root = out_root
        self.wait = wait  # returns once the image of a path is drawn, with its file (see `write_print_pdf`)
        # The pixel sizes of the opaque images (cards' faces and backs, which cardgen draws as 8-bit RGB PNG), by
        # path: embedded without reading their files until the document is written (see `_embed`).
        self.opaque = opaque or {}
        self._by_digest: dict[str, str] = {}
        self._image: dict[str, str] = {}  # an image path of each name

    def name(self, image: str) -> str:
        """The name of an image path of the build record in the PDF: its content hash."""
        return self.hashes[image]

    def __call__(self, image: str) -> tuple[str, str]:
        """The name and the file to draw for an image path of the build record (once that file is there)."""
        digest = self.hashes[image]
        if digest not in self._by_digest:
            if self.options.images == "jpeg":
                source = PrintJPEG(self.out_root, digest, self.options.jpeg_quality).path(self.file(image))
            elif image in self.opaque:
                source = self.build_dir / image  # found when the document is written (see `idat`)
            else:
                source = self.file(image)  # read as it is embedded
            self._by_digest[digest], self._image[digest] = str(source), image
        return digest, self._by_digest[digest]

    def file(self, image: str) -> Path:
        """The file holding the image of a path, once it is drawn (see `wait`)."""
        return self.wait(image) or self.build_dir / image

    def drawn(self, paths: list[str]) -> ImageFiles:
        """These image files for another process, once every image of `paths` is drawn (waited for here): the
        record's hashes and sizes of those images only, and their files found already."""
        files = {image: self.file(image) for image in dict.fromkeys(paths)}
        return ImageFiles(self.build_dir, {image: self.hashes[image] for image in files}, self.options, self.out_root,
                          files.get, {image: self.opaque[image] for image in files if image in self.opaque})

    def opaque_png(self, name: str, drawn: str) -> tuple[int, int] | None:
        """The pixel size of an image embedded from its PNG file `drawn` without reading it now (see `opaque`)."""
        image = self._image.get(name)
        return self.opaque.get(image) if image is not None and drawn == str(self.build_dir / image) else None

    def idat(self, name: str, size: tuple[int, int]) -> list[rl.Buffer]:
        """The IDAT chunks' data of the PNG file of a name, once it is drawn (see `wait`), read when the document is
        written; an error if the file is not the 8-bit RGB PNG of this size cardgen drew."""
        source = self.file(self._image[name])
        read = png_chunks(source)
        if read is None or read[:2] != size:
            raise OSError(f"{source} is not the {size[0]}x{size[1]} 8-bit RGB PNG cardgen drew "
                          "(changed while the print PDF was written?)")
        return read[2]

    def masked(self, name: str, drawn: str) -> tuple[int, int, bytes, bytes] | None:
        """The streams of a drawn image with transparency (see `MaskedImage`), None for any other."""
        if not drawn.lower().endswith(".png"):
            return None
        return MaskedImage(self.out_root, name).streams(Path(drawn))


def _draw(path: Path, pages: list[Page], document: Document, images: ImageFiles, first: int, total: int,
          kept: KeptByGame | None = None, objects: dict[str, list[int]] | None = None) -> None:
    """Draw pages into one PDF file, numbered `first` on of `total` pages in the whole print (reusing the pages
    `kept` holds: see `_draw_pages`). `objects` is filled with where each image is (see `Written.objects`), unless
    an image was drawn by reportlab's own `drawImage`."""
    with path.open("wb") as handle:
        pdf = _canvas(handle)
        _draw_pages(pdf, pages, document, images, first, total, kept)
        if objects is not None:
            objects.update(_objects(pdf, pages, images))
        with rl.streaming(handle):
            pdf.save()


def _canvas(handle: BinaryIO) -> Any:
    """A reportlab canvas writing a print PDF to `handle`."""
    from reportlab import rl_config
    from reportlab.pdfgen import canvas

    rl_config.useA85 = 0  # ASCII85 makes image streams 25% larger and slower to write
    return canvas.Canvas(handle, pageCompression=1)


def _objects(pdf: Any, pages: list[Page], images: ImageFiles) -> dict[str, list[int]]:
    """Each image's pixel size and object numbers (its soft mask's, or 0) in a document drawing `pages`; empty
    when an image is not registered by its name (drawn by `drawImage`)."""
    objects = {}
    for name in {images.name(slot.image) for page in pages for slot in page.slots}:
        if not rl.is_registered(pdf, rl.xobject_name(pdf, name)):
            return {}
        own = rl.embedded_objects(pdf, name)
        numbers = rl.object_numbers(pdf, own)
        objects[name] = [*rl.pixel_size(pdf, own[0]), numbers[0], numbers[1] if len(numbers) > 1 else 0]
    return objects


def _draw_pages(pdf: Any, pages: list[Page], document: Document, images: ImageFiles, first: int, total: int,
                kept: KeptByGame | None = None) -> None:
    """Draw the pages and their footers on a reportlab canvas.

    With `kept` (the pages the last build drew into this file, by `_page_key`), a page drawn before from the
    same slots, marks, images and footer is not drawn again: its operators are put back as they were (drawing
    a page is ~1.3 ms of reportlab's number formatting; on a one-card edit of a 100-card game, 33 of 34 pages
    are the same). The file is the same bytes either way.
    """
    pdf.setTitle(f"{document.title} v{document.version} print sheets")
    pdf.setCreator(f"cardgen {document.cardgen}")
    for number, page in enumerate(pages, first):
        pdf.setPageSize((mm_to_pt(page.width), mm_to_pt(page.height)))
        trim, bleed = page_boxes(page)
        pdf.setTrimBox(_pt(trim.x, trim.y, trim.right, trim.top))
        pdf.setBleedBox(_pt(bleed.x, bleed.y, bleed.right, bleed.top))
        side = page.note or page.side
        footer = (f"{document.title} v{document.version} · {document.deck_title(page.deck)} · {side} · built "
                  f"{document.built_at[:10]} · page {number} of {total}")
        key = _page_key(page, footer, images) if kept is not None else ""
        drawn = kept.kept.get(key) if kept is not None else None
        if not (drawn is not None and _put_back(pdf, page, images, drawn)):
            embedded = _draw_page(pdf, page, images)
            _draw_footer(pdf, page, footer)
            font = rl.font_name(pdf, _FOOTER_FONT) if page.footer else None
            # A page drawn with reportlab's own image drawing (see `_embed`) cannot be put back by name.
            code, forms = rl.page_operators(pdf)
            drawn = {"code": code, "forms": forms, "font": font} if embedded else None
        if kept is not None and drawn is not None:
            kept.used[key] = drawn
        pdf.showPage()


def page_boxes(page: Page) -> tuple[Rect, Rect]:
    """A page's TrimBox and BleedBox (mm): the card's trim and the bleed drawn around it on a page of one whole
    card (a one-up layout, a board that fits the paper, a deck's lone last card), which a print shop can cut or
    impose again like a vendor's one-up file; the paper itself on a sheet of several cards, a tile of a board or a
    blank back, whose finished piece is the printed sheet cut by hand along its marks (a TrimBox around the cards
    would have a shop cut the marks and footer off). docs/print.md says so."""
    paper = Rect(0.0, 0.0, page.width, page.height)
    if len(page.slots) != 1 or not page.slots[0].clip.contains(page.slots[0].trim):
        return paper, paper
    slot = page.slots[0]
    shown = _overlap(_overlap(slot.clip, slot.image_rect), paper)  # the bleed as far as the page shows it
    return _overlap(slot.trim, paper), shown


def _overlap(a: Rect, b: Rect) -> Rect:
    """The part of rectangle `a` inside `b` (both overlap here: a card on its page)."""
    x, y = max(a.x, b.x), max(a.y, b.y)
    return Rect(x, y, min(a.right, b.right) - x, min(a.top, b.top) - y)


def _page_key(page: Page, footer: str, images: ImageFiles) -> str:
    """A hash of everything drawing a page reads: its slots, marks and footer place (`Page.digest`: made once a page,
    by `_layout_key` before a helper writes the file, which receives it with the page; a page's `repr` took ~65 us),
    the footer's text, the images' names (their content hashes) and the versions drawing it."""
    from reportlab import Version

    from cardgen.core.bundled import code_digest

    names = [images.name(slot.image) for slot in page.slots]
    return hashlib.sha256(repr((code_digest(__name__), Version, page.digest, footer, names)).encode()).hexdigest()[:32]


def _put_back(pdf: Any, page: Page, images: ImageFiles, drawn: Any) -> bool:
    """Put a page drawn before back on the canvas: its operators, and its images and font registered in the
    document as drawing them does (in the same order, so they get the same names). False, with nothing put
    back, when `drawn` is not what `_draw_pages` keeps or the names would differ: the page is then drawn."""
    if not (isinstance(drawn, dict) and isinstance(code := drawn.get("code"), list)
            and isinstance(forms := drawn.get("forms"), list) and all(isinstance(c, str) for c in code + forms)):
        return False
    names = [images(slot.image) for slot in page.slots]
    if forms != [name for name, _ in names]:
        return False
    if not all(_embed(pdf, name, file, images) for name, file in names):
        return False
    if drawn.get("font") != (rl.font_name(pdf, _FOOTER_FONT) if page.footer else None):
        return False  # (drawing the page registers the same images, then the same font, in this order)
    rl.put_page_operators(pdf, code, forms)
    return True


def png_stream(path: Path) -> tuple[int, int, bytes] | None:
    """(width, height, IDAT data) of an 8-bit RGB, non-interlaced PNG file; None for any other file."""
    read = png_chunks(path)
    return None if read is None else (read[0], read[1], b"".join(read[2]))


def png_chunks(path: Path) -> tuple[int, int, list[rl.Buffer]] | None:
    """(width, height, IDAT chunks' data, views of the file read once) of an 8-bit RGB, non-interlaced PNG file;
    None for any other file."""
    try:
        data = memoryview(path.read_bytes())
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    at, width, height, idat = 8, 0, 0, list[rl.Buffer]()
    while at + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, colour, interlace) != (8, 2, 0):
                return None
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        at += 12 + length
    return (width, height, idat) if width and idat else None


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of an 8-bit RGB, non-interlaced PNG file, from its header (IHDR comes first); None for
    any other file."""
    try:
        with path.open("rb") as handle:
            head = handle.read(33)
    except OSError:
        return None
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", head[16:29])
    return (width, height) if (depth, colour, interlace) == (8, 2, 0) and width and height else None


def _embed(pdf: Any, name: str, drawn: str, images: ImageFiles) -> bool:
    """Register the image XObject `name` of a file once per document; False when reportlab cannot be
    asked to (its internals changed: the caller draws the file with `drawImage` instead).

    An 8-bit RGB PNG is embedded with its own compressed data (`png_stream`, read only when the document is
    written: reportlab would otherwise hold every card's data until then, beside the file it builds in
    memory), and a PNG with transparency
    with the streams the render workers made of it (`MaskedImage`): `Canvas.drawImage` always decodes and
    compresses the file, which is most of a PDF's writing time. Any other file is read by reportlab's image
    object, with a soft mask for transparency, as `drawImage` does. reportlab's internals are reached through
    `reportlab_compat`; tests check the embedded pixels equal the cards.
    """
    try:
        reg_name = rl.xobject_name(pdf, name)
        if rl.is_registered(pdf, reg_name):
            return True
        pixels, mask = _pixels(name, drawn, images), None
        if pixels is None:
            image, mask = rl.picture_image(name, drawn)
        elif pixels.png:
            image = rl.png_image(name, pixels.width, pixels.height, pixels.rgb)
        else:
            image = rl.flate_image(name, "DeviceRGB", pixels.width, pixels.height, b"".join(pixels.rgb()))
            if pixels.alpha:
                mask = rl.flate_image(f"{name}-alpha", "DeviceGray", pixels.width, pixels.height, pixels.alpha)
        image.name = name
        rl.register_image(pdf, image, reg_name)
        if mask is not None:
            rl.attach_soft_mask(pdf, image, mask)
    except (AttributeError, ImportError):
        return False
    return True


@dataclass(frozen=True)
class _Pixels:
    """An image embedded with streams cardgen made: its pixel size, its RGB stream's pieces (given when the document
    is written: the IDAT chunks of an 8-bit RGB PNG, `png`, or Flate data) and its alpha's (Flate, empty when
    opaque)."""

    width: int
    height: int
    rgb: Callable[[], list[rl.Buffer]]
    png: bool
    alpha: bytes = b""


def _pixels(name: str, drawn: str, images: ImageFiles) -> _Pixels | None:
    """How the image `name` of the file `drawn` is embedded (see `_embed`); None for a picture reportlab reads."""
    size = images.opaque_png(name, drawn) or (png_size(Path(drawn)) if drawn.lower().endswith(".png") else None)
    if size is not None:
        return _Pixels(*size, functools.partial(images.idat, name, size), png=True)
    masked = images.masked(name, drawn)
    if masked is None:
        return None
    width, height, rgb, alpha = masked
    return _Pixels(width, height, lambda: [rgb], png=False, alpha=alpha)


def _draw_page(pdf, page: Page, images: ImageFiles) -> bool:
    """Draw a page's card images and lines; False when an image was drawn by reportlab's own `drawImage`."""
    embedded = True
    for slot in page.slots:
        pdf.saveState()
        if slot.clip != slot.image_rect:
            clip = pdf.beginPath()
            clip.rect(*_pt(slot.clip.x, slot.clip.y, slot.clip.w, slot.clip.h))
            pdf.clipPath(clip, stroke=0, fill=0)
        x, y, width, height = _pt(slot.image_rect.x, slot.image_rect.y, slot.image_rect.w, slot.image_rect.h)
        name, drawn = images(slot.image)
        if _embed(pdf, name, drawn, images):
            # As drawImage places an image: the unit square scaled to the box. One matrix, the operator reportlab
            # writes for a translation and a scaling (it joins the two by parsing the first back: ~20 us a slot).
            pdf.transform(width, 0, 0, height, x, y)
            pdf.doForm(name)
        else:
            pdf.drawImage(drawn, x, y, width, height, mask="auto")
            embedded = False
        pdf.restoreState()
    pdf.setLineWidth(MARK_WIDTH_PT)
    pdf.setStrokeColorRGB(0, 0, 0)
    for line in page.marks:
        pdf.line(*_pt(line.x1, line.y1, line.x2, line.y2))
    pdf.setStrokeColorRGB(0.45, 0.45, 0.45)
    for line in page.cut_lines:
        pdf.line(*_pt(line.x1, line.y1, line.x2, line.y2))
    if page.fold:
        pdf.setDash(4, 3)
        pdf.line(*_pt(page.fold.x1, page.fold.y1, page.fold.x2, page.fold.y2))
        pdf.setDash()
    return embedded


def _draw_footer(pdf, page: Page, text: str) -> None:
    """The footer, shrunk to fit its strip of margin (and shortened if even that is not enough)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    slot = page.footer
    if slot is None:
        return
    rect = slot.rect
    length, thickness = (rect.h, rect.w) if slot.vertical else (rect.w, rect.h)
    length_pt, thickness_pt = mm_to_pt(length) - 2, mm_to_pt(thickness)
    size = min(FOOTER_MAX_PT, thickness_pt / 0.95)
    size = max(FOOTER_MIN_PT, min(size, size * length_pt / max(stringWidth(text, _FOOTER_FONT, size), 1e-6)))
    while len(text) > 8 and stringWidth(text, _FOOTER_FONT, size) > length_pt:
        text = text[:-2] + "…"
    pdf.setFillColorRGB(0.3, 0.3, 0.3)
    pdf.setFont(_FOOTER_FONT, size)
    if slot.vertical:
        # Rotated a quarter turn: reads bottom to top, glyphs rise to the left of the baseline.
        pdf.saveState()
        pdf.translate(mm_to_pt(rect.x + rect.w / 2) + size * 0.35, mm_to_pt(rect.y + rect.h / 2))
        pdf.rotate(90)
        pdf.drawCentredString(0, 0, text)
        pdf.restoreState()
    else:
        pdf.drawCentredString(mm_to_pt(rect.x + rect.w / 2), mm_to_pt(rect.y + rect.h / 2) - size * 0.35, text)


def _pt(*values: float) -> list[float]:
    return [mm_to_pt(v) for v in values]


class PrintStage(Stage[PrintSpec]):
    """`print/<game>-<paper>.pdf` for each paper of the manifest's `print:` section, and again each PDF made
    earlier with `cardgen print` into that folder (see `kept_prints`)."""

    name = "print"
    while_drawing = True  # each card image is waited for where it is drawn

    def card_work(self, game: Game, record: BuildRecord, out_root: Path) -> dict[str, CardWork]:
        """The streams of each image with transparency (tokens, boards; see `MaskedImage`), and the JPEG of
        each card image when a print of the manifest asks for JPEG images (opaque PNG images need no work:
        their own data is embedded)."""
        work: dict[str, CardWork] = {}
        # the cards of the decks of tokens and boards (a card's kind is its deck's), by the decks' lists shared with
        # the other stages (`cards_by_deck`): not a Python step over each of 10,000 cards an edit (~1.5 ms)
        by_deck = cards_by_deck(record.cards, record.game.name)
        see_through = {card.hash for deck, cards in by_deck.items() if record.decks[deck].kind != "card"
                       for card in cards}
        see_through |= {b.hash for b in record.backs.values() if record.decks[b.deck].kind != "card"}
        for key in see_through:
            if not (masked := MaskedImage(out_root, key)).cache.has(masked.entry):
                work[key] = masked
        spec = self.config  # every paper's PDF has the same images
        for quality in [spec.jpeg_quality] if spec.images == "jpeg" else []:
            for key in record.image_hashes().values():
                if key not in see_through and not (jpeg := PrintJPEG(out_root, key, quality)).cache.has(jpeg.entry):
                    work[key] = jpeg
        return work

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write the print PDFs; what does not fit the paper comes back as warnings."""
        game = ctx.game  # (its sheet layouts as its load read them: the outputs are keyed by that, `Game.read_as`)
        usual = self.config.per_paper(game.root, game.read_as)
        own = {pdf_name(game.name, options, usual): options for options in usual}
        # During a build out_dir is a staging folder; the previous build's files are at the final place.
        kept = read_kept(ctx.final_dir / "print", game.root, game.read_as)
        kept = {name: options for name, options in kept.items() if name not in own}
        warnings: list[str] = []
        for name, options in {**own, **kept}.items():
            warnings += write_print_pdf(ctx.record, ctx.out_dir, options, ctx.out_dir / "print" / name,
                                        previous=ctx.previous, wait=ctx.wait_for, helpers=ctx.helpers).warnings
        write_kept(ctx.out_dir / "print", kept)
        return [Problem(w, file=manifest_file(ctx.game), severity="warning") for w in dict.fromkeys(warnings)]

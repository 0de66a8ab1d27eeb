"""The incremental update of a print PDF file (ISO 32000-1, 7.5.6 "Incremental Updates").

When an edit changes only card images of a file (the same pages, slots, marks and footers), the file is not drawn
again: a copy of the file the last build wrote gets a new revision appended, the new image objects under the
object numbers of the images they replace, an xref section of them and a trailer pointing to the previous one
(/Prev). Pages, content streams and resources stay as they were: a page draws the new image by the old name.

What the last write of a file left (`Written`: the object numbers of each image, the trailer, the file's size,
time and the digest of its end) is kept beside its pages (`KeptByGame`, key `FILE_KEY`), so that a revision is
appended only to the exact file that write made; any other file is written whole.

Hand-written, not pypdf's `PdfWriter(path, incremental=True)`: pypdf reads the whole file into memory and parses
it, which on the 87 MB file of a 1,000-card game took 0.6-1.0 s, more than drawing the file whole again from its
kept pages (~0.35 s). Here the file is copied in the kernel (`copy_file_range`: ~28 ms for 87 MB on ext4, a
reflink on file systems that share blocks) and the few new objects are written after it. Not appended in place:
readers take the last `startxref`, so an append cut short would leave a corrupt file; the copy is renamed into
place whole (`write_atomic`).

The new images' objects are formatted here too (`image_object`), as reportlab formats them, so that an update of
images cardgen drew does not import reportlab's canvas (~30 ms of a whole-command edit); a picture reportlab reads
itself (a print of JPEG images) is formatted by it (`pdf._revision_by_reportlab`).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, get_origin, get_type_hints

from cardgen.core.storage import AHEAD_FOLDER as AHEAD_FOLDER  # (the print's copy made ahead: pdf.py)
from cardgen.core.storage import clone, take_ahead, write_atomic
from cardgen.core.storage import copy_ahead as storage_copy_ahead

FILE_KEY = "file"  # its key among the kept pages (theirs are hex digests)
GROWTH_AT_MOST = 0.3  # the revisions' bytes, as a share of the file last written whole; then it is written whole
REVISIONS_AT_MOST = 64  # a reader follows every /Prev: a longer chain is written whole (0: never update)
TAIL_BYTES = 4096  # the end of a file whose digest is kept: its last xref section and trailer

_TRAILER = re.compile(rb"trailer\s*<<(.*?)>>\s*startxref\s+(\d+)\s+%%EOF\n\Z", re.DOTALL)
_ENTRIES = re.compile(rb"/ID\s*\[\s*<[0-9a-fA-F]*>\s*<[0-9a-fA-F]*>\s*\]|/(?:Root|Info)\s+\d+\s+0\s+R|/Size\s+\d+")


@dataclass(frozen=True)
class Written:
    """What the last write of a print file made: enough to append a revision to that very file."""

    layout: str  # the hash of everything its content streams and resources hold (see `pdf._layout_key`)
    names: list[str]  # the image name drawn in each slot, page after page
    objects: dict[str, list[int]]  # by image name: its pixel width and height, object number, soft mask's (or 0)
    trailer: str  # the trailer's /ID, /Info, /Root and /Size, as the file says them
    startxref: int  # where its last xref section starts
    size: int
    mtime_ns: int
    tail: str  # the digest of its last TAIL_BYTES
    base: int  # its size when last written whole
    revisions: int = 0  # appended since

    @classmethod
    def of(cls, kept: Any) -> Written | None:
        """The state kept beside a file's pages; None when there is none or it is not one (written whole then). One
        this process kept (`as_kept`) is taken as it is; one read from the cache is checked, its every name and
        number (~2,700 checks an edit at 1,000 cards)."""
        if isinstance(kept, _Kept):
            return kept.written
        hints = get_type_hints(cls)
        if not (isinstance(kept, dict) and kept.keys() == hints.keys()
                and all(isinstance(kept[key], get_origin(kind) or kind) for key, kind in hints.items())):
            return None
        if not (all(isinstance(name, str) for name in kept["names"]) and all(
                isinstance(where, list) and len(where) == 4 and all(isinstance(n, int) for n in where)
                for where in kept["objects"].values())):
            return None
        return cls(**kept)

    def as_kept(self) -> dict[str, Any]:
        """The state as it is kept (JSON): its lists shared, not copied (`asdict` copied each image's numbers, ~10 ms
        an edit at 1,000 cards); neither is changed once made."""
        kept = _Kept({field.name: getattr(self, field.name) for field in fields(self)})
        kept.written = self
        return kept

    def replacements(self, layout: str, names: list[str]) -> dict[str, str] | None:
        """Which image replaces which (old name: new name) when the file to write differs from this one only in
        images, each of its own (None otherwise: it is written whole).

        An old image still drawn elsewhere in the file (reportlab embeds identical images once: two cards that
        look the same) or a new one drawn there already cannot take the other's object; copies of one card share
        an object, which is replaced for all of them.
        """
        if layout != self.layout or len(names) != len(self.names):
            return None
        pairs = {(old, new) for old, new in zip(self.names, names) if old != new}
        olds, news = {old for old, _ in pairs}, {new for _, new in pairs}
        if not pairs or len(olds) != len(pairs) or len(news) != len(pairs):
            return None
        if olds & set(names) or news & set(self.names) or not olds <= self.objects.keys():
            return None
        return dict(pairs)

    def may_grow(self, appended: int) -> bool:
        """Whether a revision of `appended` bytes keeps the file within the bounds (see GROWTH_AT_MOST)."""
        return (self.revisions < REVISIONS_AT_MOST
                and self.size + appended - self.base <= GROWTH_AT_MOST * self.base)

    def is_file(self, path: Path) -> bool:
        """Whether `path` is still the file this write made: its size and time, and the digest of its end."""
        try:
            state = path.stat()
        except OSError:
            return False
        return (state.st_size, state.st_mtime_ns) == (self.size, self.mtime_ns) and _tail(path) == self.tail


class _Kept(dict[str, Any]):
    """A file's state as `Written.as_kept` keeps it (JSON in the cache), with the `Written` it was made of: what the
    next build in this process takes as it is (`Written.of`)."""

    written: Written


def written_whole(path: Path, layout: str, names: list[str], objects: dict[str, list[int]]) -> Written | None:
    """The state of a file reportlab has just written whole at `path`; None when its end is not the trailer
    cardgen knows how to follow (no revision is appended to it then)."""
    end = _end(path)
    found = _TRAILER.search(end)
    entries = _ENTRIES.findall(found[1]) if found is not None else []
    if found is None or len(entries) != 4:
        return None
    state = path.stat()
    return Written(layout, names, objects, b" ".join(sorted(entries)).decode("latin-1"), int(found[2]),
                   state.st_size, state.st_mtime_ns, _digest(end), state.st_size)


def append_revision(base: Path, target: Path, written: Written, names: list[str], objects: dict[str, list[int]],
                    formatted: Callable[[], dict[int, bytes] | None]) -> Written | None:
    """Write at `target` (atomically) a copy of `base`, the file `written` describes, with a revision: the objects
    `formatted()` gives (their bytes, by object number), an xref section of them and a trailer. Its state, the file
    now drawing `names` with `objects`; None, with nothing written, when the copy is not the file `written` says or
    `formatted()` gives None.

    `formatted` is asked once the copy is made: it may wait for the new images, while a command that builds once
    copies the file (~7 ms of CPU for the 26 MB print of an example game, after the edited card otherwise)."""
    made: list[dict[int, bytes]] = []

    def write(temp: Path) -> None:
        if not _take_ahead(base, written, temp):
            with base.open("rb") as source, temp.open("wb") as handle:
                clone(source, handle)
        if not written.is_file(base) or temp.stat().st_size != written.size or _tail(temp) != written.tail:
            raise _NotTheFile
        revision = formatted()
        if revision is None:
            raise _NotTheFile
        made.append(revision)
        with temp.open("ab") as handle:
            handle.write(_revision(written, revision))

    try:
        write_atomic(target, write)
    except _NotTheFile:
        return None
    state = target.stat()
    return replace(written, names=names, objects=objects, startxref=written.size + _xref_at(made[0]),
                   size=state.st_size, mtime_ns=state.st_mtime_ns, tail=_tail(target), revisions=written.revisions + 1)


def copy_ahead(path: Path, written: Written, folder: Path) -> None:
    """Copy the file `written` describes, at `path`, into `folder` for its next update (`storage.copy_ahead`: a
    watch does it while it waits for the next save; the update then takes the copy in place of copying the file,
    ~28 ms for 87 MB, at 1,000 cards and any size above)."""
    storage_copy_ahead(path, _copied(written), folder, lambda: written.is_file(path))


def _take_ahead(path: Path, written: Written, temp: Path) -> bool:
    """Put at `temp` the copy made ahead of the file `written` describes at `path` (`storage.take_ahead`)."""
    return take_ahead(path, _copied(written), temp)


def _copied(written: Written) -> tuple:
    """What tells one state of a print file from another (see `Written.is_file`)."""
    return written.size, written.mtime_ns, written.tail


def image_object(number: int, width: int, height: int, colours: str, stream: bytes, png: bool = False,
                 mask: int = 0) -> bytes:
    """The indirect object `number` of an 8-bit image XObject of Flate data (`png`: the rows of an RGB PNG, with
    the /DecodeParms they need), its soft mask the object `mask` (0: none), byte for byte as reportlab formats the
    images cardgen embeds (`reportlab_compat.png_image` and `flate_image`; tests/test_print_update.py compares)."""
    return b"".join(image_pieces(number, width, height, colours, [stream], png, mask))


def image_pieces(number: int, width: int, height: int, colours: str, stream: list[bytes | memoryview],
                 png: bool = False, mask: int = 0) -> list[bytes | memoryview]:
    """`image_object`'s bytes in pieces, its stream's pieces (a PNG's IDAT chunks) as they are given: not joined."""
    entries = {"BitsPerComponent": b"8", "ColorSpace": b"/" + colours.encode(), "Height": b"%d" % height,
               "Length": b"%d" % sum(map(len, stream)), "Subtype": b"/Image", "Type": b"/XObject",
               "Width": b"%d" % width, "Filter": b"/FlateDecode" if png else b"[ /FlateDecode ]"}
    if png:
        entries["DecodeParms"] = _dictionary({"BitsPerComponent": b"8", "Colors": b"3", "Columns": b"%d" % width,
                                              "Predictor": b"15"})
    if mask:
        entries["SMask"] = b"%d 0 R" % mask
    return [b"%d 0 obj\n%s\nstream\n" % (number, _dictionary(entries)), *stream, b"endstream\nendobj\n"]


def _dictionary(entries: dict[str, bytes]) -> bytes:
    """A PDF dictionary as reportlab's `PDFDictionary.format` writes one: keys sorted, a line break every six."""
    items = [b"/%s %s" % (key.encode(), entries[key]) for key in sorted(entries)]
    for at in reversed(range(6, len(items), 6)):
        items.insert(at, b"\n ")
    return b"<<\n%s\n>>" % b" ".join(items)


class _NotTheFile(Exception):
    """The file to append to is not the one the last write made (changed since), or no revision can be made."""


def _revision(written: Written, formatted: dict[int, bytes]) -> bytes:
    """The bytes appended: the objects, their xref section (one subsection per run of numbers) and the trailer.

    The section starts with object 0, the head of the free list, as the first section does: a reader may take a
    section that starts elsewhere for a broken one (pypdf warns so).
    """
    offset, lines, run = written.size, [b"xref\n0 1\n0000000000 65535 f \n"], []
    numbers = sorted(formatted)
    for number in numbers:
        run.append(b"%010d 00000 n \n" % offset)  # the entries' 20 bytes, as reportlab writes them
        offset += len(formatted[number])
        if number + 1 not in formatted:
            lines += [b"%d %d\n" % (number - len(run) + 1, len(run)), *run]
            run = []
    trailer = b"trailer\n<< %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (
        written.trailer.encode("latin-1"), written.startxref, written.size + _xref_at(formatted))
    return b"".join([*(formatted[n] for n in numbers), *lines, trailer])


def _xref_at(formatted: dict[int, bytes]) -> int:
    """Where a revision's xref section starts, from the end of the file it is appended to."""
    return sum(len(data) for data in formatted.values())


def _end(path: Path) -> bytes:
    """A file's last TAIL_BYTES."""
    with path.open("rb") as handle:
        handle.seek(max(0, handle.seek(0, os.SEEK_END) - TAIL_BYTES))
        return handle.read()


def _tail(path: Path) -> str:
    """The digest of a file's last TAIL_BYTES."""
    return _digest(_end(path))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]

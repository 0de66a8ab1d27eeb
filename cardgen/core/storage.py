"""Files on disk, written so that nothing is ever half-written: atomic writes, digests, links, folder swaps
and the content-addressed caches under `<output root>/.cache/<kind>/`.

Every file cardgen writes goes through a temporary name in the same folder and a rename, so an
interrupted build leaves either the old file or the new one, never a torn one. Every cache path is
made by `Cache`; no other module builds one by hand.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import itertools
import json
import operator
import os
import shutil
import struct
import tempfile
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG
from typing import Any, BinaryIO, Callable, Hashable, Iterable, Iterator, NamedTuple, Sequence, TypeVar

CACHE_DIR = ".cache"

T = TypeVar("T")
K = TypeVar("K")
_UMASK = os.umask(0)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK  # the mode of every file cardgen writes, as of any file made by the user's tools


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write a file through a temporary name in the same folder, then rename it into place.

    `write(temp)` writes the content to the temporary path; when it raises, the temporary file is
    removed and `path` is left as it was.
    """
    try:
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:  # its folder is made only now: asking for it before every write cost ~0.25 ms each
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        os.chmod(temp, FILE_MODE)  # mkstemp makes files private; outputs should be like any other file
        write(Path(temp))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# From this size a file is put in place of another by swapping the two (`exchange`), not renamed over it: writing out
# a smaller one costs the rename little.
EXCHANGE_FROM = 1 << 20
_RENAME_EXCHANGE = 2  # renameat2's flag (linux/fs.h)
_AT_FDCWD = -100


def exchange(source: Path, target: Path) -> bool:
    """Swap two files in one atomic step (Linux's `renameat2` with RENAME_EXCHANGE): `target` then holds the file
    `source` held, and `source` the file `target` was; readers of `target` see one or the other, never nothing.
    False, and nothing done, where the system cannot (not Linux, a C library or kernel without it, a file system
    that refuses it): the caller renames instead.

    Why not a rename over `target`: ext4 (its default `auto_da_alloc`) writes out the data of a file renamed over
    another before the rename returns, ~55 ms for a 70 MB print file just copied, in every edit; it does not for
    a swap."""
    swap = _renameat2()
    if swap is None:
        return False
    return swap(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE) == 0


@lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    """The C library's `renameat2`, or None where there is none."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # glibc before 2.28, another C library without it
        return None
    return function


def write_bytes(path: Path, data: bytes) -> None:
    """Write bytes atomically."""
    write_atomic(path, lambda temp: temp.write_bytes(data))


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    write_atomic(path, lambda temp: temp.write_text(text, encoding="utf-8"))


# A process that builds again (`builds_again`) writes build.json, index.html and the TTS save at every edit from
# mostly the same pieces (one card's JSON, figure, objects: `record.kept_piece`), 16-39 MB each at 10,000 cards. It
# notes where each piece of at least SPLICED_PIECE bytes went in the file it wrote (`_Spliced`, by the file's
# identity: a rename into place keeps it), and the next write of that file copies the unchanged pieces' bytes from
# it in the kernel (`copy_file_range`, consecutive pieces in one copy) and writes only the new ones: no Python-side
# join or write of 39 MB, and the bytes are the same as written whole. Only from a file of at least SPLICE_FROM
# bytes (a small game's files are written whole, as cheap), and only when the file is still as written: its size,
# modification time and the digest of its end (`SPLICE_TAIL` bytes), else it is written whole.
SPLICE_FROM = 1 << 20
SPLICED_PIECE = 256  # a shorter piece (a separator, a key) is kept by its offset and compared by value
SPLICE_TAIL = 4096
SPLICED_FILES = 32  # the files remembered, latest first kept: 3 a game


class Run:
    """Consecutive parts of a file that `write_spliced` takes as one part: a run the process wrote before (the same
    object) is copied from the previous file in one range, its parts not looked at one by one (see `KeptRuns`).
    With a `pad` (JSON_PAD, HTML_PAD), written padded (see `padding`)."""

    __slots__ = ("parts", "pad")

    def __init__(self, parts: tuple[bytes | str | Run, ...], pad: Pad | None = None) -> None:
        self.parts, self.pad = parts, pad


# A run's pad: what opens and closes it, spaces between. A block of cards padded, a card's text made a little longer
# leaves the block's length, and the offsets of all that follows, as they were: a watch's edit then patches a copy
# of the file in place (`write_spliced`). The pad is a function of the run's length only, so a build that writes the
# file whole writes the same bytes. Where it goes the format must take it: whitespace between JSON values, a
# comment between HTML elements (never text, which a layout might show).
Pad = tuple[bytes, bytes]
JSON_PAD: Pad = (b"", b"")
HTML_PAD: Pad = (b"<!--", b"-->")
PAD_SHARE = 64  # a run is padded up to a multiple of a power of two of at least 1/PAD_SHARE of its length


def padding(length: int, pad: Pad) -> bytes:
    """The pad after a run of `length` bytes: up to a multiple of the power of two of at least `length`/PAD_SHARE
    (64 bytes at the least): ~0.8% of the run on average."""
    opening, closing = pad
    unit = 1 << max(6, (length // PAD_SHARE).bit_length())
    return opening + b" " * (-(length + len(opening) + len(closing)) % unit) + closing


# A process that builds again writes most of those files' parts from the same items (the cards' entries, a sheet's
# objects) at every edit: `KeptRuns` keeps the parts made of a block of consecutive items as one `Run`, by the items'
# identities (held, so no other object takes their ids), so an edit makes, and the splice looks up, a run a block of
# cards (RUN_ITEMS) but in the blocks holding a changed card. A writer's runs of the last write only.
RUN_ITEMS = 64
_RUNS: dict[Hashable, dict[tuple, tuple[tuple, Any]]] = {}


def blocks(items: Sequence[T]) -> Iterator[tuple[int, Sequence[T]]]:
    """The items in blocks of RUN_ITEMS (the last one shorter), each with its first item's place."""
    for start in range(0, len(items), RUN_ITEMS):
        yield start, items[start:start + RUN_ITEMS]


def changed_places(items: Sequence[object], last: Sequence[object]) -> list[int] | None:
    """The places where `items` holds another object than `last` (by C loops: no item looked at), None when their
    lengths differ."""
    if len(items) != len(last):
        return None
    return list(itertools.compress(itertools.count(), map(operator.is_not, items, last)))


class KeptRuns:
    """The runs of one file's writing (`runs`), kept for its next write by `keep` (in a process that builds again)."""

    def __init__(self, writer: Hashable, pad: Pad | None = None) -> None:
        self.writer, self.pad = writer, pad
        self.keeping = builds_again()
        self.kept = _RUNS.get(writer, {}) if self.keeping else {}
        self.used: dict[tuple, tuple[tuple, Any]] = {}

    def run(self, kind: Hashable, items: Sequence[object], make: Callable[[], Iterable[bytes | str | Run]],
            keep: Callable[[Run], bool] = lambda run: True) -> Run:
        """The parts `make` makes of the items (`kind` is all else they depend on) as one `Run`: in a process that
        builds again, the same one as the last write's for the same items (when `keep` says so of the run made);
        padded with the writer's pad."""
        return self.made(kind, items, lambda: Run(tuple(make()), self.pad), keep)

    def joined(self, kind: Hashable, items: Sequence[object], make: Callable[[], Iterable[bytes]]) -> bytes:
        """The parts `make` makes of the items, joined (as `run`, for short parts: a hash's)."""
        return self.made(kind, items, lambda: b"".join(make()))

    def made(self, kind: Hashable, items: Sequence[object], make: Callable[[], T],
             keep: Callable[[T], bool] = lambda made: True, take: Callable[[T], bool] = lambda last: True) -> T:
        """What `make` makes of the items, the last write's for the same items and kind when `take` says yes to it
        (kept for the next write when `keep` says yes to what it made)."""
        key = (kind, *map(id, items))
        kept = self.kept.get(key)
        if kept is not None and take(kept[1]):  # (kept whole for the next write: no key or tuple made again)
            if self.keeping:
                self.used[key] = kept
            return kept[1]
        made = make()
        if keep(made):
            self.put(kind, items, made)
        return made

    def last(self, kind: Hashable, items: Sequence[object]) -> Any:
        """What the last write made of the items and kind (None if nothing)."""
        kept = self.kept.get((kind, *map(id, items)))
        return kept[1] if kept is not None else None

    def put(self, kind: Hashable, items: Sequence[object], made: object) -> None:
        """Keep what this write made of the items and kind for the next one."""
        if self.keeping:
            self.used[(kind, *map(id, items))] = (tuple(items), made)

    def keep(self) -> None:
        """Keep the runs of this write (only) for the next one."""
        if self.keeping:
            _RUNS[self.writer] = self.used
        else:
            _RUNS.pop(self.writer, None)


# What a process that builds again derived from a list of items place by place (a dict of the cards' images, the
# cards of each deck, the runs of a file's blocks of cards), kept by kind with the items it was made of: the next
# list's is made from it by patching the places whose item is another object (`changed_places`: C loops, no item
# looked at), not by a pass over every item (each ~1-5 ms an edit at 10,000 cards). The latest DERIVED_AT_MOST.
_DERIVED: dict[Hashable, tuple[list[Any], Hashable, Any]] = {}
_DERIVED_LOCK = threading.Lock()  # (the output stages derive in their threads)
DERIVED_AT_MOST = 64


def derived(kind: Hashable, items: Sequence[K], basis: Hashable, whole: Callable[[], T],
            patched: Callable[[T, list[K], list[int] | None], T | None]) -> T:
    """What `whole` makes of the items and `basis` (all else it reads, compared by value); in a process that builds
    again, when the last call of this kind had the same basis, `patched(last made, last items, changed places)`
    (places None: another length) makes it from the last call's instead (None when it cannot: then `whole`). What
    was made is never changed: `patched` makes a new one."""
    last = _DERIVED.get(kind) if builds_again() else None
    made = None
    if last is not None and last[1] == basis:
        made = patched(last[2], last[0], changed_places(items, last[0]))
    if made is None:
        made = whole()
    if builds_again():
        with _DERIVED_LOCK:
            keep_latest(_DERIVED, kind, (list(items), basis, made), DERIVED_AT_MOST)
    return made


def kept_blocks(kind: Hashable, items: Sequence[K], basis: Hashable, make: Callable[[int, Sequence[K]], T]
                ) -> list[T]:
    """What `make(start, block)` makes of each block of RUN_ITEMS items (see `blocks`); in a process that builds
    again, the last call's (`derived`) but for the blocks holding a changed place and (items added or removed) the
    blocks from the first place that differs on."""
    def whole() -> list[T]:
        return [make(start, block) for start, block in blocks(items)]

    def patched(made: list[T], last: list[K], places: list[int] | None) -> list[T]:
        if places is None:  # (the blocks before the first place that differs are the same)
            first = next(itertools.compress(itertools.count(), map(operator.is_not, items, last)),
                         min(len(items), len(last)))
            made, places = made[:first // RUN_ITEMS], []
        redo = {place // RUN_ITEMS for place in places}
        return [made[number] if number < len(made) and number not in redo else
                make(start, items[start:start + RUN_ITEMS]) for number, start in enumerate(range(0, len(items),
                                                                                                 RUN_ITEMS))]

    return derived(kind, items, basis, whole, patched)


@dataclass
class _Spliced:
    """Where the pieces of a file written by `write_spliced` lie: the file's size, time and digest of its end, and
    each piece's offset and length in bytes (the long ones by identity, the short ones by offset)."""

    size: int
    mtime_ns: int
    tail: bytes
    pieces: dict[int, tuple[bytes | str | Run, int, int]]  # id(piece) -> the piece, its offset, its length
    short: dict[int, tuple[bytes | str | Run, int]]  # offset -> the piece, its length


_SPLICED: dict[tuple[int, int], _Spliced] = {}
_SPLICED_LOCK = threading.Lock()


def write_spliced(path: Path, parts: Iterable[bytes | str | Run], previous: Path | None = None,
                  out_root: Path | None = None) -> None:
    """Write a file of the parts (text as UTF-8) atomically; in a process that builds again, from the file
    `previous` (default `path`) where this process wrote it last: the parts it holds are copied from it, not
    written again (see `_Spliced`); given the output root `out_root`, that file is copied ahead once the build has
    reported, and the next write patches the copy (see `_patch`)."""
    source = previous or path

    def write(temp: Path) -> None:
        if not builds_again():
            with open(temp, "wb") as handle:
                for part in parts:
                    _write_part(handle, part)
            return
        try:
            old = open(source, "rb")  # noqa: SIM115 (closed below; the rename keeps it readable)
        except OSError:
            old = None
        try:
            state = os.fstat(old.fileno()) if old is not None else None
            written = _spliced(old, state) if old is not None and state is not None else None
            done.append(_patched_or_spliced(source, parts, temp, old, state, written))
        finally:
            if old is not None:
                old.close()
        if state is not None:  # the file it replaces, written whole or not, is no longer spliced from
            with _SPLICED_LOCK:
                _SPLICED.pop((state.st_dev, state.st_ino), None)

    done: list[_Spliced] = []
    write_atomic(path, write)
    if done and _remember_spliced(path, done[0]):
        if source != path and _REHEARSING.is_set():
            _adopt(source, path, done[0])
        if out_root is not None:
            after_rebuild(functools.partial(_spliced_ahead, source, cache_root(out_root) / AHEAD_FOLDER))


def _patched_or_spliced(source: Path, parts: Iterable[bytes | str | Run], temp: Path, old: BinaryIO | None,
                        state: os.stat_result | None, written: _Spliced | None) -> _Spliced:
    """Write the parts at `temp`: into the copy of `old` made ahead where there is one (`_patch`), else spliced from
    `old` (`_splice`); where each part went."""
    if old is not None and state is not None and written is not None and \
            take_ahead(source, _spliced_key(state, written), temp):
        parts = list(parts)  # (taken again, should the patch give up)
        patched = _patch(parts, temp, old, written)
        if patched is not None:
            return patched
    with open(temp, "wb") as handle:
        return _splice(parts, handle, old, written)


def _spliced(old: BinaryIO, state: os.stat_result) -> _Spliced | None:
    """What this process wrote into an open file, if the file is still as written."""
    with _SPLICED_LOCK:
        written = _SPLICED.get((state.st_dev, state.st_ino))
    if written is None or (state.st_size, state.st_mtime_ns) != (written.size, written.mtime_ns):
        return None
    handle = old.fileno()
    start = max(0, written.size - SPLICE_TAIL)
    return written if hashlib.sha256(os.pread(handle, SPLICE_TAIL, start)).digest() == written.tail else None


def _spliced_key(state: os.stat_result, written: _Spliced) -> tuple:
    """What tells one state of a spliced file from another: its device and inode, size, time and digest of its end."""
    return state.st_dev, state.st_ino, written.size, written.mtime_ns, written.tail


def _spliced_ahead(path: Path, folder: Path) -> None:
    """Copy the file this process spliced at `path` into `folder` for its next write (`copy_ahead`), if it is still
    as written."""
    def key() -> tuple | None:
        try:
            with open(path, "rb") as handle:
                state = os.fstat(handle.fileno())
                written = _spliced(handle, state)
        except OSError:
            return None
        return _spliced_key(state, written) if written is not None else None

    now = key()
    if now is not None:
        copy_ahead(path, now, folder, lambda: key() == now)


def _splice(parts: Iterable[bytes | str | Run], handle: BinaryIO, old: BinaryIO | None, written: _Spliced | None
            ) -> _Spliced:
    """Write the parts into `handle`, copying from `old` those `written` says it holds; where each part went."""
    splicer = _Splicer(handle, old, written, _copy_range)
    splicer.add(parts)
    _copy_range(old, handle, splicer.start, splicer.end)
    handle.flush()
    return _Spliced(splicer.offset, 0, b"", splicer.pieces, splicer.short)


# A watch's edit changes a card or two of 10,000: the file it writes is the last one but for those cards' pieces,
# and, where a piece's length changed, the pieces after it in its run (the run's pad takes up the change: `padding`).
# Such a file is written by patching a copy of the last one made ahead (`copy_ahead`), not spliced into a new file
# (~90 MB copied in the kernel an edit at 10,000 cards): each piece the copy holds at its place is left there, one it
# holds elsewhere is copied there, a new one written there. It moves at most MOVED_AT_MOST bytes, else (a card added:
# all after it moves) the file is spliced.
MOVED_AT_MOST = 1 << 22


def _patch(parts: list[bytes | str | Run], temp: Path, old: BinaryIO, written: _Spliced) -> _Spliced | None:
    """Write the parts into `temp`, a copy of `old` (the file `written` describes), where each goes; where each part
    went, or None where that moves too much."""
    with open(temp, "r+b") as handle:
        copy = _Patch()
        splicer = _Splicer(handle, old, written, copy)
        try:
            splicer.add(parts)
            copy(old, handle, splicer.start, splicer.end)
        except _Moved:
            return None
        handle.truncate(splicer.offset)
    return _Spliced(splicer.offset, 0, b"", splicer.pieces, splicer.short)


class _Moved(Exception):
    """A patch would move more than MOVED_AT_MOST bytes."""


class _Patch:
    """The copies of a patch (`_patch`): a range of the old file put where the file being written has it next (where
    it is already: not copied), and the bytes moved."""

    def __init__(self) -> None:
        self.moved = 0

    def __call__(self, source: BinaryIO | None, target: BinaryIO, start: int, end: int) -> None:
        if end <= start:
            return
        at = target.tell()
        if at != start:
            self.moved += end - start
            if self.moved > MOVED_AT_MOST:
                raise _Moved
            _copy_range(source, target, start, end)  # (at the file's place: `at`, its buffer written out)
        target.seek(at + end - start)


class _Splicer:
    """A file being spliced (`_splice`): where its parts went, and the range of the old file to copy next."""

    def __init__(self, handle: BinaryIO, old: BinaryIO | None, written: _Spliced | None,
                 copy: Callable[[BinaryIO | None, BinaryIO, int, int], None]) -> None:
        self.handle, self.old, self.copy = handle, old, copy
        self.pieces: dict[int, tuple[bytes | str | Run, int, int]] = {}
        self.short: dict[int, tuple[bytes | str | Run, int]] = {}
        self.known_pieces = written.pieces if written is not None else {}
        self.known_short = written.short if written is not None else {}
        self.offset = 0
        self.start = self.end = -1  # the range of `old` to copy next, consecutive parts gathered

    def add(self, parts: Iterable[bytes | str | Run]) -> None:
        """Write or copy the parts; a run the old file does not hold, its parts (some of which it may hold).
        (One loop with no call for a part: it ran for each of 20,000-30,000 parts at 10,000 cards.)"""
        handle, old, pieces, short, copy = self.handle, self.old, self.pieces, self.short, self.copy
        known_pieces, known_short = self.known_pieces, self.known_short
        offset, start, end = self.offset, self.start, self.end
        for part in parts:
            known = known_pieces.get(id(part))
            if known is not None and known[0] is part:
                at, length = known[1], known[2]
            elif isinstance(part, Run):
                self.offset, self.start, self.end = offset, start, end
                self.add(part.parts)
                if part.pad is not None:
                    self.add((padding(self.offset - offset, part.pad),))
                length = self.offset - offset
                if length >= SPLICED_PIECE:
                    pieces.setdefault(id(part), (part, offset, length))
                offset, start, end = self.offset, self.start, self.end
                continue
            else:
                near = known_short.get(end)
                at, length = (end, near[1]) if near is not None and near[0] == part else (-1, 0)
            if at < 0:
                if end > start:
                    copy(old, handle, start, end)
                    start = end = -1
                length = _write_part(handle, part)  # (never a run: one not held is taken apart above)
            elif at != end:
                copy(old, handle, start, end)
                start, end = at, at + length
            else:
                end += length
            if length >= SPLICED_PIECE:  # a long part by its identity (the first place, when it is written twice)
                pieces.setdefault(id(part), (part, offset, length))
            else:
                short[offset] = (part, length)
            offset += length
        self.offset, self.start, self.end = offset, start, end


def _write_part(handle: BinaryIO, part: bytes | str | Run) -> int:
    """Write one part (a run, each of its parts); its length in bytes."""
    if isinstance(part, Run):
        length = sum([_write_part(handle, inner) for inner in part.parts])
        return length + (_write_part(handle, padding(length, part.pad)) if part.pad is not None else 0)
    data = part.encode() if isinstance(part, str) else part
    handle.write(data)
    return len(data)


def _copy_range(source: BinaryIO | None, target: BinaryIO, start: int, end: int) -> None:
    """Append bytes `start`-`end` of `source` to `target` in the kernel (through Python where it cannot)."""
    if source is None or end <= start:
        return
    target.flush()
    at = start
    try:
        while at < end:
            copied = os.copy_file_range(source.fileno(), target.fileno(), end - at, at)
            if not copied:
                break
            at += copied
    except (AttributeError, OSError):
        pass
    while at < end:
        chunk = os.pread(source.fileno(), min(end - at, 1 << 20), at)
        if not chunk:
            raise OSError(errno.EIO, "the file to copy from ended early", source.name)
        target.write(chunk)
        at += len(chunk)


def _remember_spliced(path: Path, made: _Spliced) -> bool:
    """Note where the pieces of a file just written lie (nothing for a small file: written whole next time); whether
    it did."""
    with open(path, "rb") as handle:
        state = os.fstat(handle.fileno())
        if state.st_size < SPLICE_FROM or state.st_size != made.size:
            return False
        made.tail = hashlib.sha256(os.pread(handle.fileno(), SPLICE_TAIL, max(0, made.size - SPLICE_TAIL))).digest()
    _note_spliced(state, made)
    return True


def _note_spliced(state: os.stat_result, made: _Spliced) -> None:
    """Note where the pieces of the file of `state` lie (see `_Spliced`)."""
    made.mtime_ns = state.st_mtime_ns
    with _SPLICED_LOCK:  # the stages write theirs in their thread
        _SPLICED[(state.st_dev, state.st_ino)] = made
        while len(_SPLICED) > SPLICED_FILES:
            del _SPLICED[next(iter(_SPLICED))]


# Within `rehearsing`, the pieces a previous file holds where `write_spliced` just wrote them from it, with the same
# bytes, are taken as written by this process (see `_adopt`). A watch rehearses its first rebuild while it waits for
# the first save (`build.warm_up`): the files of the build it started from, written by another process, were
# otherwise written whole at that save (~1 s of CPU at 10,000 cards: the TTS save, build.json), not spliced.
_REHEARSING = threading.Event()


@contextlib.contextmanager
def rehearsing() -> Iterator[None]:
    """Within the block, the builds of this process rehearse (see `_REHEARSING`)."""
    _REHEARSING.set()
    try:
        yield
    finally:
        _REHEARSING.clear()


def _adopt(source: Path, written: Path, made: _Spliced) -> None:
    """Note the file `source` as holding each piece of the file just `written` from the same parts that it holds at
    the same place (`made` says where), as if this process had written it, when the two are of a size: a gallery
    differs from its rehearsal's in its head (when it was built, what changed), a padded run of the same length
    whose cards follow at the same places. Its state is taken before it is read: a write to it since changes its
    time, and the note is then not used (`_spliced`)."""
    import mmap

    try:
        with open(source, "rb") as old, open(written, "rb") as new:
            state = os.fstat(old.fileno())
            if not made.size or state.st_size != made.size:  # (`written` is of that size: `_remember_spliced`)
                return
            with mmap.mmap(old.fileno(), 0, access=mmap.ACCESS_READ) as theirs, \
                    mmap.mmap(new.fileno(), 0, access=mmap.ACCESS_READ) as ours:
                def same(at: int, length: int) -> bool:
                    return theirs[at:at + length] == ours[at:at + length]

                pieces = {key: piece for key, piece in made.pieces.items() if same(piece[1], piece[2])}
                short = {at: piece for at, piece in made.short.items() if same(at, piece[1])}
                tail = hashlib.sha256(theirs[max(0, made.size - SPLICE_TAIL):]).digest()
    except (OSError, ValueError):  # (a file that shrank meanwhile cannot be mapped whole)
        return
    _note_spliced(state, _Spliced(made.size, 0, tail, pieces, short))


# In a process that builds again, copies of files the next build will likely write again, made once a build has
# reported (`copy_ahead`, left by `after_rebuild`: a watch does it while it waits for the next save), which that
# write takes (`take_ahead`) in place of copying the file then: the print file an update appends a revision to
# (`pdf_update`), the spliced files an edit patches in place (`write_spliced`). At most one copy a file, known by the
# file's path and the state it copies (`key`: what tells that file's states apart), and by its own state (device,
# inode, size, modification and change times, the digest of its end: any write to it changes them); kept in this
# process's memory only, and deleted at its exit; a process ended otherwise (killed, its terminal closed) leaves its
# copies, which the next process to make one deletes (`_drop_orphans`: each copy's name holds its process's id).
AHEAD_FOLDER = "ahead"  # in the output root's cache folder
AHEAD_AT_MOST = 8  # copies kept, the oldest deleted first
_AHEAD: dict[Path, tuple[Hashable, Path, tuple]] = {}
_AHEAD_LOCK = threading.Lock()
_AHEAD_DROPPED_AT_EXIT: list[bool] = []


def copy_ahead(path: Path, key: Hashable, folder: Path, unchanged: Callable[[], bool]) -> None:
    """Copy the file at `path` into `folder` for its next write, which takes it by `key` (`take_ahead`), when
    `unchanged()` says the file is still the one `key` names, before the copy and after it; the copy made before of
    that file deleted, unless it is that very copy (two rebuilds' work done in one wait: saves in quick succession)."""
    with _AHEAD_LOCK:
        made = _AHEAD.get(path)
    if made is not None and made[0] == key and _ahead_state(made[1]) == made[2] and unchanged():
        return
    _drop(_pop_ahead(path))
    if not unchanged():
        return
    if not _AHEAD_DROPPED_AT_EXIT:  # a watch stopped leaves no copy behind
        import atexit

        atexit.register(drop_ahead)
        _AHEAD_DROPPED_AT_EXIT.append(True)
        _drop_orphans(folder)
    folder.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=folder, prefix=f"{path.name}.{os.getpid()}.", suffix=".ahead")
    ahead = Path(name)
    try:
        with path.open("rb") as source, open(handle, "wb") as target:
            clone(source, target)
        if not unchanged():  # written to meanwhile
            raise OSError(errno.ESTALE, "changed while it was copied", str(path))
    except BaseException:
        ahead.unlink(missing_ok=True)
        raise
    with _AHEAD_LOCK:
        _AHEAD[path] = (key, ahead, _ahead_state(ahead))
        while len(_AHEAD) > AHEAD_AT_MOST:
            _drop(_AHEAD.pop(next(iter(_AHEAD))))


def take_ahead(path: Path, key: Hashable, temp: Path) -> bool:
    """Put at `temp` the copy made ahead of the file at `path` in the state `key` names, when there is one and it is
    as it was made; whether it did (the copy is dropped either way). `temp` is the temporary file of a write of
    that file (`write_atomic`): the copy takes its name."""
    ahead = _pop_ahead(path)
    if ahead is None or ahead[0] != key or _ahead_state(ahead[1]) != ahead[2]:
        _drop(ahead)
        return False
    # Renamed to a free name: a rename over a file (even the empty one `write_atomic` made) has ext4 write the
    # renamed file's new data out first (auto_da_alloc): 5-8 ms for 87 MB.
    temp.unlink()
    os.replace(ahead[1], temp)
    os.chmod(temp, FILE_MODE)
    return True


def drop_ahead() -> None:
    """Delete every copy made ahead (at the process's exit)."""
    with _AHEAD_LOCK:
        dropped = list(_AHEAD.values())
        _AHEAD.clear()
    for ahead in dropped:
        _drop(ahead)


def _drop_orphans(folder: Path) -> None:
    """Delete the copies made ahead in `folder` by processes no longer running (`<file>.<process id>.<random>.ahead`;
    a name without one is an earlier cardgen's), left by a watch that was killed: ~200 MB a watch at 1,000 cards."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        fields = name.rsplit(".", 3)
        if len(fields) == 4 and fields[3] == "ahead" and not (fields[1].isdigit() and _running(int(fields[1]))):
            (folder / name).unlink(missing_ok=True)


def _running(pid: int) -> bool:
    """Whether a process of that id runs (one of another user's counts: it may be a watch of theirs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (not ours to signal)
        return True
    return True


def _pop_ahead(path: Path) -> tuple[Hashable, Path, tuple] | None:
    with _AHEAD_LOCK:
        return _AHEAD.pop(path, None)


def _drop(ahead: tuple[Hashable, Path, tuple] | None) -> None:
    if ahead is not None:
        ahead[1].unlink(missing_ok=True)


def _ahead_state(path: Path) -> tuple:
    """A copy's device, inode, size, modification and change times and the digest of its end (empty when it is
    not there)."""
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            tail = hashlib.sha256(os.pread(handle.fileno(), SPLICE_TAIL, max(0, stat.st_size - SPLICE_TAIL)))
    except OSError:
        return ()
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, tail.digest()


def write_json(path: Path, data: Any) -> None:
    """Write a JSON file atomically: indented, UTF-8, non-ASCII kept as it is."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False))


def digest_now(path: str | Path) -> str:
    """SHA-256 of a file's content, read now (never memoised: a file written twice within one tick of the file
    system's clock keeps its times, and a memoised digest would be of what it held before)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@lru_cache(maxsize=4096)
def _file_digest(path: str, stamp: tuple[int, ...]) -> str:
    return digest_now(path)


def content_stamp(stat: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's content does: its size and times, and which file it is. The change time is
    one no one can set (a rewrite with its modification time put back, `os.utime`, still changes it)."""
    return stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev


def file_digest(path: Path) -> str:
    """SHA-256 of a file's content (memoised by path, size, times and inode)."""
    return _file_digest(str(path), content_stamp(path.stat()))


class Read(NamedTuple):
    """What a build read of a source file (`noting_reads`): the digest of its bytes, and whether a read of it for its
    use was noted (not only a digest something was keyed by)."""

    digest: str
    used: bool


# What a build read of each source file, by its real path (`noting_reads`), None for a file it read twice and found
# changed: what lets the next build tell a file saved just before this one was stamped (a "racy" stamp,
# `freshness.source_stamp`) by its content, without running the pipeline. Only the files read where the build notes
# them (its data files and templates); a thread the build did not start in notes nowhere.
_READS: ContextVar[dict[str, Read | None] | None] = ContextVar("cardgen_reads", default=None)
# A render worker forked while a build notes its reads notes nothing: what it reads is not this build's to note, and
# a real path found for each icon it draws was ~60 ms of CPU a 1,000-card redraw.
os.register_at_fork(after_in_child=functools.partial(_READS.set, None))


@contextlib.contextmanager
def noting_reads() -> Iterator[dict[str, Read | None]]:
    """Note (`note_read`) what is read of the source files within, into the mapping it gives; within another
    `noting_reads` (a game's load, whose kept game is keyed by what its validation read, within a build), into that
    one's too, as it ends."""
    reads: dict[str, Read | None] = {}
    outer = _READS.get()
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)
        if outer is not None:
            for name, read in reads.items():
                _noted(outer, name, read)


def note_read(path: Path, digest: str, whole: bool = True) -> None:
    """Note that the build read `path` as holding the content of `digest` (see `noting_reads`); read again as
    something else, it is noted as unknown (None). Not `whole`: a digest that something the build keeps is keyed by
    (the renders kept by the templates' digests), which the file's use by other code may not be."""
    reads = _READS.get()
    if reads is not None:
        _noted(reads, os.path.realpath(path), Read(digest, whole))


def _noted(reads: dict[str, Read | None], name: str, read: Read | None) -> None:
    """Note a read of the file of real path `name` in `reads` (None: read as two contents)."""
    noted = reads.get(name, read)
    if noted is None or read is None or noted.digest != read.digest:
        reads[name] = None
    else:
        reads[name] = Read(read.digest, noted.used or read.used)


def read_noted(path: Path, whole: bool = True) -> bytes:
    """A source file's bytes, read now and noted (`note_read`; not `whole`: read only to key something by)."""
    data = path.read_bytes()
    note_read(path, hashlib.sha256(data).hexdigest(), whole)
    return data


def place_file(source: Path, target: Path) -> None:
    """Put a copy of `source` at `target`, written atomically; whatever was at `target` is replaced.

    A copy, never a hard link: an output a designer edits in place must not change the cache entry it
    came from (cp drone.png scout.png would then publish the Drone image as Scout in every later build).
    """
    write_atomic(target, lambda temp: shutil.copyfile(source, temp))


def copy_into_staging(source: Path, target: Path) -> None:
    """Copy `source` to a new file `target` straight, not through a temporary name: only inside a folder of this
    process's own that no one reads until it is complete and swapped into place whole (a build's staging folder),
    so a half-written file is never seen. A copy, never a hard link (see `place_file`); made new, it has the mode
    of any file (FILE_MODE). It saves a temporary file, a chmod and a rename: ~0.2-0.5 ms of CPU a card file; and
    the copy is the kernel's (`clone`): 0.11 ms of CPU a 130 kB card file, where `shutil.copyfile` took 0.21 (its
    checks and `sendfile` loop; the build's process copies every card file while the workers draw)."""
    with open(source, "rb") as read, open(target, "wb") as write:
        clone(read, write)


def clone(source: BinaryIO, target: BinaryIO) -> None:
    """Copy an open file into another in the kernel (`copy_file_range`: blocks shared where the file system can),
    else through Python where that cannot be done (another file system, another system)."""
    try:
        while os.copy_file_range(source.fileno(), target.fileno(), 1 << 30):
            pass
    except (AttributeError, OSError):
        source.seek(0)
        target.seek(0)
        target.truncate()
        shutil.copyfileobj(source, target)


SEAL_SUFFIX = ".seal"
SEAL_ATTRIBUTE = "user.cardgen.seal"


def seal(path: Path, entry: Path | None = None, digest: str | None = None) -> None:
    """Record what a cache entry holds (content digest, size, modification time, name), to verify it later: in an
    extended attribute of the file where the file system has them (Linux), else in a seal file beside it.

    With `entry`, `path` is the entry's content not yet in place (a temporary file renamed to `entry`
    next, which keeps its size, time and attributes): the seal is there before the entry is. `digest`: the
    content's, when the caller has just read it.
    """
    stat = path.stat()
    entry = entry or path
    digest = digest or file_digest(path)
    # Taken before the attribute is written: writing it (and the rename into place that follows in `write_sealed`)
    # sets the entry's change time a moment after this; any later change to the file sets it later still.
    sealed_ns = time.time_ns()
    # An attribute is part of the file: no second file to make (a file made cost ~1 ms after a mass deletion on
    # this ext4, and every card writes two sealed entries), and renamed with it. 57 bytes, so that ext4 keeps it in
    # the inode (a 170-byte JSON seal took a block of its own: 0.3-0.5 ms a write against 0.07-0.18; room for the
    # seal's time came from the digest, 192 of SHA-256's 256 bits). The name's tag keeps a copy made with its
    # attributes under another entry's name from passing for that entry.
    try:
        os.setxattr(path, SEAL_ATTRIBUTE, _seal_attribute(digest, stat, sealed_ns, entry.name))
        return
    except (AttributeError, OSError):  # no extended attributes here (another system, or this file system)
        pass
    # Written in place, not through a temporary file and a rename: a seal cut short does not parse, and a seal of
    # content not (yet) in place matches neither the entry's size and time nor its digest, so `verify` takes the
    # entry for damaged and it is made again, never served.
    record = {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sealed_ns": sealed_ns,
              "name": entry.name}
    _seal_file(entry).write_text(json.dumps(record), encoding="utf-8")


# version, content digest (its first 24 bytes), size, modification time (ns), when sealed (ns), name's tag
_SEAL = struct.Struct(">B24sQQQ8s")
_SEAL_DIGEST = 24
_SEAL_VERSION = 2


def _seal_attribute(digest: str, stat: os.stat_result, sealed_ns: int, name: str) -> bytes:
    """The seal of an entry as its attribute holds it (see `seal`)."""
    return _SEAL.pack(_SEAL_VERSION, bytes.fromhex(digest)[:_SEAL_DIGEST], stat.st_size, stat.st_mtime_ns, sealed_ns,
                      _name_tag(name))


# An earlier cardgen's seal: the whole digest and no time of sealing (its entries are read once, and sealed again)
_SEAL_1 = struct.Struct(">B32sQQ8s")
# How long after its seal's time an entry's change time may be (writing the seal and renaming the entry into place
# set it) for the entry to be trusted unread. Later, something changed the file after it was sealed (a rewrite
# with its time put back): it is read and compared by digest. Too short a time costs only that read, once.
SEAL_SETTLE_NS = 500_000_000  # measured under load (2 cores, 7 builds): up to 40 ms


def _name_tag(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest()[:8]


def _seal_file(entry: Path) -> Path:
    return entry.with_name(entry.name + SEAL_SUFFIX)


def _read_seal(path: Path) -> dict[str, Any]:
    """The seal of a cache entry: its attribute, else its seal file (OSError when it has neither, ValueError when
    it is not one)."""
    try:
        data = os.getxattr(path, SEAL_ATTRIBUTE)
    except (AttributeError, OSError):
        record = json.loads(_seal_file(path).read_bytes())
        # (seal files of earlier cardgen versions hold no name)
        if not isinstance(record, dict) or record.get("name", path.name) != path.name:
            raise ValueError("not this entry's seal") from None
        return record
    try:
        if data[:1] == bytes([_SEAL_VERSION]):
            _, digest, size, mtime_ns, sealed_ns, tag = _SEAL.unpack(data)
        else:
            (version, digest, size, mtime_ns, tag), sealed_ns = _SEAL_1.unpack(data), None
            if version != 1:
                raise ValueError("not a seal of this cardgen")
    except struct.error:
        raise ValueError("a seal cut short") from None
    if tag != _name_tag(path.name):
        raise ValueError("not this entry's seal")
    return {"sha256": digest.hex(), "size": size, "mtime_ns": mtime_ns, "sealed_ns": sealed_ns}


def write_sealed(path: Path, write: Callable[[Path], object], digest: str | None = None) -> None:
    """Write a cache entry atomically, sealed before it appears: other processes checking the cache at the
    same time (the render workers) never see it unsealed, which `verify` would take for damage. `digest`: the
    content's, when the caller knows it (else the written file is read back for it)."""
    def write_and_seal(temp: Path) -> None:
        write(temp)
        seal(temp, path, digest=digest)

    write_atomic(path, write_and_seal)


def write_sealed_bytes(path: Path, data: bytes) -> None:
    """`write_sealed` of bytes in memory, sealed with their digest: the file is not read back (a card's PNG and
    its TTS cell, written by the render workers for every card).

    Written and sealed through the one open temporary file (write, fstat, the attribute), then renamed: ~0.12 ms of
    CPU less a write than `write_sealed`'s temporary file made, changed and sealed by its name (mkstemp's random
    name, a chmod, a second open, a stat, the attribute by path), twice for every card of a build."""
    digest = hashlib.sha256(data).hexdigest()
    temp = f"{path.parent}/.{path.name}.{os.getpid()}-{next(_TEMP_NUMBERS)}.tmp"
    try:
        handle = _created(temp, path.parent)
    except FileExistsError:  # left by an earlier process of this number that was killed: a name of mkstemp's
        write_sealed(path, lambda temp: temp.write_bytes(data), digest)
        return
    try:
        try:
            _write_sealed_to(handle, data, digest, temp, path)
        finally:
            os.close(handle)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _created(temp: str, folder: Path) -> int:
    """A new file at `temp` open for writing, of the mode of any file (the umask makes 0o666 FILE_MODE), its folder
    made when missing (see `write_atomic`); FileExistsError when the name is taken."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(temp, flags, 0o666)
    except FileNotFoundError:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(temp, flags, 0o666)


def _write_sealed_to(handle: int, data: bytes, digest: str, temp: str, entry: Path) -> None:
    """Write `data` into the open temporary file `temp` of a cache entry and seal it (see `seal`)."""
    rest = memoryview(data)
    while rest:
        rest = rest[os.write(handle, rest):]
    stat = os.fstat(handle)
    try:
        os.setxattr(handle, SEAL_ATTRIBUTE, _seal_attribute(digest, stat, time.time_ns(), entry.name))
    except (AttributeError, OSError):  # no extended attributes here: a seal file
        seal(Path(temp), entry, digest)


_TEMP_NUMBERS = itertools.count()  # the temporary files of `write_sealed_bytes` in this process


def verify(path: Path) -> bool:
    """Whether a cache entry holds what was sealed; False for a damaged or unsealed entry, which the caller
    then makes again (writing over it: another process may be writing the same entry right now).

    An entry whose size and modification time are those sealed, and which has not changed since it was sealed
    (its change time, which no one can set, is no later than sealing and renaming it set it), is trusted without
    reading it; any other is read and compared by content digest (a touched but unchanged entry is sealed again).
    """
    try:
        stat = path.stat()
        if not S_ISREG(stat.st_mode):  # a folder or device where the entry should be: none
            return False
        state = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        if _VERIFIED.get(str(path)) == state:  # verified before by this process, and not changed since
            return True
        record = _read_seal(path)
        if record["size"] != stat.st_size:
            return False
        sealed_ns = record.get("sealed_ns")
        if record["mtime_ns"] == stat.st_mtime_ns and isinstance(sealed_ns, int) and \
                stat.st_ctime_ns <= sealed_ns + SEAL_SETTLE_NS:
            _verified(path, state)
            return True
        sealed = record["sha256"]
        digest = digest_now(path)  # (a memoised digest is of what the file held before)
        if isinstance(sealed, str) and len(sealed) >= 2 * _SEAL_DIGEST and digest.startswith(sealed):
            seal(path, digest=digest)
            return True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return False


# The cache entries this process verified, by path: their state then (device, inode, size, modification and change
# times; any write, rename or new seal changes the change time, which no one can set). A watch or serve rebuilding
# a game looks up each card image and TTS cell again: one stat each, not its seal read and parsed. Bounded: a
# process that has verified more than VERIFIED_AT_MOST entries starts afresh.
_VERIFIED: dict[str, tuple[int, ...]] = {}
VERIFIED_AT_MOST = 200_000


def _verified(path: Path, state: tuple[int, ...]) -> None:
    """Note an entry verified in this state (see `_VERIFIED`)."""
    if len(_VERIFIED) >= VERIFIED_AT_MOST:
        _VERIFIED.clear()
    _VERIFIED[str(path)] = state


def swap_into_place(staging: Path, final: Path) -> None:
    """Replace a finished folder with a newly built one, keeping the old one until the new one is in place.

    Only a folder cardgen made is replaced or removed: anything else at `final` stops the swap with an error.
    """
    from cardgen.core.ownership import refuse_foreign, remove_ours

    refuse_foreign(final)
    if final.is_dir() and not os.access(final, os.W_OK):  # made read-only by the designer: keep it as it is
        raise PermissionError(errno.EACCES, "Permission denied (the folder is read-only)", str(final))
    old = final.with_name(f".{final.name}.old")
    remove_ours(old)
    if final.exists() or final.is_symlink():
        os.replace(final, old)
    os.replace(staging, final)
    try:
        remove_ours(old)
    except OSError:
        pass  # the new folder is in place: the next command's clean-up of leftovers removes the old one


def cache_root(out_root: Path) -> Path:
    """The folder holding every cache of an output root."""
    return out_root / CACHE_DIR


def user_cache() -> Path | None:
    """cardgen's folder in the user's own cache folder (not the shared temporary folder, where another user
    could plant a font configuration or an icon index), or None when there is none that can be written."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")) / "cardgen"  # the XDG rule
    if not folder.is_absolute():  # no home folder
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


# The cache entries (paths as text) the build running looked up, while `cachebound` notes them (else None): what of
# the cache it uses, kept from pruning (see `cachebound`).
LOOKED_UP: set[str] | None = None


class Cache:
    """One kind of content-addressed cache: entry `key` lives at `<out_root>/.cache/<kind>/<key[:2]>/<key><suffix>`.

    Keys are hex digests of everything an entry is made from, so an entry never goes stale: a change
    of input makes a new key. Entries are written atomically and sealed (`seal`); what is read is
    verified against its seal, and an entry that does not verify is made again (never served). Writing is
    best effort for callers that can do without (`put_*` returns False when the cache cannot be written).
    """

    def __init__(self, out_root: Path, kind: str, suffix: str = "") -> None:
        self.folder = cache_root(out_root) / kind
        self.kind = kind
        self.suffix = suffix

    @classmethod
    def in_folder(cls, folder: Path, suffix: str = "") -> Cache:
        """A cache of its own folder, outside any output root (one in the user's cache folder)."""
        cache = cls(folder, folder.name, suffix)
        cache.folder = folder
        return cache

    def path(self, key: str, suffix: str | None = None) -> Path:
        """Where the entry of a key lives (whether or not it exists)."""
        if LOOKED_UP is not None:
            LOOKED_UP.add(f"{self.folder}/{key[:2]}/{key}{self.suffix if suffix is None else suffix}")
        return self.folder / key[:2] / f"{key}{self.suffix if suffix is None else suffix}"

    def path_text(self, key: str, suffix: str | None = None) -> str:
        """`path` as text (no Path made: for many entries looked up at once, see `folderwatch.entry_trust`)."""
        text = f"{self.folder}/{key[:2]}/{key}{self.suffix if suffix is None else suffix}"
        if LOOKED_UP is not None:
            LOOKED_UP.add(text)
        return text

    def has(self, key: str, suffix: str | None = None) -> bool:
        """Whether the entry of a key exists and verifies (see `verify`: one `stat` for an entry this process
        verified before, a card image or TTS cell looked up again by a running watch)."""
        return verify(self.path(key, suffix))

    def write(self, key: str, write: Callable[[Path], object], suffix: str | None = None) -> Path:
        """Make an entry with `write(temp_path)` (atomically) and seal it; return its path."""
        path = self.path(key, suffix)
        write_sealed(path, write)
        return path

    def read_bytes(self, key: str, suffix: str | None = None) -> bytes | None:
        """An entry's bytes, or None when it is missing, unreadable or does not verify."""
        try:
            return self.path(key, suffix).read_bytes() if self.has(key, suffix) else None
        except OSError:
            return None

    def write_bytes(self, key: str, data: bytes) -> Path:
        """Make an entry of bytes (see `write_sealed_bytes`); return its path."""
        path = self.path(key)
        write_sealed_bytes(path, data)
        return path

    def put_bytes(self, key: str, data: bytes, suffix: str | None = None) -> bool:
        """Store bytes under a key; False when the cache cannot be written."""
        try:
            write_sealed_bytes(self.path(key, suffix), data)
        except OSError:
            return False
        return True

    def read_json(self, key: str) -> Any | None:
        """An entry parsed as JSON, or None when it is missing, unreadable or not JSON."""
        data = self.read_bytes(key)
        if data is None:
            return None
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError:
            return None

    def put_json(self, key: str, data: Any) -> bool:
        """Store a JSON value under a key; False when the cache cannot be written."""
        return self.put_bytes(key, json.dumps(data).encode("utf-8"))

    def place(self, key: str, target: Path, suffix: str | None = None) -> None:
        """Put a copy of an entry at an output path."""
        place_file(self.path(key, suffix), target)


class KeptByGame:
    """What a game's last build kept of one kind (template scans, rendered SVGs), by key: one sealed entry per
    game in the output root's cache, read once when first needed and written once (`save`), holding what this
    build used only, and only when that differs from what was kept. A damaged or unreadable entry is empty: its
    content is made again, never trusted.

    The entry is one line per key, `key<TAB>value as JSON`: a save writes back the lines it read for the values
    taken from `kept` and encodes only the values this build made (re-encoding every rendered SVG of a
    100-card game took ~5 ms of each one-card edit). Values taken from `kept` must keep their meaning.
    """

    deferred = False  # a save in a process that builds again may be kept in memory only (see `_kept_in_memory`)
    # and, kept in memory, written to its file once the build has reported (`after_rebuild`): for an entry that
    # describes an output file as an edit leaves it (the print's), which the next process would otherwise find in
    # an earlier state and make whole again
    written_later = False

    def __init__(self, out_root: Path, kind: str, game: str, encode: Callable[[Any], Any] | None = None) -> None:
        self.store = Cache(out_root, kind, ".jsonl")
        self.encode = encode  # turns what JSON cannot hold in the values into what it can
        self.entry = hashlib.sha256(f"{kind}\0{game}".encode()).hexdigest()[:32]
        self._kept: dict[str, Any] | None = None
        self._lines: dict[str, bytes] = {}  # the line each kept value was read from, by key
        # The keys of `kept` with no line in `_lines` (values kept in memory only: see `_kept_in_memory`), None when
        # not known
        self._unlined: frozenset[str] | None = frozenset()
        self.used: dict[str, Any] = {}  # what this build used, by key: what `save` keeps
        # Whose `used` the kept values are, as that object saved them (its `token`), when one in this process did
        # (else None): they then hold every key it used (see `copied_from`).
        self.token: object = object()
        self._from: object = None

    @property
    def kept(self) -> dict[str, Any]:
        """What the last build kept, by key (empty when nothing was kept or it cannot be read)."""
        if self._kept is None:
            path = self.store.path(self.entry)
            with _KNOWN_LOCK:
                known = _KNOWN_ENTRIES.get((path, file_identity(path)))
            if known is None:
                known = (*_read_kept_lines(self.store.read_bytes(self.entry)), None, frozenset())  # (a line each)
                self._remember(known)
            # shared with the builds before and after (no copies of 10,000 entries an edit): never changed in place,
            # a save makes new dicts
            self._kept, self._lines, self._from, self._unlined = known
        return self._kept

    def copied_from(self, token: object) -> bool:
        """Whether `kept` (once read) is what the `KeptByGame` of this `token` saved of its `used` (a copy), in this
        process: it then holds every key that one had used by its save, with the same value (one looked up again
        meanwhile is of the same content, as every key names its value's content)."""
        return self._from is token

    def _remember(self, known: _Known, forget: bool = False) -> None:
        """Note what the entry's file holds now (read or written), for the next build in this process; with
        `forget`, only forget what it held."""
        path = self.store.path(self.entry)
        identity = file_identity(path)
        with _KNOWN_LOCK:  # the print stage's thread keeps its pages meanwhile
            for old in [key for key in _KNOWN_ENTRIES if key[0] == path]:
                del _KNOWN_ENTRIES[old]
            if identity is not None and not forget:
                _KNOWN_ENTRIES[(path, identity)] = known

    def _kept_in_memory(self) -> bool | None:
        """In a process that builds again, keep what this build used in memory only, for the next build in this
        process, while at most DEFERRED_AT_MOST of its values are not in the entry's file: an edit's render is not
        worth writing every rendered SVG of the game again (~8 MB at 1,000 cards, ten times that at 10,000). The
        file keeps the values of an earlier build, by their keys (of their content: still true); another process
        makes the few it lacks again. None (nothing kept) when `used` holds the very values of `kept` and no other."""
        # (by C loops over the keys: a Python step a key was ~3-4 ms of an edit at 10,000 cards)
        old, used = self.kept, self.used
        changed = set(itertools.compress(used, map(operator.is_not, used.values(),
                                                   map(old.get, used, itertools.repeat(_ABSENT)))))  # (None too)
        if not changed and len(used) == len(old):
            return None
        path = self.store.path(self.entry)
        identity = file_identity(path)
        unlined = self._used_unlined(changed)
        if identity is None or len(unlined) > DEFERRED_AT_MOST:
            return False
        # The lines of values this build did not use stay known: each is still the file's line of its key (a
        # content key, whose value keeps its meaning), and they are no more than the file holds. Not those of values
        # it changed (an entry that describes a file: the print's `pdf_update.Written`): `_line` would take them.
        if any(map(self._lines.__contains__, changed)):
            self._lines = {key: line for key, line in self._lines.items() if key not in changed}
        self._kept, self._from, self._unlined = dict(self.used), self.token, frozenset(unlined | changed)
        with _KNOWN_LOCK:
            _KNOWN_ENTRIES[(path, identity)] = (self._kept, self._lines, self.token, self._unlined)
        return True

    def _used_unlined(self, changed: set[str]) -> set[str]:
        """The keys of `used` with no line in `_lines`, `changed` those whose value is not `kept`'s: the changed
        ones looked up, and of the others, those of `kept` known to have none (`_unlined`: few, an edit's in memory
        only), not every key (~3 ms of an edit at 10,000 cards, py-spy); every key looked up when that is not
        known."""
        used, lines = self.used, self._lines
        if self._unlined is None:
            return set(itertools.filterfalse(lines.__contains__, used))
        return {key for key in changed if key not in lines} | \
            {key for key in self._unlined if key in used and key not in changed}

    def _line(self, key: str, value: Any) -> bytes:
        """The line that keeps a value: as it was read when the value came from `kept`, else encoded."""
        if key in self._lines and self.kept.get(key) is value:  # (a line may be of a value `kept` no longer holds)
            return self._lines[key]
        return f"{key}\t{json.dumps(value, default=self.encode)}".encode()

    def save(self) -> None:
        """Keep what this build used for the next (best effort: a cache that cannot be written is skipped)."""
        if self.deferred and builds_again():
            # (an entry that holds the same values told by the keys' values' identities, which `_kept_in_memory`
            # looks at anyway: not compared value by value first, ~1.5 ms of an edit at 10,000 cards, py-spy)
            in_memory = self._kept_in_memory()
            if in_memory is None:
                return
            if in_memory:
                if self.written_later:
                    after_rebuild(self._write_if_kept)
                return
        elif self.used == self.kept:  # values taken from `kept` are the same objects: compared by identity first
            return
        self._write()

    def _write_if_kept(self) -> None:
        """`_write`, once the build has reported, while the entry's folder is still there in a cache folder that
        holds its stamp: no lock is held then, and a `cardgen clean` may have removed them (a `.cache` made again
        without its stamp would be refused by every later build: see `ownership.refuse_foreign`)."""
        from cardgen.core.ownership import STAMP

        if (self.store.folder.parent / STAMP).is_file() and self.store.path(self.entry).parent.is_dir():
            self._write()

    def _write(self) -> None:
        """Write what this build used into the entry's file (see `save`)."""
        encoded: dict[str, bytes] | None = {}  # the lines encoded now, while few (an edit's)

        def write(temp: Path) -> None:
            nonlocal encoded
            # One line at a time: 10,000 rendered SVGs are ~80 MB, never held twice
            with open(temp, "wb") as handle:
                for number, (key, value) in enumerate(self.used.items()):
                    line = self._line(key, value)
                    handle.write(b"\n" + line if number else line)
                    if encoded is not None and line is not self._lines.get(key):
                        encoded[key] = line
                        encoded = encoded if len(encoded) <= KEPT_ENCODED else None

        try:
            self.store.write(self.entry, write)
        except OSError:
            return
        # What is kept now is what was just written: `used`, whose values are the entry's lines (the lines read
        # stay known for the values read from them). Not read back: a build saves its rendered SVGs twice
        # (after validating, after planning) and reading the entry again cost 10,000 cards ~1.2 s and 260 MB.
        old, used = self._kept or {}, self.used
        self._lines = {key: line for key, line in self._lines.items() if key in used and used[key] is old.get(key)}
        self._kept, self._from, self._unlined = dict(used), self.token, None
        if encoded is not None:  # every line known: the next build in this process takes them from memory
            self._lines.update(encoded)
            self._unlined = frozenset()
            self._remember((self._kept, self._lines, self.token, self._unlined))
        else:
            self._remember(({}, {}, None, None), forget=True)


# Set in a process that builds again (`cardgen watch`, `serve`: see `keep_for_next_builds`): what a build made is kept
# in memory for the next (converted rows, record entries and their pieces, the last values of `KeptByGame` entries).
BUILDS_AGAIN = threading.Event()


def keep_for_next_builds() -> None:
    """From now on, this process builds again: each build keeps in memory what the next one can take."""
    BUILDS_AGAIN.set()


def builds_again() -> bool:
    """Whether this process builds again (see `keep_for_next_builds`)."""
    return BUILDS_AGAIN.is_set()


def keep_latest(kept: dict[K, T], key: K, value: T, at_most: int) -> None:
    """Keep `value` under `key` as the latest of what a process that builds again keeps of its builds (a game's
    last plan, record, check...), the oldest dropped beyond `at_most`. What it replaces or drops is freed once the
    rebuild has reported (`after_rebuild`): a watch's first record, read from build.json, dropped at its eighth
    edit took ~35 ms of that edit at 10,000 cards to free."""
    dropped = [kept.pop(key, None)]
    kept[key] = value
    while len(kept) > at_most:
        dropped.append(kept.pop(next(iter(kept))))
    if any(item is not None for item in dropped):
        after_rebuild(functools.partial(let_go, dropped))


def let_go(*held: object) -> None:
    """Nothing: what `after_rebuild` held for it is freed as it returns."""


# In a process that builds again, work a build leaves for when it has said what it did (`after_rebuild`), done by
# `run_after_rebuild` (a watch calls it after each rebuild, while it waits for the next save): freeing what an edit
# replaced, copying ahead the print file the next edit will likely update.
_AFTER_REBUILD: list[Callable[[], object]] = []


def after_rebuild(work: Callable[[], object]) -> None:
    """Leave `work` for `run_after_rebuild` (nothing, in a process that builds once: the caller does without)."""
    if builds_again():
        _AFTER_REBUILD.append(work)


def run_after_rebuild() -> None:
    """Do the work builds left (best effort: a file system error leaves that work undone)."""
    while _AFTER_REBUILD:
        try:
            _AFTER_REBUILD.pop(0)()
        except OSError:
            pass


# What the `KeptByGame` entries this process last read or wrote hold, by their file and its identity (see
# `file_identity`): a watch or serve rebuilding a game takes its rendered SVGs, layout findings, template scans and
# print pages from here instead of verifying and parsing each entry again. The values are shared by the builds,
# which never change a value's meaning (see `KeptByGame`); an entry written by anyone else is read again.
_ABSENT = object()  # (no value of a `KeptByGame` entry)
# (a `KeptByGame` entry's values, their lines, the token of the object that saved them and the keys with no line)
_Known = tuple[dict[str, Any], dict[str, bytes], object, frozenset[str] | None]
_KNOWN_ENTRIES: dict[tuple[Path, tuple[int, ...] | None], _Known] = {}
_KNOWN_LOCK = threading.Lock()
# A save that encoded more values than this (a first build's) is not remembered: its lines, as large as the values
# (~80 MB of rendered SVGs at 10,000 cards), would be held beside them; the next build reads the entry once.
KEPT_ENCODED = 256
# How many values a `KeptByGame.deferred` entry may hold in memory beyond its file before a save writes it again.
DEFERRED_AT_MOST = 64


def walked(folder: Path) -> dict[str, os.DirEntry[str]]:
    """Every file in a folder and the folders in it, by its path there as text ('a/b.png'), as `Path.rglob`
    finds them (folders linked in not followed): one `os.scandir` walk, no `Path` made for each file. The ~1,030
    files of a 1,000-card build: 0.8 ms of CPU, where `rglob`, `is_file` and `relative_to` took ~9 ms; with their
    stamps 4 ms, not 17 (walked twice at the end of every build: after the last card, so all of it wall)."""
    found: dict[str, os.DirEntry[str]] = {}
    folders = [("", str(folder))]
    while folders:
        prefix, path = folders.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.is_file():
                    found[prefix + entry.name] = entry
    return found


def file_identity(path: Path) -> tuple[int, ...] | None:
    """What tells a file from any other and from itself after a write (device, inode, size, modification time; a
    rename keeps it); None when it cannot be read."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _read_kept_lines(data: bytes | None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The values of a `KeptByGame` entry and the line each was read from, by key (both empty when there is no
    entry or it is not what this cardgen writes)."""
    values: dict[str, Any] = {}
    lines: dict[str, bytes] = {}
    for line in data.split(b"\n") if data else []:
        key, _, value = line.partition(b"\t")  # a line with no tab has no value: not JSON
        try:
            values[key.decode()] = json.loads(value)
        except ValueError:
            return {}, {}
        lines[key.decode()] = line
    return values, lines


def user_store(kind: str, suffix: str = "") -> Cache | None:
    """A cache of one kind in cardgen's folder of the user's cache (`user_cache`): shared by every game and
    output root; None when there is no such folder that can be written."""
    home = user_cache()
    return Cache.in_folder(home / kind, suffix) if home is not None else None

"""Is the last build still current? Answered from file sizes and times, before any work is done.

A build records the size and modification time of every file it read (the game's data folder,
all templates, icons and fonts, and images named in data). When none of them changed and the
build settings are the same, a rebuild has nothing to do and skips validation and rendering.

Those stamps are kept beside build.json in a small file of their own, `.build-stamps.json`, together
with the size and time of build.json as the build wrote it: the no-change path reads that one file,
not the whole record, and trusts a record no one has touched since. It runs before anything else is
imported, so this module stays light (no pandas, pydantic, cairosvg, reportlab or Pillow).

The same file notes the key of the content of each output file made from a known input (a card image, a TTS
sheet, a volume of the print PDF): a later build keeps those it would make again (`PreviousOutputs`).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import operator
import os
import shutil
import stat as stat_module
import time
from pathlib import Path
from typing import Callable, Collection, Iterable

from cardgen.core.errors import CardgenError, Problem
from cardgen.core.storage import (
    FILE_MODE,
    Read,
    after_rebuild,
    builds_again,
    digest_now,
    file_identity,
    keep_latest,
    walked,
    write_atomic,
    write_text,
)

SHARED_FOLDERS = ("templates", "icons", "fonts")
RACY_NS = 2_000_000_000
STAMPS = ".build-stamps.json"
# A build that made at most this many output files (an edit) moves them into the previous output folder; one that
# made more is swapped in as a whole folder (see `PreviousOutputs.put_in_place`).
MOVED_AT_MOST = 64


def _files(root: Path, game: str) -> Iterable[Path]:
    from cardgen.core.bundled import own_folders

    data = root / "data" / game
    if data.is_dir():
        yield from (p for p in data.rglob("*") if "snapshots" not in p.relative_to(data).parts)
    for folder in own_folders(root, SHARED_FOLDERS):  # bundled fonts and icons: stamped by `settings_key`
        yield from folder.rglob("*")


Stamp = list[int | str]  # a source's stamp: [size, time], or [size, time, digest] when "racy" (see `source_stamp`)


def source_stamp(root: Path, game: str, extra: Iterable[str] = (), recording: bool = False,
                 scan: bool = True) -> dict[str, Stamp]:
    """Size and modification time of every file a build of `game` reads, by path relative to root; a URL among
    `extra` is stamped by its reader (`cardgen.load.sources`: what its server says of it). Without `scan`, only
    `extra` (the game's and shared folders stamped already, before the build read them).

    When `recording`, a file changed in the last two seconds is "racy" (as git's index entries): file times are
    coarse, and an edit of the same size in the same tick would otherwise look unchanged. Its stamp holds a third
    item, the digest of the bytes the build read of it, empty until `with_read_digests` sets it (and when the build
    did not note its read: a file it read where it notes nothing, or not at all), and the next build compares its
    content with that digest (`_content_current`).
    """
    from cardgen.load.sources import is_url
    from cardgen.load.sources import stamp as reader_stamp

    racy_after = time.time_ns() - RACY_NS if recording else None
    stamp: dict[str, Stamp] = {e: [*reader_stamp(root, e)] for e in extra if is_url(e)}  # by their readers
    for path in [*(_files(root, game) if scan else ()), *(root / e for e in extra if not is_url(e))]:
        try:
            stat = path.stat()
        except OSError:
            stamp[str(path.relative_to(root))] = [-1, -1]  # gone: differs from any recorded stamp
            continue
        if path.is_file():
            racy = racy_after is not None and stat.st_mtime_ns > racy_after
            stamp[path.relative_to(root).as_posix()] = [stat.st_size, stat.st_mtime_ns, *([""] if racy else [])]
    return stamp


def with_read_digests(stamp: dict[str, Stamp], root: Path, reads: dict[str, Read | None]) -> dict[str, Stamp]:
    """A recorded stamp (see `source_stamp`) with each racy file's digest of the bytes the build read of it, as
    noted in `reads` (`storage.noting_reads`, by real path); left empty where no read for its use was noted, or the
    build read the file twice and found it changed. Never a digest of the file read again now: a save since the
    build read it would be taken for what it built."""
    racy = [name for name, entry in stamp.items() if len(entry) == 3]
    for name in racy:
        read = reads.get(os.path.realpath(root / name))
        stamp[name] = [*stamp[name][:2], read.digest if read is not None and read.used else ""]
    return stamp


def _extra_sources(game: str, sources: dict[str, Stamp]) -> list[str]:
    """Files a build read outside the folders `source_stamp` scans (images named in data)."""
    scanned = ("data/" + game + "/", *(f"{f}/" for f in SHARED_FOLDERS))
    return [p for p in sources if not p.startswith(scanned)]


def settings_key(*parts: object) -> str:
    """A hash of the build settings and of cardgen's own code and its bundled fonts, icons and partials, by stamp
    (`bundled.code_stamp`): any edit or reinstall of cardgen makes the build run again; the stages' cache keys then
    keep what the edit does not change (`bundled.code_digest`)."""
    from cardgen.core.bundled import bundle_stamp, code_stamp

    return hashlib.sha256(repr((code_stamp(), bundle_stamp(), *parts)).encode()).hexdigest()[:16]


def seal_record(record_path: Path, record: dict) -> None:
    """Write the stamps of a just-written build record next to it (call right after writing it); the content
    keys of its outputs noted there are kept (`seal_outputs` stamps the outputs themselves)."""
    stat = record_path.stat()
    _write_stamps(record_path.with_name(STAMPS), {
        "record": [stat.st_size, stat.st_mtime_ns], "settings": record.get("settings"),
        "sources": record.get("sources", {}), "cards": record["stats"]["cards"],
        "warnings": record.get("warnings", []), "made": _made(record_path.parent)})


def _write_stamps(path: Path, stamps: dict) -> None:
    """Write a build's stamps: JSON without an indent, which json.dumps writes in C (with one, in Python: ~2 ms a
    write at 1,000 cards, twice an edit); a file for cardgen, not for reading."""
    write_text(path, json.dumps(stamps, ensure_ascii=False))
    identity = file_identity(path)
    _remember_stamps(identity, stamps)
    if identity in _KNOWN_STAMPS:
        _WRITTEN.add(identity)
        _WRITTEN.intersection_update(_KNOWN_STAMPS)


# In a process that builds again (watch, serve), the stamps it last wrote or read, by the identity of their file
# (`storage.file_identity`: device, inode, size, modification time; the rename into place keeps it, any write
# changes it): an edit reads them three times (is the build current, are its outputs intact, which files to keep),
# ~1.4 MB of JSON at 10,000 cards, ~9 ms a read. A file written by anyone else has another identity and is read.
# Never changed once kept: a reader that changes them changes a copy.
_KNOWN_STAMPS: dict[tuple[int, ...], dict | Callable[[], dict]] = {}  # (or what makes them: see `_append_stamps`)
KNOWN_STAMPS = 8  # the stamps of a few games' output folders and their staging folders
_WRITTEN: set[tuple[int, ...]] = set()  # those of them this process wrote (`PreviousOutputs.own_stamps`)
_APPENDED: dict[tuple[int, ...], int] = {}  # their lines of changes (`parse_stamps`)


def _read_stamps(path: Path) -> dict:
    """The stamps a file holds, as this process last wrote or read that very file (not to be changed: a copy for
    that); OSError or ValueError when it cannot be read."""
    identity = file_identity(path)
    known = _KNOWN_STAMPS.get(identity) if identity is not None else None
    if known is not None:
        return _whole(identity, known)
    stamps, appended = parse_stamps(path.read_text(encoding="utf-8"))
    _remember_stamps(identity, stamps, appended)
    return stamps


# An edit's stamps differ from the last build's in a few entries of their `outputs` and `made` (and in their small
# other keys): a process that builds again appends those changes to the file as one line of JSON (`_append_stamps`),
# not the 20,000 entries written again (~17-20 ms an edit at 10,000 cards), up to APPENDED_AT_MOST lines, then
# writes them whole. The file is then the whole stamps on its first line and a line of changes after it for each
# edit: the other keys as they are now, the entries of `outputs` and `made` set anew (null: gone).
APPENDED_AT_MOST = 32
_CHANGED_BY_ENTRY = ("outputs", "made")


def parse_stamps(text: str) -> tuple[dict, int]:
    """The stamps a stamps file's text holds and how many lines of changes it has; ValueError when it is not what
    cardgen writes (cut short in an append, or edited by hand): never a part of it taken for the whole."""
    first, *appended = text.split("\n")
    stamps = json.loads(first)
    for line in appended:
        changes = json.loads(line)
        if not isinstance(stamps, dict) or not isinstance(changes, dict):
            raise ValueError("not a build's stamps")
        for key in _CHANGED_BY_ENTRY:
            entries, changed = stamps.get(key), changes.pop(key, {})
            if not isinstance(entries, dict) or not isinstance(changed, dict):
                raise ValueError("not a build's stamps")
            entries.update(changed)
            for name in [name for name, value in changed.items() if value is None]:
                del entries[name]
        stamps.update(changes)
    return stamps, len(appended)


def _whole(identity: tuple[int, ...] | None, known: dict | Callable[[], dict]) -> dict:
    """The stamps kept of a file, made whole first when what makes them was kept (see `_append_stamps`)."""
    if callable(known):
        known = known()
        if identity in _KNOWN_STAMPS:
            _KNOWN_STAMPS[identity] = known
    return known


def _remember_stamps(identity: tuple[int, ...] | None, stamps: object, appended: int = 0) -> None:
    """Keep the stamps of a file (its identity taken before it was read, or after it was written), or what makes
    them, and its number of lines of changes, in a process that builds again; the oldest forgotten beyond
    KNOWN_STAMPS."""
    if identity is None or not (isinstance(stamps, dict) or callable(stamps)) or not builds_again():
        return
    keep_latest(_KNOWN_STAMPS, identity, stamps, KNOWN_STAMPS)
    _APPENDED[identity] = appended
    for gone in _APPENDED.keys() - _KNOWN_STAMPS.keys():
        del _APPENDED[gone]


def _append_stamps(previous: Path, path: Path, read_as: tuple[int, ...] | None, whole: Callable[[], dict],
                   changes: dict) -> bool:
    """Put the stamps file `previous` (as read: `read_as`) at `path` with the line of `changes` that makes it hold
    `whole()` appended (see APPENDED_AT_MOST); False when it is not this process's own as read, has other links or
    has enough lines (the caller then writes the stamps whole at `path`, `previous` gone or not). What makes the
    stamps is kept, and makes them once the rebuild has reported (`after_rebuild`), or when read first: copies of
    20,000 entries, ~1-2 ms of an edit at 10,000 cards."""
    appended = _APPENDED.get(read_as) if read_as is not None else None
    if appended is None or appended >= APPENDED_AT_MOST or read_as not in _WRITTEN:
        return False
    try:
        os.replace(previous, path)  # (the previous stamps leave the output folder first, as when written whole)
        with open(path, "a", encoding="utf-8") as handle:
            state = os.fstat(handle.fileno())
            if (state.st_dev, state.st_ino, state.st_size, state.st_mtime_ns) != read_as or state.st_nlink != 1:
                return False  # (changed since it was read, or linked elsewhere: written whole over it)
            handle.write("\n" + json.dumps(changes, ensure_ascii=False))
    except OSError:
        return False
    identity = file_identity(path)
    _remember_stamps(identity, functools.lru_cache(maxsize=1)(whole), appended + 1)
    if identity in _KNOWN_STAMPS:
        _WRITTEN.add(identity)
        _WRITTEN.intersection_update(_KNOWN_STAMPS)
        after_rebuild(functools.partial(_whole, identity, _KNOWN_STAMPS[identity]))
    return True


def _made(out_dir: Path) -> dict[str, str]:
    """The content keys of a build's output files noted in its stamps (none when unreadable)."""
    try:
        made = _read_stamps(out_dir / STAMPS).get("made", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return made if isinstance(made, dict) else {}


def _output_stamp(out_dir: Path) -> dict[str, list[int]]:
    """Size and modification time of every output file of a build (build.json and its stamps aside)."""
    stamp = {}
    for name, entry in walked(out_dir).items():
        if entry.name not in (STAMPS, "build.json"):
            stat = entry.stat()
            stamp[name] = [stat.st_size, stat.st_mtime_ns]
    return stamp


def seal_outputs(out_dir: Path, rewritten: Path | None = None, made: dict[str, str] | None = None) -> None:
    """Add the stamps of every output file to a build's stamps (call when its outputs are all written), so
    that an output deleted or edited by hand makes the build not current; with `made`, note the content
    key of the output files made from known inputs (see `PreviousOutputs`).

    With `rewritten` (a file or folder inside `out_dir` that `cardgen print` or `tts` wrote again), only
    the stamps of what lies there are renewed, and only when the build was current before; the content keys
    noted for it are dropped (a later build makes those files again rather than keep them).
    """
    if rewritten is not None and not outputs_intact(out_dir, but=rewritten.relative_to(out_dir).as_posix()):
        return  # not current before (or no stamps): the next build does its work anyway
    stamps = dict(_read_stamps(out_dir / STAMPS))  # a copy: its keys are set anew
    if made is not None:
        stamps["made"] = dict(sorted(made.items()))  # files are placed as cards finish: in no fixed order
    if rewritten is None:
        stamps["outputs"] = _output_stamp(out_dir)
    else:
        prefix = rewritten.relative_to(out_dir).as_posix()

        def inside(name: str) -> bool:
            return name == prefix or name.startswith(prefix + "/")

        kept = {k: v for k, v in stamps["outputs"].items() if not inside(k)}
        stamps["outputs"] = {**kept, **{k: v for k, v in _output_stamp(out_dir).items() if inside(k)}}
        stamps["made"] = {k: v for k, v in _made(out_dir).items() if not inside(k)}
    _write_stamps(out_dir / STAMPS, stamps)


def outputs_intact(out_dir: Path, but: str | None = None) -> bool:
    """Whether every output file a build sealed (but those under `but`) is still there as it was written."""
    try:
        outputs = _read_stamps(out_dir / STAMPS)["outputs"]
        for name, (size, mtime_ns) in outputs.items():
            if but is not None and (name == but or name.startswith(but + "/")):
                continue
            stat = (out_dir / name).stat()
            if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns):
                return False
    except (OSError, ValueError, TypeError, KeyError):
        return False
    return True


def record_intact(out_dir: Path, stamps: dict | None = None) -> bool:
    """Whether build.json is exactly as the build that sealed it wrote it (not edited by hand since); `stamps`: its
    stamps when read already (~150 KB of JSON at 1,000 cards)."""
    try:
        recorded = (stamps or _read_stamps(out_dir / STAMPS))["record"]
        stat = (out_dir / "build.json").stat()
    except (OSError, ValueError, TypeError, KeyError):
        return False
    return bool(recorded == [stat.st_size, stat.st_mtime_ns])


def current_build(out_dir: Path, root: Path, game: str, settings: str) -> tuple[int, list[Problem]] | None:
    """(cards, warnings) of the build in `out_dir` when it is still current, else None.

    Current means: build.json is exactly as that build wrote it, the settings are the same, no file the
    build read has changed since, and every output it wrote is still there as it was written. Anything
    unreadable is simply not current.
    """
    try:
        stamps = _read_stamps(out_dir / STAMPS)
        if not record_intact(out_dir, stamps) or stamps["settings"] != settings:
            return None
        sources = stamps["sources"]
        if not sources or not _sources_current(root, sources, source_stamp(root, game, _extra_sources(game, sources))):
            return None
        if not outputs_intact(out_dir):  # an output deleted or edited by hand: build it again
            return None
        return int(stamps["cards"]), [Problem(**warning) for warning in stamps["warnings"]]
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return None


def _sources_current(root: Path, recorded: dict[str, Stamp], now: dict[str, Stamp]) -> bool:
    """Whether the files a build read are as it read them: each as stamped, or a racy one (see `source_stamp`)
    holding the bytes it read."""
    if recorded == now:  # (the usual case: one comparison in C)
        return True
    return recorded.keys() == now.keys() and all(
        _content_current(root / name, entry, now[name]) for name, entry in recorded.items() if entry != now[name])


def _content_current(path: Path, recorded: Stamp, now: Stamp) -> bool:
    """Whether a file stamped racy (`recorded`: size, time, digest of what the build read) still has that size and
    time (`now`) and holds those bytes, read now (a same-size edit in the same tick of the file clock shows only
    there)."""
    if len(recorded) != 3 or recorded[:2] != now or not isinstance(recorded[2], str) or not recorded[2]:
        return False
    return digest_now(path) == recorded[2]


def _file_state(path: Path | str) -> tuple[int, int, int, int]:
    """What tells a kept output file from an edited one: size, modification time, mode bits and link count."""
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns, stat_module.S_IMODE(stat.st_mode), stat.st_nlink


def _state(kept: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """(size, time, mode) of a kept file: as looked at, or for one kept on trust as its stamps say."""
    return kept if isinstance(kept, tuple) else (*kept, FILE_MODE)


def _missing(names: Collection[str], held: Collection[str]) -> list[str]:
    """The names of `names` (in their order) that `held` does not hold, by one C loop (an edit's few of thousands:
    half the time of `compress` over the names and `map`s of the look-ups)."""
    return list(itertools.filterfalse(held.__contains__, names))


class PreviousOutputs:
    """The output files of a game's previous build, for the build now writing its staging folder to keep those
    it would make again, not made again.

    A file is kept only when the previous build noted the same content key for it, it is still as that build
    sealed it (size and time), has the mode bits cardgen writes and no other link (nobody linked it elsewhere).
    An output edited by hand is made again, and nothing is ever linked from the cache: a designer editing an
    output file in place changes that file only. The previous folder stays as it was until `put_in_place`.

    A kept file stays where it is, in the previous folder (nothing is written for it), until `put_in_place`
    decides how the build goes in: the few files an edit made moved into the previous folder, or, for a build
    that made many, the kept files hard-linked (copied where links fail) into the staging folder swapped in whole.
    """

    def __init__(self, final: Path, staging: Path, in_place: bool = True) -> None:
        self.final, self.staging = final, staging
        # Stamps this process wrote (not another's, or a copy put back): the folder's files were looked at against
        # them, so that the kernel's events since then tell which changed (`_check_trusted`).
        self.read_as = file_identity(final / STAMPS)
        self.own_stamps = self.read_as in _WRITTEN
        try:
            stamps = _read_stamps(final / STAMPS)  # read once: ~150 KB at 1,000 cards
            sealed, made = stamps["outputs"], stamps.get("made", {})
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            sealed = made = None
        self.sealed: dict = sealed if isinstance(sealed, dict) else {}
        self.keys: dict = made if self.sealed and isinstance(made, dict) else {}
        self.made: dict[str, str] = {}  # what this build made or kept: content key by path in the output folder
        self.placed: list[str] = []  # those of them not kept on trust (`keep_trusted`: the same keys as the last)
        # (size, time, mode) of each kept file, or for one kept on trust the stamps' [size, time] itself (`_state`)
        self.kept: dict[str, tuple[int, ...] | list[int]] = {}
        # Without `in_place` (a stage reads card files from the staging folder: see `Stage.while_drawing`) each kept
        # file is linked into it as it is kept, and the folder is swapped in whole.
        self.linked = not in_place
        self._aside: list[Path] = []  # the previous folder's files an edit replaced or deleted (`_set_aside`)
        self.trusted: dict[str, Path | str] = {}  # kept unread (see `place`): its target in the staging folder,
        self.makers: dict[str, Callable[[Path], object]] = {}  # and what makes it there if it changed
        # kept unread by `keep_trusted`: the files (their content keys by name), the folder their targets are in and
        # what makes them there, a triple for many
        self.trusted_in: list[tuple[dict[str, str], str, Callable[[Path], object]]] = []
        self.looked: list[str] = []  # the files kept as they were looked at (`_keep`), not on trust
        self.changed: set[str] | None = None  # the files the kernel named as changed then (`folderwatch`)

    def place(self, target: Path | str, key: str, make: Callable[[Path], object], name: str | None = None,
              trust: bool = False) -> bool:
        """Put the file of content `key` at `target` in the staging folder: the previous build's, when it made
        the same (kept where it is: see `put_in_place`), else `make(target)`. `name` is its path in the output
        folder when `target` is elsewhere (in a folder swapped in later). Returns True when the file was made,
        False when it was kept.

        With `trust` (a card file: `make` can make it at any time) in a process that builds again, the previous
        file is taken for what the stamps say it is, unread: `put_in_place` looks at it once, at the end (as it
        looks at every kept file), and makes it then if it is not (~1,000 `stat`s less in a 1,000-card edit).
        `target` may be text (a card file's: a Path is made only of a file made or looked at)."""
        name = name or Path(target).relative_to(self.staging).as_posix()
        if self.made.get(name) == key and (name in self.kept or os.path.isfile(target)):  # placed already (a back on
            return False  # several TTS sheets)
        self.made[name] = key
        self.placed.append(name)
        self.kept.pop(name, None)
        if self.keys.get(name) == key:
            sealed = self.sealed.get(name)
            if trust and builds_again() and not self.linked and isinstance(sealed, list):
                self.kept[name] = sealed
                self.trusted[name], self.makers[name] = target, make
                return False
            if self._keep(name, Path(target)):
                return False
        make(Path(target))
        return True

    def keep_trusted(self, names: list[str], keys: list[str], folder: str,
                     make: Callable[[Path], object]) -> list[bool]:
        """`place` with `trust` of many files at once (the card files an edit finds in the cache), by C loops, not a
        Python step a file (~45-60 ms an edit at 10,000 cards): for each, whether it was kept on trust (made by
        `make(target)`, the target `folder/name`, if `put_in_place` finds it changed); the others are left to
        `place`."""
        if not builds_again() or self.linked or self.made and any(map(self.made.__contains__, names)):
            return [False] * len(names)
        sealed: list = list(map(self.sealed.get, names))  # (a file's [size, time], else anything)
        kept = list(map(operator.and_, map(operator.eq, map(self.keys.get, names), keys),
                        map(isinstance, sealed, itertools.repeat(list))))
        if not all(kept):  # (an edit keeps all it found: no list taken apart then)
            names, keys, sealed = (list(itertools.compress(items, kept)) for items in (names, keys, sealed))
        made = dict(zip(names, keys))
        self.made.update(made)  # (a copy, the first time: no look-up)
        # No new object for each of 10,000 files (a (size, time, mode) and a (target, make) each: ~30,000 objects the
        # garbage collector walked, ~3-4 ms of an edit's passes; `_state`; the folder and maker one pair for all its
        # files, `made` itself telling which: 10,000 texts made and kept, or a dict of the pair by name, were ~1.5 ms)
        self.kept.update(zip(names, sealed))
        self.trusted_in.append((made, folder, make))
        return kept

    def _trusted_at(self, name: str) -> tuple[str, Callable[[Path], object]] | None:
        """The target and maker of a file kept on trust (see `place` and `keep_trusted`), or None."""
        if name in self.trusted:
            return str(self.trusted[name]), self.makers[name]
        for files, folder, make in self.trusted_in:
            if name in files:
                return f"{folder}/{name}", make
        return None

    def _check_trusted(self) -> None:
        """Look at each file kept on trust (see `place`) that may have changed (all, unless `folderwatch` tells which
        did): one that is not as the stamps say (edited, or linked elsewhere, since it was sealed) is not kept but
        made now, into the staging folder."""
        from cardgen.core.folderwatch import changed_since

        final = str(self.final)  # (a path as text: a Path made for each file took ~3.5 of these ~6 ms at 1,000 cards)
        # Only the files the kernel says changed since the last build looked, when it can say (`folderwatch`) and the
        # stamps are this process's own: a `stat` of each of 10,000 kept files took ~30 ms of an edit. The others are
        # as that build left them.
        self.changed = changed_since(self.final)
        changed = self.changed if self.own_stamps else None
        names = itertools.chain(self.trusted, *(files for files, _, _ in self.trusted_in)) if changed is None else \
            changed
        for name in names:
            trusted = self._trusted_at(name)
            if trusted is None or name not in self.kept:
                continue
            try:
                state = _file_state(f"{final}/{name}")
            except OSError:
                state = None
            if state is None or state != (*_state(self.kept[name]), 1):
                del self.kept[name]
                trusted[1](Path(trusted[0]))

    def _keep(self, name: str, target: Path) -> bool:
        """Whether the previous build's file `name` is as it sealed it, and so kept (noted in `kept`; linked to
        `target` when the kept files are linked as they are kept)."""
        sealed = self.sealed.get(name)
        try:
            state = _file_state(f"{self.final}/{name}")  # (text: see `_check_trusted`)
        except OSError:
            return False
        if not isinstance(sealed, list) or list(state) != [*sealed, FILE_MODE, 1]:
            return False
        kept = self._link(name, state[:3], target) if self.linked else state[:3]
        if kept is None:
            return False
        self.kept[name] = kept
        self.looked.append(name)
        return True

    def _link(self, name: str, state: tuple[int, ...], target: Path | None = None) -> tuple[int, ...] | None:
        """Hard-link the kept file `name` (as it was: `state`) into the staging folder, or to `target` (a copy where
        links fail); its state there, or None (nothing left there) when the file was written to meanwhile."""
        source, target = self.final / name, target or self.staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:  # another file system, or one without hard links: a copy of it
            write_atomic(target, functools.partial(shutil.copyfile, source))
        if _file_state(source)[:3] != state:  # written to meanwhile: made instead
            target.unlink()
            return None
        return _file_state(target)[:3]

    def check_kept(self) -> None:
        """Raise when a kept file changed since it was kept (written to during the build): the previous build
        stays in place and the next build makes it again."""
        folder = str(self.staging if self.linked else self.final)  # (a path as text: see `_check_trusted`)
        # Kept where they are: those kept on trust were looked at just now (`_check_trusted`), the others as kept (not
        # 10,000 names gone through to skip them: ~3 ms). Linked into the staging folder: all of them.
        names = self.kept if self.linked else [name for name in self.looked if name in self.kept]
        for name in names:
            state = _state(self.kept[name])
            try:
                unchanged = _file_state(f"{folder}/{name}")[:3] == state
            except OSError:
                unchanged = False
            if not unchanged:
                raise CardgenError(f"{self.final / name} changed while the build was running; the previous "
                                   "output is left as it was: build again")

    def put_in_place(self, seal: Callable[[], None]) -> None:
        """Put the finished build (the staging folder, its build.json and stamps written) in place of the previous
        one, which stays whole until then: when the build made at most MOVED_AT_MOST files (an edit) and the
        previous folder is sealed, those files are moved into it and the files it no longer makes deleted
        (`_move_in`); else the kept files are linked into the staging folder, `seal()` seals it, and it is
        swapped in whole."""
        from cardgen.core import interrupts
        from cardgen.core.folderwatch import looked_at
        from cardgen.core.ownership import STAMP, refuse_foreign
        from cardgen.core.storage import let_go, swap_into_place

        # Its mappings of 10,000 files each, freed once the rebuild has reported (~4 ms of an edit at 10,000 cards)
        after_rebuild(functools.partial(let_go, self))
        self._check_trusted()
        # the stamps of the folders in it among them, but its own (the previous folder has one: it stays)
        made = [name for name in walked(self.staging) if name != STAMP]
        refuse_foreign(self.final.with_name(f".{self.final.name}.old"))  # as the swap would
        # the files sealed and not kept (by C loops: a set of ~20,000 names taken apart was ~2 ms at 10,000 cards)
        replaced = _missing(self.sealed, self.kept)
        if not self.linked and self.sealed and len(made) <= MOVED_AT_MOST \
                and self._writable(list(map(Path, [*made, *replaced]))):
            self.check_kept()
            interrupts.check()  # a Ctrl-C Python lost: the previous output stays
            self._move_in(made, replaced)
            looked_at(self.final, self.changed)
            return
        if not self.linked:
            self.kept = {name: self._link(name, state) or state
                         for name, state in zip(self.kept, map(_state, self.kept.values()))}
            self.linked = True  # (a file written to meanwhile is told by `check_kept`, as it left nothing)
        seal()
        self.check_kept()
        interrupts.check()
        swap_into_place(self.staging, self.final)

    def _writable(self, names: list[Path]) -> bool:
        """Whether the files of `names` can be moved into (or deleted from) the previous folder: the nearest
        folder of each that is there can be written to (a folder made read-only is swapped away, not written)."""
        for parent in {name.parent for name in names}:
            folder = self.final / parent
            while not folder.is_dir() and folder != self.final:
                folder = folder.parent
            if not os.access(folder, os.W_OK):
                return False
        return True

    def _set_aside(self, path: Path, link: bool = False) -> None:
        """Move a file of the previous folder that the build replaces or deletes into the staging folder (`link`:
        link it there, the build's file taking its place next), to be freed with that folder: a process that builds
        again removes it once the build has reported (`ownership.discard`). Freed now where that cannot be done."""
        aside = self.staging / f".set-aside-{len(self._aside)}"
        try:
            if link:
                os.link(path, aside)
            else:
                os.replace(path, aside)
        except OSError:  # no such file, or no hard links here
            return
        self._aside.append(aside)

    def _replace(self, path: Path, target: Path) -> None:
        """Put the build's file `path` at `target` in the previous folder, the file there set aside (see `_set_aside`):
        a large one by swapping the two (`storage.exchange`: the previous file then lies at `path`, freed with the
        staging folder), as a rename over it made ext4 write the new file out first (~15-55 ms an edit at 1,000
        cards, for the print file)."""
        from cardgen.core.storage import EXCHANGE_FROM, exchange

        try:
            swappable = path.stat().st_size >= EXCHANGE_FROM and stat_module.S_ISREG(os.lstat(target).st_mode)
        except OSError:  # nothing there yet
            swappable = False
        if swappable and exchange(path, target):
            return
        self._set_aside(target, link=True)
        os.replace(path, target)

    def _move_in(self, made: list[str], replaced: list[str]) -> None:
        """Move the files the build made into the previous folder and delete those it no longer makes, sealing
        the result with only the made files' stamps taken anew (the kept files' are the ones just checked);
        `replaced`: the files sealed that it did not keep.

        The previous stamps go first and the new ones last: a build stopped between them leaves a folder
        without stamps, which no later build keeps anything of or calls current (it is built again whole)."""
        from cardgen.core.ownership import STAMP

        names = {name: self.staging / name for name in made}
        stamps = dict(_read_stamps(self.staging / STAMPS))  # (the record's and settings': the build's own)
        # the made files' stamps (a rename keeps them), the folder's own among them (it stays)
        fresh = {name: [state.st_size, state.st_mtime_ns]
                 for name, path in [*names.items(), (STAMP, self.final / STAMP)] if name not in (STAMPS, "build.json")
                 for state in (path.stat(),)}
        gone = _missing(replaced, fresh)  # (sealed, not kept and not made again)
        changes = {key: value for key, value in stamps.items() if key not in _CHANGED_BY_ENTRY}
        changes["outputs"] = {**fresh, **dict.fromkeys(gone)}
        changes["made"] = {**{name: self.made[name] for name in self.placed if self.keys.get(name) != self.made[name]},
                           **dict.fromkeys(_missing(self.keys, self.made))}

        def whole() -> dict:
            """The stamps whole: the kept files' as just checked, a copy of all less the few not kept (not 10,000
            looked up one by one: ~3 ms), in the order the files were placed, not sorted as a whole build's (~6 ms
            of an edit at 10,000 cards; the stamps are read as mappings)."""
            outputs = dict(self.sealed)
            for name in replaced:
                del outputs[name]
            outputs.update(fresh)
            return {**stamps, "outputs": outputs, "made": dict(self.made)}

        if not _append_stamps(self.final / STAMPS, self.staging / STAMPS, self.read_as, whole, changes):
            _write_stamps(self.staging / STAMPS, whole())
            (self.final / STAMPS).unlink(missing_ok=True)
        for name, path in names.items():
            if name != STAMPS:
                target = self.final / name
                target.parent.mkdir(parents=True, exist_ok=True)
                self._replace(path, target)
        for name in gone:
            path = self.final / name
            self._set_aside(path)
            path.unlink(missing_ok=True)
            for folder in path.parents:  # a folder it leaves empty goes too (a deck no longer built)
                if folder == self.final or any(folder.iterdir()):
                    break
                folder.rmdir()
        os.replace(self.staging / STAMPS, self.final / STAMPS)

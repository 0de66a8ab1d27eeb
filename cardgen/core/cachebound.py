"""The render cache of an output root (`<out_root>/.cache/`) kept under a bound.

Every edit adds entries (a card's new image, its TTS cell, the new TTS sheet holding it) and the entries it replaced
stay: a watch left running for days on a large game would fill the disk. So once a build has reported (in a watch:
between saves, off the edit's path; never on a build that has nothing to do) the cache is kept under a bound: when it
holds more, the entries no game's latest build uses are deleted, least recently used first.

What a build uses (`built`, saved per game in `.cache/uses/<game>`, as paths in the cache folder) is, each build,
what its stages list whole: every card image it placed (the content keys of its output files), every TTS image,
sheet cell and cover face of its export (`uses`) and every print JPEG, masked image and print-on-demand PDF (looked
up, see LISTED_KINDS); and the entries of any other kind it looked up (`storage.LOOKED_UP`), which stay used while
the game's output folder is there (one per game and kind: its rendered SVGs, layout findings, print pages). A game
with no uses kept uses the card images of its build.json (`_recorded_images`).

Saving the uses and walking the cache take no lock (`settle`): a command started as a watch has just rebuilt is not
refused. The output lock is taken only to delete entries, and a pruning another command's lock holds off is done at
a later settle.

The bound: `CARDGEN_CACHE_LIMIT` (`800M`, `2G`, bytes; `0`: no bound), by default LIVE_TIMES the space the games'
latest builds use, at least FLOOR. The size is counted, not walked, at each build (the entries its uses added); the
cache is walked (once in a process that builds again) only when the count passes the bound. Entries are sealed and
deleted by one unlink each (an entry before its seal file): a reader finds an entry whole or not at all, and makes
again one it does not find. `.cache/ahead/` (a watch's copies) is not touched.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from cardgen.core import storage
from cardgen.core.storage import SEAL_SUFFIX, cache_root, walked, write_text

USES_FOLDER = "uses"  # in the cache folder: each game's latest uses
COUNT_FILE = "size.json"  # in USES_FOLDER: the cache's counted size and the latest builds' (see `_Count`)
NOT_ENTRIES = frozenset({"ahead", USES_FOLDER})  # folders of the cache that hold no entries
# The kinds every build lists whole: an entry of them the latest build does not list is no longer used. It lists
# them by `uses` (every TTS image, cell and cover face of its export) and the card images of its record; and it
# looks each entry of the print's and the print-on-demand's up, keyed by card image or page (`PrintStage.card_work`
# asks for each card image's JPEG and masked streams; `pod` for each PDF and its findings): one more of each an
# edited card, which stayed used for ever while they were not here. Of the other kinds, one entry each per game
# (`KeptByGame`: rendered SVGs, layout findings, template scans, print pages) or per font file (its metrics), what
# a build looked up stays used (a build that keeps its rendered SVGs in memory does not look its entry up again).
LISTED_KINDS = frozenset({"png", "outputs", "tts-cells", "tts-cover", "print-jpeg", "print-masked", "pod"})
_LISTED_PREFIXES = tuple(f"{kind}/" for kind in LISTED_KINDS)
# The default bound: LIVE_TIMES what the latest builds use (room for every card drawn anew, a change of a template or
# of cardgen itself, beside the entries it replaces, and for the entries of the edits before it to go back to), and
# at least FLOOR (a small game's cache, all its history of a week's edits, is tens of MB: never pruned).
LIVE_TIMES = 3
FLOOR = 512 << 20
PRUNED_TO = 0.8  # a pruning goes below the bound by this much: not one at every edit
LIMIT_VARIABLE = "CARDGEN_CACHE_LIMIT"
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)

_LOCK = threading.Lock()
_LISTED: list[Callable[[], Iterable[str]]] = []  # what its stages list, made once it has reported
_BUILT: dict[tuple[Path, str], tuple[set[str], list[Callable[[], Iterable[str]]]]] = {}  # (out root, game) -> those
_INDEX: dict[Path, dict[str, tuple[float, int]]] = {}  # a walked cache's entries: path in it -> (last used, size)
# The uses this process last wrote, by cache folder and game: the file's identity then, and the paths (~1 MB of text at
# 10,000 cards, read back at every edit: ~20 ms)
_USES: dict[tuple[Path, str], tuple[tuple[int, ...] | None, set[str]]] = {}
# In a process that builds again, a pruning deletes at most this many entries, the rest at the next builds': after a
# change that drew every card again (an upgrade of cardgen), deleting the 30,000 entries it replaced at 10,000 cards
# took ~50 s on a loaded disk, which the next save's rebuild would wait for.
PRUNED_AT_MOST = 2000


def noting() -> None:
    """A build starts (past the look at whether it has anything to do): note the entries it looks up."""
    with _LOCK:
        storage.LOOKED_UP, _LISTED[:] = set(), []


def uses(listed: Callable[[], Iterable[str]]) -> None:
    """A stage of the build running lists entries it uses (paths as text), made when the build has reported."""
    if storage.LOOKED_UP is not None:
        _LISTED.append(listed)


def built(out_root: Path, game: str, made: dict[str, str] | None) -> None:
    """The build of `game` into `out_root` ended; when it put its outputs in place (`made`: its output files'
    content keys, its card images' among them), what it used is kept for `settle` (run once it has reported: in a
    process that builds again, with the work left for then, `storage.after_rebuild`). One that wrote nothing (an
    error, its previous outputs kept) leaves the game's uses as they were."""
    with _LOCK:
        noted, listed, storage.LOOKED_UP = storage.LOOKED_UP or set(), list(_LISTED), None
        _LISTED.clear()
    if made is None:
        return
    # Every output file's key as a card image's (one that is not names no entry): listed once it has reported, by a
    # comprehension (10,000 names looked at one by one were ~50 ms)
    png = f"{cache_root(out_root)}/png/"
    listed.append(lambda: [f"{png}{key[:2]}/{key}.png" for key in made.values()])
    _BUILT[(out_root, game)] = (noted, listed)
    storage.after_rebuild(settle)


def settle() -> None:
    """Once the builds have reported: save what each used, then keep each cache under its bound.

    Saving and counting take no lock (each file is written whole, into a stamped cache folder only: see `_keep`), so
    a command started right after a rebuild's report (a print, a tts export) is never refused for it; the output
    lock is taken only to delete entries (`prune`), when the count passes the bound, and an output root another
    command holds is pruned at a later settle instead (its count, kept, still says so)."""
    from cardgen.core.errors import CardgenError

    counts: dict[Path, _Count] = {}
    while _BUILT:  # every game's uses saved before any pruning looks at them
        (out_root, game), (noted, listed) = _BUILT.popitem()
        try:
            count = counts.get(out_root) or _Count.read(cache_root(out_root))
            counts[out_root] = _save_uses(out_root, game, noted, listed, count)
        except OSError:  # (a cache folder cleaned meanwhile: nothing to keep)
            continue
    for out_root, count in counts.items():
        try:
            if _due(count):
                count = prune(out_root, cache_limit())
            count.write(cache_root(out_root))
        except (CardgenError, OSError):
            continue


def _save_uses(out_root: Path, game: str, noted: set[str], listed: list[Callable[[], Iterable[str]]],
               count: _Count) -> _Count:
    """Save what a build of `game` used, the entries it added counted."""
    folder = cache_root(out_root)
    prefix = f"{folder}/"
    start = len(prefix)
    paths = {path[start:] for path in noted if path.startswith(prefix)}  # (not the user's caches)
    paths.update(path[start:] for source in listed for path in source())  # (all in this cache)
    last = _read_uses(folder, game)
    paths.update(path for path in last if not path.startswith(_LISTED_PREFIXES))
    index = _INDEX.get(folder)
    now = time.time()
    for path in paths - last:  # the entries this build added (or used again): counted
        size = _size(folder, path)
        count.total += size
        if index is not None and size:
            index[path] = (now, size)
    if index is not None:  # an entry no longer used was last used now
        for path in last - paths:
            if path in index:
                index[path] = (now, index[path][1])
    if paths != last:
        _keep(folder, game, "\n".join(paths))
        _USES[(folder, game)] = (storage.file_identity(folder / USES_FOLDER / game), paths)
    return count


def _due(count: _Count) -> bool:
    """Whether the cache's count passes its bound (a limit of 0: no bound), so that it is pruned now."""
    limit = cache_limit()
    bound = limit if limit is not None else max(FLOOR, LIVE_TIMES * count.live)
    return bool(bound) and count.total > bound


def _keep(folder: Path, name: str, text: str) -> None:
    """Write a file of USES_FOLDER whole, into the cache folder only while it holds its stamp (FileNotFoundError
    otherwise), and never make the cache folder: `settle` holds no lock, and a `cardgen clean` may have removed the
    folder meanwhile; a `.cache` made again then, without its stamp, would be refused by every later build as the
    designer's own (see `ownership.refuse_foreign`)."""
    from cardgen.core.ownership import STAMP

    if not (folder / STAMP).is_file():
        raise FileNotFoundError(f"{folder} is not a stamped cache folder (cleaned?)")
    (folder / USES_FOLDER).mkdir(exist_ok=True)  # (not its parents)
    write_text(folder / USES_FOLDER / name, text)


def cache_limit() -> int | None:
    """The bound `CARDGEN_CACHE_LIMIT` sets in bytes (0: none), None when it is not set (the default bound); a
    CardgenError when it is not a size."""
    from cardgen.core.errors import CardgenError

    text = os.environ.get(LIMIT_VARIABLE)
    if not text:
        return None
    match = _SIZE.fullmatch(text)
    if match is None:
        raise CardgenError(f"{LIMIT_VARIABLE}={text}: not a size; write it as 800M, 2G or a number of bytes (0: no "
                           "bound on the cache)")
    return int(float(match[1]) * 1024 ** " kmgt".index(match[2].lower() or " "))


class _Count:
    """The cache's size as counted (`total`: walked, then each build's added entries) and the size of the entries
    the latest builds use (`live`, as of the last walk), in `uses/size.json`."""

    def __init__(self, total: int, live: int) -> None:
        self.total, self.live = total, live

    @classmethod
    def read(cls, folder: Path) -> _Count:
        """The count kept; an unknown one (none yet, unreadable) is the bound's: the next check walks the cache."""
        try:
            data = json.loads((folder / USES_FOLDER / COUNT_FILE).read_text(encoding="utf-8"))
            return cls(int(data["total"]), int(data["live"]))
        except (OSError, ValueError, TypeError, KeyError):
            return cls(1 << 62, 0)

    def write(self, folder: Path) -> None:
        """Keep the count (a count, not a ledger: a build of another process saving its uses at the same time may
        lose the other's additions, which the next walk counts again)."""
        _keep(folder, COUNT_FILE, json.dumps({"total": self.total, "live": self.live}))


def prune(out_root: Path, limit: int | None) -> _Count:
    """Walk the cache (once in a process that builds again) and delete the entries no game's latest build uses, least
    recently used first, while it holds more than its bound (`limit`, else the default); the count then. Only the
    deleting holds the output lock (OutputBusy, nothing deleted, when another command holds it): the first settle of
    an output root, its count unknown, walks the cache without it."""
    from cardgen.core.storage import builds_again

    folder = cache_root(out_root)
    index = _INDEX.get(folder)
    if index is None:
        index = _walk(folder)
        if builds_again():
            _INDEX[folder] = index
    live = _live(out_root)
    total = sum(size for _, size in index.values())
    if live is None:  # (a game's uses unknown: nothing pruned, and no walk again until the cache holds 3x as much)
        return _Count(total, total)
    live_size = sum(index[path][1] for path in live if path in index)
    bound = limit or max(FLOOR, LIVE_TIMES * live_size)
    if total > bound:
        total = _deleted(out_root, index, live, total, bound)
    return _Count(total, live_size)


def _deleted(out_root: Path, index: dict[str, tuple[float, int]], live: set[str], total: int, bound: int) -> int:
    """Delete the entries of the index no latest build uses, least recently used first, holding the output lock,
    until the cache holds PRUNED_TO of its bound (at most PRUNED_AT_MOST of them in a process that builds again);
    the cache's size then."""
    from cardgen.core.ownership import output_lock
    from cardgen.core.storage import builds_again

    folder = cache_root(out_root)
    unused = sorted((path for path in index if path not in live), key=lambda path: index[path][0])
    at_most = PRUNED_AT_MOST if builds_again() else len(unused)
    with output_lock(out_root, create=False):
        for path in unused[:at_most]:
            if total <= bound * PRUNED_TO:
                break
            total -= index.pop(path)[1]
            _remove(folder / path)
    return total


def _live(out_root: Path) -> set[str] | None:
    """The entries the latest builds of the games built into the output root (their folders hold a build.json) use,
    or None when one of them cannot tell (see `_recorded_images`): nothing is pruned then."""
    folder = cache_root(out_root)
    try:
        games = [name for name in os.listdir(out_root) if not name.startswith(".") and
                 (out_root / name / "build.json").is_file()]
    except OSError:
        return set()
    live: set[str] = set()
    for game in games:
        used = _read_uses(folder, game) if (folder / USES_FOLDER / game).is_file() else \
            _recorded_images(out_root / game / "build.json")
        if used is None:
            return None
        live |= used
    return live


def _recorded_images(record: Path) -> set[str] | None:
    """What a game with no uses kept (built by a cardgen before this one, or stopped before it saved them) uses: the
    card images its build.json records, the entries its next build would spend most to make again (drawing them);
    its other entries may go, made again by that build, which then saves its uses. None when the record cannot be
    read (a game folder being replaced, or edited by hand): better nothing pruned than its images."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        keys = [entry["hash"] for entry in [*data["cards"], *data["backs"].values()]]
        return {f"png/{key[:2]}/{key}.png" for key in keys}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _read_uses(folder: Path, game: str) -> set[str]:
    """A game's uses kept (as this process last wrote them, while no one else wrote them since)."""
    path = folder / USES_FOLDER / game
    identity = storage.file_identity(path)
    known = _USES.get((folder, game))
    if known is not None and identity is not None and known[0] == identity:
        return known[1]
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(text.split("\n")) if text else set()


def _walk(folder: Path) -> dict[str, tuple[float, int]]:
    """Every entry of the cache (`<kind>/<xx>/<name>`, as `storage.walked` finds it): when it was written and its
    size (seal files, a few bytes each, and temporary files left out)."""
    try:
        found = walked(folder)
    except OSError:  # (no cache yet)
        return {}
    index: dict[str, tuple[float, int]] = {}
    for path, entry in found.items():
        if path.count("/") != 2 or path.partition("/")[0] in NOT_ENTRIES or entry.name.startswith(".") or \
                entry.name.endswith(SEAL_SUFFIX):
            continue
        try:
            stat = entry.stat()
        except OSError:
            continue
        index[path] = (stat.st_mtime, stat.st_size)
    return index


def _size(folder: Path, path: str) -> int:
    try:
        return os.stat(f"{folder}/{path}").st_size
    except OSError:
        return 0


def _remove(entry: Path) -> None:
    """Delete an entry, then its seal file if it has one: an entry without its seal never verifies."""
    for path in (entry, entry.with_name(entry.name + SEAL_SUFFIX)):
        try:
            path.unlink()
        except OSError:
            pass

"""Is the last build still current? Answered from file sizes and times, before any work is done.

A build records the size and modification time of every file it read (the game's data folder,
all templates, icons and fonts, and images named in data). When none of them changed and the
build settings are the same, a rebuild has nothing to do and skips validation and rendering.
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Iterable

from cardgen import __version__
from cardgen.record import BuildRecord

SHARED_FOLDERS = ("templates", "icons", "fonts")
RACY_NS = 2_000_000_000


def _files(root: Path, game: str) -> Iterable[Path]:
    data = root / "data" / game
    if data.is_dir():
        yield from (p for p in data.rglob("*") if "snapshots" not in p.relative_to(data).parts)
    for folder in SHARED_FOLDERS:
        if (root / folder).is_dir():
            yield from (root / folder).rglob("*")


def source_stamp(root: Path, game: str, extra: Iterable[str] = (), recording: bool = False) -> dict[str, list[int]]:
    """Size and modification time of every file a build of `game` reads, by path relative to root.

    When `recording`, a file changed in the last two seconds is stamped as unknown: file times are
    coarse, and an edit of the same size in the same tick would otherwise look unchanged (as git's
    "racy" index entries). The next build then compares contents instead.
    """
    racy_after = time.time_ns() - RACY_NS if recording else None
    stamp: dict[str, list[int]] = {}
    for path in [*_files(root, game), *(root / e for e in extra)]:
        try:
            stat = path.stat()
        except OSError:
            stamp[str(path.relative_to(root))] = [-1, -1]  # gone: differs from any recorded stamp
            continue
        if path.is_file():
            racy = racy_after is not None and stat.st_mtime_ns > racy_after
            stamp[path.relative_to(root).as_posix()] = [-2, -2] if racy else [stat.st_size, stat.st_mtime_ns]
    return stamp


def extra_sources(previous: BuildRecord) -> list[str]:
    """Files a build read outside the folders `source_stamp` scans (images named in data)."""
    scanned = ("data/" + previous.game.name + "/", *(f"{f}/" for f in SHARED_FOLDERS))
    return [p for p in previous.sources if not p.startswith(scanned)]


def settings_key(*parts: object) -> str:
    """A hash of the build settings and the cardgen version."""
    return hashlib.sha256(repr((__version__, *parts)).encode()).hexdigest()[:16]


def is_current(previous: BuildRecord, root: Path, game: str, settings: str) -> bool:
    """True when the previous build used these settings and no file it read has changed since."""
    if previous.settings != settings or not previous.sources:
        return False
    return previous.sources == source_stamp(root, game, extra_sources(previous))

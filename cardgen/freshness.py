"""Is the last build still current? Answered from file sizes and times, before any work is done.

A build records the size and modification time of every file it read (the game's data folder,
all templates, icons and fonts, and images named in data). When none of them changed and the
build settings are the same, a rebuild has nothing to do and skips validation and rendering.

Those stamps are kept beside build.json in a small file of their own, `.build-stamps.json`, together
with the size and time of build.json as the build wrote it: the no-change path reads that one file,
not the whole record, and trusts a record no one has touched since. It runs before anything else is
imported, so this module stays light (no pandas, pydantic, cairosvg, reportlab or Pillow).
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Iterable

from cardgen import __version__
from cardgen.errors import Problem
from cardgen.storage import write_json

SHARED_FOLDERS = ("templates", "icons", "fonts")
RACY_NS = 2_000_000_000
STAMPS = ".build-stamps.json"


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


def _extra_sources(game: str, sources: dict[str, list[int]]) -> list[str]:
    """Files a build read outside the folders `source_stamp` scans (images named in data)."""
    scanned = ("data/" + game + "/", *(f"{f}/" for f in SHARED_FOLDERS))
    return [p for p in sources if not p.startswith(scanned)]


def settings_key(*parts: object) -> str:
    """A hash of the build settings, the cardgen version and its bundled fonts, icons and partials."""
    from cardgen.bundled import bundle_stamp

    return hashlib.sha256(repr((__version__, bundle_stamp(), *parts)).encode()).hexdigest()[:16]


def seal_record(record_path: Path, record: dict) -> None:
    """Write the stamps of a just-written build record next to it (call right after writing it)."""
    stat = record_path.stat()
    write_json(record_path.with_name(STAMPS), {
        "record": [stat.st_size, stat.st_mtime_ns], "settings": record.get("settings"),
        "sources": record.get("sources", {}), "cards": record["stats"]["cards"],
        "warnings": record.get("warnings", [])})


def _output_stamp(out_dir: Path) -> dict[str, list[int]]:
    """Size and modification time of every output file of a build (build.json and its stamps aside)."""
    stamp = {}
    for path in out_dir.rglob("*"):
        if path.is_file() and path.name not in (STAMPS, "build.json"):
            stat = path.stat()
            stamp[path.relative_to(out_dir).as_posix()] = [stat.st_size, stat.st_mtime_ns]
    return stamp


def seal_outputs(out_dir: Path, rewritten: Path | None = None) -> None:
    """Add the stamps of every output file to a build's stamps (call when its outputs are all written), so
    that an output deleted or edited by hand makes the build not current.

    With `rewritten` (a file or folder inside `out_dir` that `cardgen print` or `tts` wrote again), only
    the stamps of what lies there are renewed, and only when the build was current before.
    """
    if rewritten is not None and not outputs_intact(out_dir, but=rewritten.relative_to(out_dir).as_posix()):
        return  # not current before (or no stamps): the next build does its work anyway
    stamps = json.loads((out_dir / STAMPS).read_text(encoding="utf-8"))
    if rewritten is None:
        stamps["outputs"] = _output_stamp(out_dir)
    else:
        prefix = rewritten.relative_to(out_dir).as_posix()
        kept = {k: v for k, v in stamps["outputs"].items() if not (k == prefix or k.startswith(prefix + "/"))}
        stamps["outputs"] = {**kept, **{k: v for k, v in _output_stamp(out_dir).items()
                                        if k == prefix or k.startswith(prefix + "/")}}
    write_json(out_dir / STAMPS, stamps)


def outputs_intact(out_dir: Path, but: str | None = None) -> bool:
    """Whether every output file a build sealed (but those under `but`) is still there as it was written."""
    try:
        outputs = json.loads((out_dir / STAMPS).read_text(encoding="utf-8"))["outputs"]
        for name, (size, mtime_ns) in outputs.items():
            if but is not None and (name == but or name.startswith(but + "/")):
                continue
            stat = (out_dir / name).stat()
            if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns):
                return False
    except (OSError, ValueError, TypeError, KeyError):
        return False
    return True


def record_intact(out_dir: Path) -> bool:
    """Whether build.json is exactly as the build that sealed it wrote it (not edited by hand since)."""
    try:
        recorded = json.loads((out_dir / STAMPS).read_text(encoding="utf-8"))["record"]
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
        stamps = json.loads((out_dir / STAMPS).read_text(encoding="utf-8"))
        if not record_intact(out_dir) or stamps["settings"] != settings:
            return None
        sources = stamps["sources"]
        if not sources or sources != source_stamp(root, game, _extra_sources(game, sources)):
            return None
        if not outputs_intact(out_dir):  # an output deleted or edited by hand: build it again
            return None
        return int(stamps["cards"]), [Problem(**warning) for warning in stamps["warnings"]]
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return None

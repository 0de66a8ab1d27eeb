"""Which folders cardgen may replace or delete: only those it made itself, never the designer's own files.

Every folder cardgen replaces or deletes later (a game's output folder, a staging folder, the cache)
holds a stamp file written when cardgen made it. Before a folder is swapped away or removed its stamp
is checked; a folder without one is left alone and the command stops with a one-line error, unless it is
empty (it holds nothing to lose: an old `serve` left one): then it is stamped and taken. An output
root may not be the workspace, hold it, or hold or lie inside its source folders.
"""
from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from cardgen.core.errors import CardgenError, OutputBusy
from cardgen.core.storage import CACHE_DIR, after_rebuild, builds_again

STAMP = ".cardgen-made"
STAMP_TEXT = "This folder was made by cardgen; `cardgen build` and `cardgen clean` may replace or delete it.\n"
SOURCE_FOLDERS = ("data", "templates", "fonts", "icons", "layouts", "vendors")
# Folders of cardgen's in .cache: a .cache holding only these is cardgen's, stamped or not. An older cardgen made the
# first five before stamps existed; the last two are written after a rebuild's report, holding no lock (the uses of
# `cachebound.settle`, a watch's copies ahead): one made again in the instant a `cardgen clean` removed its folder
# must not make the next build refuse that folder as the designer's.
_CACHE_PARTS = {"png", "svg", "tts-cells", "outputs", "pdf-images", "uses", "ahead"}
LOCK_FILE = ".cardgen.lock"
_LEFTOVER_FOLDER = re.compile(r"\..+\.(building-\w+|building|old)")  # staging and swap folders of a killed run
_LEFTOVER_FILE = re.compile(r"\..+\.tmp")  # a write_atomic temporary of a killed run
_CALIBRATION_FILE = re.compile(r"calibration-[\w-]+\.pdf")  # `cardgen calibrate` writes these
_GAME_NAME = re.compile(r"[^/\\:\x00]+")


def check_game_name(name: str) -> str:
    """A game is named by its folder in data/: one plain folder name, never a path such as ../data/x."""
    if not _GAME_NAME.fullmatch(name) or name in (".", "..") or name.startswith("."):
        raise CardgenError(f"'{name}' is not a game name: name a game by its folder in data/ (for instance "
                           "`cardgen build scrapbots`), not by a path")
    return name


def check_output_root(root: Path, out_root: Path) -> Path:
    """The resolved output root, or an error when it is the workspace, holds it, or holds or lies inside
    one of its source folders (data/, templates/, fonts/, icons/) or cardgen's own package."""
    workspace, out = root.resolve(), out_root.resolve()
    where = f"the output root {out_root}"
    if out == workspace or workspace.is_relative_to(out):
        raise CardgenError(f"{where} is {'the' if out == workspace else 'a folder holding the'} workspace "
                           f"{workspace}; cardgen replaces what it builds there. Choose a folder of its own, "
                           "such as output/ (the default)")
    package = Path(__file__).resolve().parent.parent  # cardgen's own (not `import cardgen`: see `bundled.PACKAGE`)
    for source in [*(workspace / name for name in SOURCE_FOLDERS), package]:
        source = source.resolve()
        if out.is_relative_to(source) or source.is_relative_to(out):
            relation = "is" if out == source else "is inside" if out.is_relative_to(source) else "holds"
            shown = f"{source.name}/" if source.parent == workspace else f"cardgen's own folder {source}"
            raise CardgenError(f"{where} {relation} {shown}, where your own files are; cardgen replaces what "
                               "it builds there. Choose a folder of its own, such as output/ (the default)")
    return out


def mark(folder: Path) -> Path:
    """Make `folder` (and its parents) if needed and stamp it as cardgen's; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = folder / STAMP
    if not stamp.is_file():
        stamp.write_text(STAMP_TEXT, encoding="utf-8")
    return folder


def make_staging(parent: Path, name: str) -> Path:
    """A new stamped staging folder `.<name>.building-<random>` in `parent`, one per build (so two builds
    never share one), with the permissions of a folder made by mkdir."""
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.building-"))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)
    return mark(staging)


def is_ours(folder: Path) -> bool:
    """True when cardgen made `folder`: its stamp, an older cardgen's cache, or a folder inside one of those
    (a game's tts/ folder)."""
    return any(_stamped(f) for f in (folder, folder.parent))


def _stamped(folder: Path) -> bool:
    if (folder / STAMP).is_file():
        return True
    if not folder.is_dir() or folder.is_symlink():
        return False
    # A game's output is known by its stamp alone: a build.json anyone can write (two keys) proves nothing.
    if folder.name != CACHE_DIR:
        return False
    parts = {p.name for p in folder.iterdir()}  # only the cache's own parts inside (see _CACHE_PARTS)
    return bool(parts) and parts <= _CACHE_PARTS


def refuse_foreign(folder: Path) -> None:
    """Raise a clear error when `folder` exists and cardgen did not make it (so it must not be replaced); an empty
    folder is stamped as cardgen's instead."""
    if (folder.exists() or folder.is_symlink()) and not is_ours(folder) and not _took_empty(folder):
        raise CardgenError(f"{folder} exists and was not made by cardgen (it has no {STAMP} file), so it is "
                           "left alone; move it away or choose another output folder with --out")


def _took_empty(folder: Path) -> bool:
    """Stamp `folder` as cardgen's when it is an empty folder (not a link to one), and say so: it holds nothing a
    build could lose. A folder that cannot be read or stamped is left as it is (and refused)."""
    try:
        if folder.is_dir() and not folder.is_symlink() and next(folder.iterdir(), None) is None:
            mark(folder)
            return True
    except OSError:
        pass
    return False


def remove_ours(folder: Path) -> None:
    """Delete a folder cardgen made; refuse one it did not make. A missing folder is fine."""
    refuse_foreign(folder)
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        _delete_stamp_last(folder)


def discard(folder: Path) -> None:
    """Delete a folder cardgen made (see `remove_ours`): now, or in a process that builds again, once the rebuild has
    said what it did (`storage.after_rebuild`). A build's staging folder holds the files an edit replaced or deleted
    (see `PreviousOutputs.put_in_place`: freeing a print file's 87 MB took ~25 ms of a watch's edit); one a stopped
    process left behind is a leftover, which the next command holding the output root's lock removes."""
    if builds_again():
        after_rebuild(functools.partial(_remove_quietly, folder))
    else:
        remove_ours(folder)


def _remove_quietly(folder: Path) -> None:
    """Delete a folder cardgen made, if it is still there (another command may have removed it as a leftover)."""
    try:
        remove_ours(folder)
    except (OSError, CardgenError):
        pass


def _delete_stamp_last(folder: Path) -> None:
    """Delete a folder cardgen made, its stamp last: a deletion stopped half-way (a read-only file) leaves a
    folder still known as cardgen's, which the next command finishes, never one that looks like the
    designer's and blocks every build."""
    if not os.access(folder.parent, os.W_OK):  # the folder itself could not go: delete nothing inside it
        raise PermissionError(errno.EACCES, "Permission denied", str(folder))
    for child in folder.iterdir():
        if child.name != STAMP:
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    (folder / STAMP).unlink(missing_ok=True)
    folder.rmdir()


def clean_output_root(out_root: Path, everything: bool) -> tuple[list[Path], list[Path]]:
    """Delete the cache of an output root, or with `everything` each folder in it cardgen made, and the root
    itself when nothing else is left. Returns (removed, left alone); an error when a removal fails."""
    if not out_root.is_dir():
        return [], []
    with output_lock(out_root):
        targets = sorted(out_root.iterdir()) if everything else [out_root / CACHE_DIR]
        removed: list[Path] = []
        kept: list[Path] = []
        for target in targets:
            if target.name == LOCK_FILE or not (target.exists() or target.is_symlink()):
                continue
            if not (_stamped(target) or _CALIBRATION_FILE.fullmatch(target.name)):
                kept.append(target)
                continue
            try:
                target.unlink() if target.is_file() or target.is_symlink() else _delete_stamp_last(target)
            except OSError as exc:
                done = f"removed before it: {', '.join(p.name for p in removed)}; " if removed else ""
                error = CardgenError(f"cannot remove {target}: {exc.strerror or exc}; {done}nothing after it was "
                                     "removed (check its permissions)")
                error.outputs_unchanged = not removed
                raise error from None
            removed.append(target)
    if everything and not kept:
        try:
            (out_root / LOCK_FILE).unlink(missing_ok=True)
            out_root.rmdir()
        except OSError:
            pass  # another command started writing there meanwhile: the root stays
    return removed, kept


@contextmanager
def output_lock(out_root: Path, create: bool = True) -> Iterator[None]:
    """Hold the lock of an output root: one cardgen command writes into it at a time (build, print, tts, clean).

    A second command stops at once with a clear message instead of mixing its files with the first's. Once
    the lock is held, what killed commands left behind (staging folders, temporary files) is removed.
    Without `create`, a missing output root is not made (there is nothing to protect: the command's own
    error about the missing build follows).
    """
    from filelock import FileLock, Timeout

    if not create and not out_root.is_dir():
        yield
        return
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(out_root / LOCK_FILE, blocking=False)
        lock.acquire()
    except Timeout:
        raise OutputBusy(f"another cardgen command (a build, print, tts or clean) is writing into {out_root} "
                           "right now; wait for it to finish, or stop it, and run this again") from None
    except OSError as exc:
        raise CardgenError(f"cannot write to the output folder: {exc.strerror or exc}; choose another with "
                           "--out or fix its permissions", file=str(out_root)) from None
    try:
        remove_leftovers(out_root)
        yield
    finally:
        lock.release()


def wait_until_free(out_root: Path, seconds: float) -> bool:
    """Wait at most `seconds` for no other command to hold the output root's lock; whether it is free now.

    The lock is taken and given back at once: the command that waited takes it again for its work (another may
    have taken it between: that command waits again)."""
    from filelock import FileLock, Timeout

    try:
        with FileLock(out_root / LOCK_FILE, timeout=max(seconds, 0)):
            return True
    except Timeout:
        return False
    except OSError:  # the root cannot be written: the command's own error says so
        return True


def remove_leftovers(out_root: Path) -> None:
    """Remove what killed commands left in an output root: stamped staging and swap folders, temporary files
    in it and in its game folders (call it holding the output lock)."""
    _remove_leftovers_in(out_root)
    for game in (p for p in out_root.iterdir() if not p.name.startswith(".") and (p / STAMP).is_file()):
        for folder in [game, *(p for p in game.iterdir() if p.is_dir() and not p.name.startswith("."))]:
            _remove_leftovers_in(folder)


def _remove_leftovers_in(folder: Path) -> None:
    for path in list(folder.iterdir()):
        if _LEFTOVER_FOLDER.fullmatch(path.name) and (path / STAMP).is_file():
            _remove_leftover_folder(path)
        elif _LEFTOVER_FILE.fullmatch(path.name) and path.is_file():
            path.unlink(missing_ok=True)


def _remove_leftover_folder(path: Path) -> None:
    """Delete a staging folder; a swap's `.<name>.old` goes back in place when `<name>` is missing (a command
    killed between the two renames of the swap)."""
    final = path.with_name(path.name[1:].removesuffix(".old"))
    if path.name.endswith(".old") and not final.exists():
        os.replace(path, final)
    else:
        shutil.rmtree(path, ignore_errors=True)

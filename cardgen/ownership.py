"""Which folders cardgen may replace or delete: only those it made itself, never the designer's own files.

Every folder cardgen replaces or deletes later (a game's output folder, a staging folder, the cache)
holds a stamp file written when cardgen made it. Before a folder is swapped away or removed its stamp
is checked; a folder without one is left alone and the command stops with a one-line error. An output
root may not be the workspace, hold it, or hold or lie inside its source folders.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from cardgen.errors import CardgenError
from cardgen.storage import CACHE_DIR

STAMP = ".cardgen-made"
STAMP_TEXT = "This folder was made by cardgen; `cardgen build` and `cardgen clean` may replace or delete it.\n"
SOURCE_FOLDERS = ("data", "templates", "fonts", "icons")
# Folders an older cardgen made in .cache before stamps existed: a .cache holding only these is cardgen's.
_LEGACY_CACHE_PARTS = {"png", "svg", "tts-cells", "outputs", "pdf-images"}
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
    package = Path(__file__).resolve().parent
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
    """True when cardgen made `folder`: its stamp, an older cardgen's build output or cache, or a folder
    inside one of those (a game's tts/ folder)."""
    return any(_stamped(f) for f in (folder, folder.parent))


def _stamped(folder: Path) -> bool:
    if (folder / STAMP).is_file():
        return True
    if not folder.is_dir() or folder.is_symlink():
        return False
    if folder.name == CACHE_DIR:  # made before stamps existed: only the cache's own parts inside
        parts = {p.name for p in folder.iterdir()}
        return bool(parts) and parts <= _LEGACY_CACHE_PARTS
    try:  # a game output made before stamps existed: its build.json says so
        record = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and "cardgen" in record and "cards" in record


def refuse_foreign(folder: Path) -> None:
    """Raise a clear error when `folder` exists and cardgen did not make it (so it must not be replaced)."""
    if (folder.exists() or folder.is_symlink()) and not is_ours(folder):
        raise CardgenError(f"{folder} exists and was not made by cardgen (it has no {STAMP} file), so it is "
                           "left alone; move it away or choose another output folder with --out")


def remove_ours(folder: Path) -> None:
    """Delete a folder cardgen made; refuse one it did not make. A missing folder is fine."""
    refuse_foreign(folder)
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


def clean_output_root(out_root: Path, everything: bool) -> tuple[list[Path], list[Path]]:
    """Delete the cache of an output root, or with `everything` each folder in it cardgen made, and the root
    itself when nothing else is left. Returns (removed, left alone); an error when a removal fails."""
    if not out_root.is_dir():
        return [], []
    targets = sorted(out_root.iterdir()) if everything else [out_root / CACHE_DIR]
    removed, kept = [], []
    for target in targets:
        if not (target.exists() or target.is_symlink()):
            continue
        if not (_stamped(target) or _CALIBRATION_FILE.fullmatch(target.name)):
            kept.append(target)
            continue
        try:
            target.unlink() if target.is_file() or target.is_symlink() else shutil.rmtree(target)
        except OSError as exc:
            raise CardgenError(f"cannot remove {target}: {exc.strerror or exc}; check its permissions") from None
        removed.append(target)
    if everything and not kept:
        out_root.rmdir()
    return removed, kept

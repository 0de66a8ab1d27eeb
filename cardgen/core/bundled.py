"""cardgen's own package data: default fonts, the game-icons.net set, shared template partials, `init` files; and
the digests of the package (its code, its files) that are part of every cache key.

A workspace needs only `data/` and `templates/`; its `fonts/`, `icons/` and `templates/` folders add to
these and take precedence over them.
"""
from __future__ import annotations

import hashlib
import importlib
import os
from functools import lru_cache
from pathlib import Path


def _package_folder(name: str) -> Path:
    """The folder of one of cardgen's packages, wherever the installation put it."""
    file = importlib.import_module(name).__file__
    if file is None:  # a namespace package: the folder has lost its __init__.py, which an editable install needs
        raise ImportError(f"{name} has no __init__.py; reinstall cardgen")
    return Path(file).resolve().parent


# The package's folder, found from this module's place in it: not by importing `cardgen`, which would put
# cardgen/__init__.py (its version) into the code of every cache key (`code_digest`), and an upgrade would redraw
# every card.
PACKAGE = Path(__file__).resolve().parent.parent
ASSETS = PACKAGE / "assets"
# The fonts and the icon set are the repository's top-level `fonts/` and `icons/`, shipped as the packages
# `cardgen.assets.fonts` and `cardgen.assets.icons` (pyproject's package-dir): inside the package in a wheel,
# the repository's folders themselves in an editable install. The import system says which.
FONTS_DIR = _package_folder("cardgen.assets.fonts")
ICONS_DIR = _package_folder("cardgen.assets.icons")
ICON_BUNDLE = ICONS_DIR / "game-icons.zip"
ICON_ATTRIBUTION = ICONS_DIR / "ATTRIBUTION.md"
TEMPLATES_DIR = ASSETS / "templates"


def is_bundled(folder: Path) -> bool:
    """Whether a workspace's `fonts/` or `icons/` is cardgen's own bundled set: so are the repository's top-level
    folders when cardgen is installed from it in editable mode (the repository is the example games' workspace
    too). Such a folder is read once, as the bundled set, never again as the workspace's own."""
    return folder.resolve() in (FONTS_DIR, ICONS_DIR)


def own_folders(root: Path, names: tuple[str, ...]) -> list[Path]:
    """The folders of these names that a workspace has of its own: there, and not the bundled set (`is_bundled`)."""
    return [root / name for name in names if (root / name).is_dir() and not is_bundled(root / name)]


def _package_folders() -> dict[Path, str]:
    """Each folder of cardgen's package files, and where its files lie in an installed package."""
    return {PACKAGE: "", FONTS_DIR: "assets/fonts/", ICONS_DIR: "assets/icons/"}


def package_name(path: Path) -> str:
    """A file of cardgen's package named as it lies in an installed package (`assets/fonts/Roboto-Bold.ttf`): the
    name the digests hash, the same in a wheel and in an editable install."""
    for folder, prefix in _package_folders().items():
        if path.is_relative_to(folder):
            return prefix + path.relative_to(folder).as_posix()
    return path.name


def render_inputs() -> list[Path]:
    """Every bundled file that can change how a card renders: fonts, the icon set, shared partials."""
    fonts = sorted(p for p in FONTS_DIR.iterdir() if p.suffix.lower() in (".ttf", ".otf"))
    partials = sorted(p for p in TEMPLATES_DIR.rglob("*") if p.is_file())
    return [*fonts, ICON_BUNDLE, *partials]


def code_files() -> dict[str, str]:
    """Every other file of cardgen's package, its modules and the rest of its assets (compiled bytecode aside: it
    follows from the modules), by its name in an installed package (`package_name`), with its path; in a fixed
    order. Strings, not paths: every process that builds lists them (`codemap.code_map`)."""
    tracked = {str(p) for p in render_inputs()}  # keyed one by one, by the cards that use them (`bundle_digest`...)
    tops = {str(folder): prefix for folder, prefix in _package_folders().items()}
    found = {}
    for top, prefix in tops.items():  # the fonts' and icons' folders lie outside PACKAGE in an editable install
        for folder, subfolders, files in os.walk(top):
            subfolders[:] = sorted(s for s in subfolders if s != "__pycache__" and os.path.join(folder, s) not in tops)
            inside = prefix if folder == top else prefix + os.path.relpath(folder, top).replace(os.sep, "/") + "/"
            for name in sorted(files):
                path = os.path.join(folder, name)
                if not name.endswith((".pyc", ".pyo")) and path not in tracked:
                    found[inside + name] = path
    return found


def _stamp(paths: list[Path]) -> tuple:
    """Path, size and modification time of each file: cheap, and new after any reinstall or edit."""
    return tuple((str(p), s.st_size, s.st_mtime_ns) for p in paths for s in (p.stat(),))


@lru_cache(maxsize=4)
def _digest(stamp: tuple, salt: str = "") -> str:
    """The content hash of the files of a stamp (paths, sizes, times): kept in the user's cache folder (a sealed
    entry, keyed by the stamp and `salt`), else computed from every file's content and kept."""
    from cardgen.core.storage import file_digest, user_store

    cache = user_store("bundle-digest", ".json")
    key = hashlib.sha256(repr((salt, stamp)).encode()).hexdigest()[:32]
    kept = cache.read_json(key) if cache is not None else None
    if isinstance(kept, str) and len(kept) == 32:
        return kept
    digest = hashlib.sha256()
    for name, *_ in stamp:
        path = Path(name)
        digest.update(f"{package_name(path)}:{file_digest(path)}\0".encode())
    value = digest.hexdigest()[:32]
    if cache is not None:
        cache.put_json(key, value)
    return value


@lru_cache(maxsize=1)
def code_stamp() -> tuple[tuple[str, str, int, int], ...]:
    """Each of cardgen's code files (`code_files`): its name, path, size and modification time. Cheap (~170 stats,
    once per process), and new after any edit or reinstall: the no-change check's part (`freshness.settings_key`),
    which must notice any edit of cardgen; what it then makes anew is what the edit changes (`code_digest`)."""
    return tuple((name, path, stat.st_size, stat.st_mtime_ns)
                 for name, path in code_files().items() for stat in (os.stat(path),))


@lru_cache(maxsize=64)
def code_digest(module: str, *more: str) -> str:
    """A content hash of the cardgen code that makes a cache's entries: the import closure of these modules
    (`code_digest(__name__)`, `code_digest("cardgen.raster.pool")`): their files, those of every cardgen module they
    import at any depth, and the files of the asset folders they name (see `codemap`). Part of every cache key, so
    that an upgrade, or an edit of cardgen in an editable install, makes anew what the edit may change and keeps
    the rest (no version number to bump by hand). The render inputs (fonts, icons, partials) are keyed one by one
    where they are used.

    Read from the code map (`codemap.code_map`: one small file read, once per process).
    """
    from cardgen.core.codemap import code_map

    known = code_map()
    return known.digest(known.closure((module, *more)))


def bundle_stamp() -> tuple:
    """Path, size and modification time of every bundled render input: cheap, and new after any reinstall."""
    return _stamp(render_inputs())


def bundle_digest() -> str:
    """A content hash of the bundled render inputs, for cache keys.

    Hashing them (7 MB of fonts and icons) took 20-35 ms of every build that renders, so the hash is kept
    by the files' paths, sizes and modification times (all new after any reinstall): the trust a verified
    cache entry gets (`storage.verify`).
    """
    return _digest(bundle_stamp(), code_digest(__name__))

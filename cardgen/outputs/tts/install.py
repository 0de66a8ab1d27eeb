"""Installing an export into Tabletop Simulator: its data folder per OS, and copying the saved object and its
thumbnail into `Saves/Saved Objects/cardgen/` and the images into `cardgen/<game>/` beside `Saves` (a folder
under Saved Objects would show in the game's Saved Objects menu as an empty entry), with local image URLs
pointed at the copies. A game built in another language installs beside its own: `<Title> (fr).json`, its
images in `cardgen/fr/<game>/`. `cardgen/.installed.json` records which game installed each saved object."""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Callable

from cardgen.core.errors import CardgenError
from cardgen.core.storage import write_atomic, write_json
from cardgen.outputs.tts.urls import file_url

URL_KEYS = ("FaceURL", "BackURL", "ImageURL", "ImageSecondaryURL")
# Which game installed each saved object, in `cardgen/` beside Saves (a game name never starts with a dot).
INSTALLED = ".installed.json"
TTS_IN_DOCUMENTS = Path("My Games") / "Tabletop Simulator"


def default_tts_dir() -> Path:
    """Tabletop Simulator's data folder on this OS (where `Saves/Saved Objects` lives)."""
    home = Path.home()
    if sys.platform.startswith("win"):
        candidates = [documents / TTS_IN_DOCUMENTS for documents in windows_documents()]
        return next((c for c in candidates if (c / "Saves").is_dir()), candidates[0])
    if sys.platform == "darwin":
        return home / "Library" / "Tabletop Simulator"
    return home / ".local" / "share" / "Tabletop Simulator"


def windows_documents() -> list[Path]:
    """Where Windows may keep the Documents folder, most likely first.

    OneDrive's folder backup moves Documents to `%OneDrive%\\Documents`; the shell's own record of the
    folder (the registry's User Shell Folders) knows where it is wherever it was moved.
    """
    found: list[Path] = []
    try:
        import winreg  # only on Windows

        key = winreg.OpenKey(winreg.HKEY_CURRENT_USER,  # type: ignore[attr-defined]
                             r"Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders")
        found.append(Path(os.path.expandvars(winreg.QueryValueEx(key, "Personal")[0])))  # type: ignore[attr-defined]
    except (ImportError, OSError):
        pass
    for variable in ("OneDrive", "OneDriveConsumer", "OneDriveCommercial"):
        if os.environ.get(variable):
            found.append(Path(os.environ[variable]) / "Documents")
    found.append(Path(os.environ.get("USERPROFILE", Path.home())) / "Documents")
    return list(dict.fromkeys(found))


def install_dir(tts_dir: Path | None) -> Path:
    """Tabletop Simulator's data folder to install into; an error if Tabletop Simulator is not there."""
    data_dir = tts_dir or default_tts_dir()
    if not (data_dir / "Saves").is_dir():
        raise CardgenError(f"no Tabletop Simulator data folder at {data_dir} (expected a Saves folder there); "
                           "start Tabletop Simulator once, or pass --tts-dir")
    return data_dir


def install(tts_out: Path, game: str, data_dir: Path, lang: str | None = None) -> Path:
    """Copy an export into Tabletop Simulator's data folder: the saved object and its thumbnail into
    `Saves/Saved Objects/cardgen/`, the images into `cardgen/<game>/`; an export of the game in another language
    `lang` as `<Title> (<lang>).json` with its images in `cardgen/<lang>/<game>/`, beside the game's own.

    Local file:/// image URLs are pointed at the installed copies; hosted URLs stay as they are. Images
    an older export of the game left there (or, before, under Saved Objects) are removed; no other file
    is touched, and a saved object another game installed (one with the same title) is an error, before
    anything is copied. Returns the installed JSON path.
    """
    target = data_dir / "Saves" / "Saved Objects" / "cardgen"
    images_dir = data_dir / "cardgen" / (Path(lang) / game if lang else game)
    [saved_json] = list(tts_out.glob("*.json"))  # export_tts writes exactly one
    stem = f"{saved_json.stem} ({lang})" if lang else saved_json.stem  # the name in the Saved Objects menu
    _claim(target / f"{stem}.json", game, data_dir / "cardgen" / INSTALLED)
    images_dir.mkdir(parents=True, exist_ok=True)
    images = [p for p in tts_out.iterdir() if _is_export_image(p.name, game)]
    names = {p.name for p in images}
    _remove_old_images(images_dir, game, keep=names)
    if lang is None:
        _remove_old_images(target / game, game, keep=set())  # where installs used to put them
    for image in images:
        write_atomic(images_dir / image.name, functools.partial(shutil.copyfile, image))
    local = file_url(tts_out) + "/"
    saved = json.loads(saved_json.read_text(encoding="utf-8"))
    _rewrite_urls(saved, lambda url: file_url(images_dir) + "/" + url[len(local):]
                  if url.startswith(local) else url)
    write_json(target / f"{stem}.json", saved)
    thumbnail = saved_json.with_suffix(".png")
    write_atomic(target / f"{stem}.png", lambda temp: shutil.copyfile(thumbnail, temp))
    return target / f"{stem}.json"


def _claim(saved_object: Path, game: str, ledger_path: Path) -> None:
    """Record in the ledger that `game` installs `saved_object`; an error when it is there and another game
    installed it: two games with one title would otherwise overwrite each other's saved object."""
    try:
        ledger = json.loads(ledger_path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):  # none yet, or unreadable: what was installed before it is unknown
        ledger = {}
    ledger = ledger if isinstance(ledger, dict) else {}
    owner = ledger.get(saved_object.name)
    if saved_object.exists() and owner not in (None, game):
        raise CardgenError(f"Tabletop Simulator's saved object {saved_object.name} was installed by game '{owner}', "
                           "under the same title; nothing was installed. Give one of the two games another "
                           "`title:` in its game.yaml (each title has its own saved object), or delete the file "
                           f"if game '{owner}' no longer uses it", file=str(saved_object))
    if owner != game:
        ledger[saved_object.name] = game
        write_json(ledger_path, ledger)


def _is_export_image(name: str, game: str) -> bool:
    """Whether a file name is one of the images an export of `game` writes: `<game>-...-<hash>.png/.jpg`."""
    return re.fullmatch(rf"{re.escape(game)}-.+-[0-9a-f]{{12}}\.(png|jpg)", name) is not None


def _remove_old_images(folder: Path, game: str, keep: set[str]) -> None:
    """Delete the export images of `game` in a folder except `keep`; the folder too if that empties it."""
    if not folder.is_dir():
        return
    for old in folder.iterdir():
        if _is_export_image(old.name, game) and old.name not in keep:
            old.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def _rewrite_urls(node: object, change: Callable[[str], str]) -> None:
    """Apply `change` to every image URL in a saved-object tree, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in URL_KEYS and isinstance(value, str) and value:
                node[key] = change(value)
            else:
                _rewrite_urls(value, change)
    elif isinstance(node, list):
        for item in node:
            _rewrite_urls(item, change)

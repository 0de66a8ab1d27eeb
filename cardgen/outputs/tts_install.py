"""Installing an export into Tabletop Simulator: its data folder per OS, and copying the saved object, its
thumbnail and images into `Saves/Saved Objects/cardgen/`, with local image URLs pointed at the copies."""
from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Callable

from cardgen.errors import CardgenError
from cardgen.outputs.tts import file_url
from cardgen.storage import write_atomic, write_json

URL_KEYS = ("FaceURL", "BackURL", "ImageURL", "ImageSecondaryURL")


def default_tts_dir() -> Path:
    """Tabletop Simulator's data folder on this OS (where `Saves/Saved Objects` lives)."""
    home = Path.home()
    if sys.platform.startswith("win"):
        documents = Path(os.environ.get("USERPROFILE", home)) / "Documents"
        return documents / "My Games" / "Tabletop Simulator"
    if sys.platform == "darwin":
        return home / "Library" / "Tabletop Simulator"
    return home / ".local" / "share" / "Tabletop Simulator"


def install_dir(tts_dir: Path | None) -> Path:
    """Where `install` puts a game: `<TTS data>/Saves/Saved Objects/cardgen`; an error if TTS is not there."""
    data_dir = tts_dir or default_tts_dir()
    if not (data_dir / "Saves").is_dir():
        raise CardgenError(f"no Tabletop Simulator data folder at {data_dir} (expected a Saves folder there); "
                           "start Tabletop Simulator once, or pass --tts-dir")
    return data_dir / "Saves" / "Saved Objects" / "cardgen"


def install(tts_out: Path, game: str, target: Path) -> Path:
    """Copy an export (JSON, thumbnail, images) into `target` (see `install_dir`), images in `target/<game>/`.

    Local file:/// image URLs are pointed at the installed copies; hosted URLs stay as they are.
    Older images of the same game in the install folder are removed. Returns the installed JSON path.
    """
    images_dir = target / game
    images_dir.mkdir(parents=True, exist_ok=True)
    [saved_json] = list(tts_out.glob("*.json"))  # export_tts writes exactly one
    images = [p for p in tts_out.iterdir() if p.suffix in (".jpg", ".png") and p.name.startswith(f"{game}-")]
    names = {p.name for p in images}
    for stale in images_dir.glob(f"{game}-*"):  # an older export's images: nothing refers to them now
        if stale.name not in names:
            stale.unlink()
    for image in images:
        write_atomic(images_dir / image.name, functools.partial(shutil.copyfile, image))
    local = file_url(tts_out) + "/"
    saved = json.loads(saved_json.read_text(encoding="utf-8"))
    _rewrite_urls(saved, lambda url: file_url(images_dir) + "/" + url[len(local):]
                  if url.startswith(local) else url)
    write_json(target / saved_json.name, saved)
    thumbnail = saved_json.with_suffix(".png")
    write_atomic(target / thumbnail.name, lambda temp: shutil.copyfile(thumbnail, temp))
    return target / saved_json.name


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

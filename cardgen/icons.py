"""Icons: SVG files under `icons/`, looked up by name (or a game's alias) and inlined into cards."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from xml.etree import ElementTree

from cardgen.errors import CardgenError, relative

_MAX_ICON_BYTES = 1_000_000


@dataclass(frozen=True)
class Icon:
    """An icon's drawing: its viewBox and the SVG markup inside its root element."""

    name: str
    path: Path
    viewbox: tuple[float, float, float, float]
    body: str


def _refuse_unsafe(text: str, shown_as: str) -> None:
    if re.search(r"<!DOCTYPE|<!ENTITY", text, re.IGNORECASE):
        raise CardgenError("the SVG has a DOCTYPE or an entity declaration; these are refused "
                           "(they can expand without limit or read other files)", file=shown_as)
    if re.search(r"""(?:href|src)\s*=\s*["'](?!#|data:)""", text):
        raise CardgenError("the SVG refers to an external file or URL; icons must be self-contained",
                           file=shown_as)


@lru_cache(maxsize=512)
def _parse_icon(path: Path, mtime: int, shown_as: str) -> Icon:
    if path.stat().st_size > _MAX_ICON_BYTES:
        raise CardgenError(f"the icon is larger than {_MAX_ICON_BYTES // 1000} kB", file=shown_as)
    text = path.read_text(encoding="utf-8")
    _refuse_unsafe(text, shown_as)
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise CardgenError(f"the icon is not valid SVG: {exc}", file=shown_as) from None
    box = root.get("viewBox") or f"0 0 {root.get('width', '512')} {root.get('height', '512')}"
    try:
        viewbox = tuple(float(v) for v in re.split(r"[\s,]+", box.strip()))
    except ValueError:
        raise CardgenError(f"the icon's viewBox '{box}' is not four numbers", file=shown_as) from None
    if len(viewbox) != 4 or viewbox[2] <= 0 or viewbox[3] <= 0:
        raise CardgenError(f"the icon's viewBox '{box}' is not four numbers with a positive size",
                           file=shown_as)
    body = re.sub(r"^\s*<svg[^>]*>|</svg>\s*$", "", text.strip(), flags=re.DOTALL)
    return Icon(path.stem, path, viewbox, body)


class IconLibrary:
    """Icons of a workspace by file name, plus a game's aliases (`scrap: hexagonal-nut`)."""

    def __init__(self, root: Path, aliases: dict[str, str] | None = None) -> None:
        self.root = root
        self.aliases = aliases or {}
        folder = root / "icons"
        self.files = {p.stem: p for p in sorted(folder.rglob("*.svg"))} if folder.is_dir() else {}

    def names(self) -> list[str]:
        """Every name an icon can be asked for."""
        return sorted(set(self.files) | set(self.aliases))

    def get(self, name: str) -> Icon:
        """The icon for a name or alias; a clear error when there is none."""
        target = self.aliases.get(name, name)
        path = self.files.get(target)
        if path is None:
            import difflib
            close = difflib.get_close_matches(name, self.names(), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise CardgenError(f"unknown icon '{name}' (no icons/**/{target}.svg){hint}")
        return _parse_icon(path, path.stat().st_mtime_ns, relative(path, self.root))

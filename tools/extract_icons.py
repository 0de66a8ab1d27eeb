"""Copy game-icons.net icons out of the npm package @iconify-json/game-icons into icons/game-icons/.

Development helper, never run by cardgen itself (icons are committed, not downloaded at run time):

    npm pack @iconify-json/game-icons && tar xzf iconify-json-game-icons-*.tgz
    python tools/extract_icons.py package/icons.json gears chainsaw ...
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "icons" / "game-icons"


def icon_body(icons: dict, name: str) -> tuple[str, int, int]:
    """Return the SVG body and size of an icon, following aliases."""
    aliases = icons.get("aliases", {})
    while name not in icons["icons"]:
        name = aliases[name]["parent"]
    entry = icons["icons"][name]
    return entry["body"], entry.get("width", icons["width"]), entry.get("height", icons["height"])


def main(argv: list[str]) -> None:
    """Write one standalone SVG file per icon name given on the command line."""
    icons = json.loads(Path(argv[0]).read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    for name in argv[1:]:
        body, width, height = icon_body(icons, name)
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}">'
               f"{body}</svg>\n")
        (OUT / f"{name}.svg").write_text(svg)
        print("wrote", OUT / f"{name}.svg")


if __name__ == "__main__":
    main(sys.argv[1:])

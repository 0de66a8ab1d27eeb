"""Regenerate cardgen's bundled icon set from the npm package @iconify-json/game-icons.

Development helper, never run by cardgen itself (the bundle is committed; nothing is downloaded at run
time). It writes `icons/game-icons.zip` at the repository's top level (installed as
`cardgen/assets/icons/game-icons.zip`, pyproject's package-dir): one standalone SVG per icon (aliases included),
deflated, with fixed timestamps so that the same package version always gives the same bytes; and its index,
`icons/game-icons.index` (where each icon lies in the zip: a first build reads no zip directory).

    cd "$(mktemp -d)" && npm pack @iconify-json/game-icons && tar xzf iconify-json-game-icons-*.tgz
    python tools/build_icon_bundle.py "$PWD/package"

Then update the package version in `icons/ATTRIBUTION.md` if it changed.
"""
from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from cardgen.load.icons import index_bytes, index_file

BUNDLE = Path(__file__).resolve().parent.parent / "icons" / "game-icons.zip"
FIXED_TIME = (2024, 1, 1, 0, 0, 0)


def icon_svg(icons: dict, name: str) -> str:
    """One icon (or alias) of an Iconify JSON set as a standalone SVG document."""
    aliases = icons.get("aliases", {})
    while name not in icons["icons"]:
        name = aliases[name]["parent"]
    entry = icons["icons"][name]
    width, height = entry.get("width", icons.get("width", 16)), entry.get("height", icons.get("height", 16))
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}">{entry["body"]}</svg>\n'


def write_bundle(package: Path, target: Path = BUNDLE) -> int:
    """Write the zip of every icon of an unpacked npm package folder; return the number of icons."""
    icons = json.loads((package / "icons.json").read_text(encoding="utf-8"))
    names = sorted({*icons["icons"], *icons.get("aliases", {})})
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_suffix(".tmp")
    with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bundle:
        for name in names:
            info = zipfile.ZipInfo(f"{name}.svg", FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, icon_svg(icons, name))
    temp.replace(target)
    index_file(target).write_bytes(index_bytes(target))  # where each icon lies: a first build reads no zip directory
    return len(names)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(f"wrote {write_bundle(Path(sys.argv[1]))} icons to {BUNDLE}")

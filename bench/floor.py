"""The floor of the benchmarks: draw SVGs with cairosvg and encode PNGs with Pillow, in one process, nothing else.

Run: python bench/floor.py SVGS.json OUT_DIR   (bench/run.py writes SVGS.json from a game's cards)
SVGS.json lists the very SVG texts a build draws, with their pixel size, DPI, base URL and background;
the PNGs are encoded as the build encodes them (`cardgen.raster.render.encode_png`) and written to OUT_DIR.
Prints one JSON line: {"images": n, "seconds": s}, timing the drawing loop only (imports, fontconfig
and reading SVGS.json are left out, so the floor is as low as it honestly gets).
"""
from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import cairocffi
import cairosvg.parser
import cairosvg.surface
from PIL import Image

from cardgen.load.fonts import configure_fontconfig
from cardgen.raster.render import encode_png


def fetch(url: str, resource_type: str) -> bytes:
    """Read file: and data: URLs, as a build does (without its checks)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "data":
        with urllib.request.urlopen(url) as response:
            return response.read()
    return Path(urllib.parse.unquote(parsed.path)).read_bytes()


def draw_and_encode(item: dict, target: Path) -> None:
    """One SVG to one PNG file: cairosvg draws to a surface, Pillow encodes."""
    tree = cairosvg.parser.Tree(bytestring=item["svg"].encode(), url=item["base_url"], url_fetcher=fetch)
    surface = cairosvg.surface.PNGSurface(tree, None, item["dpi"], output_width=item["width"],
                                          output_height=item["height"],
                                          background_color=None if item["transparent"] else "white").cairo
    surface.flush()
    # Unpacked from cairo's own buffer into an image not filled first, as cardgen's render.draw_svg does: the floor
    # is the cheapest honest draw and encode.
    mode, raw_mode = ("RGBA", "BGRa") if item["transparent"] else ("RGB", "BGRX")
    image = Image.new(mode, (surface.get_width(), surface.get_height()), None)
    image.frombytes(surface.get_data(), "raw", raw_mode, surface.get_stride(), 1)
    target.write_bytes(encode_png(image))


def main() -> None:
    """Draw every SVG of the list and print the seconds it took."""
    listing, out = Path(sys.argv[1]), Path(sys.argv[2])
    spec = json.loads(listing.read_text())
    configure_fontconfig([Path(d) for d in spec["font_dirs"]])
    cairosvg.surface.TEXT_ANTIALIAS["geometricPrecision"] = cairocffi.ANTIALIAS_GRAY  # as cardgen draws text
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for number, item in enumerate(spec["items"]):
        draw_and_encode(item, out / f"{number}.png")
    print(json.dumps({"images": len(spec["items"]), "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()

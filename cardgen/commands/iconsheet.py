"""Preview sheets of icons: each icon drawn with its name under it, written as one PNG."""
from __future__ import annotations

from pathlib import Path

from markupsafe import escape

from cardgen.core.errors import CardgenError
from cardgen.load.icons import Icon
from cardgen.svg.text import icon_svg

CELL = 180  # px per icon cell
ICON = 128
COLUMNS = 6


def sheet_svg(icons: list[Icon], color: str = "#1d1d1d") -> tuple[str, int, int]:
    """The SVG of a preview sheet and its pixel size."""
    columns = min(COLUMNS, len(icons))
    rows = -(-len(icons) // columns)
    width, height = columns * CELL, rows * (CELL + 20)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}"><rect width="{width}" height="{height}" fill="#ffffff"/>']
    for i, icon in enumerate(icons):
        x, y = (i % columns) * CELL, (i // columns) * (CELL + 20)
        parts.append(icon_svg(icon, x + (CELL - ICON) / 2, y + 12, ICON, color))
        name = icon.name if len(icon.name) <= 24 else icon.name[:23] + "…"
        parts.append(f'<text x="{x + CELL / 2}" y="{y + ICON + 42}" font-family="Roboto Condensed" font-size="17" '
                     f'text-anchor="middle" fill="#333333">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts), width, height


def write_sheet(icons: list[Icon], target: Path, color: str = "#1d1d1d") -> Path:
    """Draw a preview sheet of icons to a PNG file."""
    from cardgen.core.storage import write_atomic
    from cardgen.load.fonts import configure_fontconfig
    from cardgen.raster.render import draw_svg

    configure_fontconfig([])
    svg, width, height = sheet_svg(icons, color)
    folder = target.parent.resolve()  # a file URI names an absolute path (--out preview.png is relative)
    image = draw_svg(svg, width, height, 96, folder, folder.as_uri() + "/")
    try:
        write_atomic(target, lambda temp: image.save(temp, format="PNG"))
    except OSError as exc:  # a folder that cannot be made or written, a full disk
        raise CardgenError(f"cannot write the preview: {exc.strerror or exc}; choose another file with --out",
                           file=str(target)) from None
    return target

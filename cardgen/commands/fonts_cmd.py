"""`cardgen fonts`: the font families templates can use, the workspace's and cardgen's bundled ones."""
from __future__ import annotations

from pathlib import Path

import click

STYLES = {(False, False): "regular", (False, True): "italic", (True, False): "bold", (True, True): "bold italic"}


def list_fonts(root: Path) -> None:
    """Print each family with its styles and where it comes from, then how to add one."""
    from cardgen.core.bundled import FONTS_DIR
    from cardgen.load.fonts import FontBook

    book = FontBook(root / "fonts")
    for family in book.families:
        faces = [f for f in book.faces.values() if f.family == family]
        styles = ", ".join(STYLES[style] for style in sorted({(f.bold, f.italic) for f in faces}))
        where = "bundled" if all(f.path.parent == FONTS_DIR for f in faces) else "fonts/"
        click.echo(f"{family}: {styles} ({where})")
    click.echo("Add a family by copying its static .ttf/.otf files (and license) into fonts/ in the workspace.")

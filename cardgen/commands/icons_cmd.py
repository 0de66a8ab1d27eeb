"""`cardgen icons`, `icons search` and `icons show`: the icons cards can use, found by name and previewed."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cardgen.core.errors import CardgenError

if TYPE_CHECKING:
    from cardgen.load.icons import IconLibrary

MAX_PREVIEW = 120  # icons on the preview sheet of a search


def icons_summary(root: Path, show_credits: bool) -> None:
    """The icons' attribution with `show_credits`, else how many icons there are and how to find them."""
    from cardgen.core.bundled import ICON_ATTRIBUTION
    from cardgen.load.icons import IconLibrary

    if show_credits:
        click.echo(ICON_ATTRIBUTION.read_text(encoding="utf-8"))
        return
    library = IconLibrary(root)
    click.echo(f"{len(library.bundled.names):,} bundled game-icons.net icons (CC BY 3.0; see "
               f"`cardgen icons --credits`), {len(library.files)} in {root / 'icons'}.")
    click.echo("Find names with `cardgen icons search WORD`, see one with `cardgen icons show NAME`.")


def search_icons(root: Path, words: tuple[str, ...], sheet: bool) -> None:
    """Print the icon names holding every one of `words` (an error when none does); with `sheet`, a preview."""
    from cardgen.load.icons import IconLibrary

    library = IconLibrary(root)
    found = library.search(list(words))
    for name in found:
        click.echo(name + ("  (icons/)" if name in library.files else ""))
    if not found:
        raise CardgenError(f"no icon name holds {' and '.join(repr(w) for w in words)}"
                           f"{library.suggest('-'.join(words))}")
    click.echo(f"{len(found)} icon{'' if len(found) == 1 else 's'}", err=True)
    if sheet:
        _write_icon_sheet(root, library, found[:MAX_PREVIEW], "search-" + "-".join(words))


def show_icons(root: Path, names: tuple[str, ...], out: Path | None, color: str) -> None:
    """Write a preview PNG of the icons `names`."""
    from cardgen.load.icons import IconLibrary

    _write_icon_sheet(root, IconLibrary(root), list(names), "-".join(names[:3]), out, color)


def _write_icon_sheet(root: Path, library: IconLibrary, names: list[str], stem: str, out: Path | None = None,
                      color: str = "#1d1d1d") -> None:
    """Write the preview of `names` to `out` (default: output/icons/STEM.png) and say where."""
    from cardgen.commands.iconsheet import write_sheet

    drawn = [library.get(name) for name in names]
    target = write_sheet(drawn, out or root / "output" / "icons" / f"{stem[:80]}.png", color)
    click.echo(f"preview of {len(drawn)} icon(s) -> {target}")

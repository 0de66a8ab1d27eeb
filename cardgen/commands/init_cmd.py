"""`cardgen init`: a new game written by the scaffold (`commands/scaffold.py`), and what to do next."""
from __future__ import annotations

from pathlib import Path

import click


def init_game(root: Path, name: str, size: str, paper: str, decks: str) -> None:
    """Write game `name`'s files, list them, and say the next command."""
    from cardgen.commands.scaffold import InitOptions, create_game, deck_names

    written = create_game(root, name, InitOptions(size, paper, deck_names(decks)))
    for path in written:
        click.echo(f"  wrote {path.relative_to(root)}")
    click.echo(f"{name}: ready. Next: `cardgen build {name}` (or `cardgen serve {name}` to see the cards as you "
               f"edit data/{name}/ and templates/{name}/)")

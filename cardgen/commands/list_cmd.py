"""`cardgen list`: the games of the workspace, their decks and card counts."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import games_of


def list_games(root: Path) -> None:
    """Print each game's title and version, and each deck's card counts and size."""
    from cardgen.load.data import load_deck
    from cardgen.load.manifest import load_game

    for name in games_of(root, ()):
        game = load_game(root, name)
        click.echo(f"{name}: {game.spec.title} v{game.spec.version}")
        for deck_name, deck in game.spec.decks.items():
            cards = load_deck(game, deck_name)
            size = game.deck_size(deck)
            click.echo(f"  {deck_name}: {len(cards)} cards, {sum(c.copies for c in cards)} with copies, "
                       f"{size.width_mm:g} x {size.height_mm:g} mm")

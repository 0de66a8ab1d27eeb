"""The commands of `cardgen`: `cli.py` declares them (their options), and each command's module does its work
(`build_cmd` for build and watch, `list_cmd`, `print_cmd`...). A command parses its options and calls one function.

Modules here import only what their command needs: `cardgen build` with nothing to do loads no pydantic.
"""
from __future__ import annotations

from pathlib import Path

import click


def complete_games(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of game names: the games of the workspace given by --root (or the current folder)."""
    from click.shell_completion import CompletionItem

    from cardgen.load.manifest import list_games

    root = ctx.find_root().params.get("root") or Path(".")
    return [CompletionItem(name) for name in list_games(Path(root)) if name.startswith(incomplete)]


def games_of(root: Path, names: tuple[str, ...]) -> list[str]:
    """The games named, or every game of the workspace when none is; an error when there is none."""
    from cardgen.core.errors import CardgenError
    from cardgen.core.workspace import list_games

    games = list(names) or list_games(root)
    if not games:
        raise CardgenError(f"no games found: expected data/<game>/game.yaml under {root}")
    return games

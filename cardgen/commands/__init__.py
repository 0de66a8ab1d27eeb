"""The commands of `cardgen`: one module per command with logic (build and watch, print, tts); `cli.py` holds the
group and the one-line commands. A command parses its options and calls one function.

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

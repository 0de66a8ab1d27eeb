"""The commands of `cardgen`: one module per command with logic (build and watch, print, tts); `cli.py` holds the
group and the one-line commands. A command parses its options and calls one function.

Modules here import only what their command needs: `cardgen build` with nothing to do loads no pydantic.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import click


def complete_games(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of game names: the games of the workspace given by --root (or the current folder)."""
    from click.shell_completion import CompletionItem

    from cardgen.load.manifest import list_games

    root = ctx.find_root().params.get("root") or Path(".")
    return [CompletionItem(name) for name in list_games(Path(root)) if name.startswith(incomplete)]


def lang_option(what: str) -> Callable[[Callable], Callable]:
    """`--lang LANG` of a command that builds (`build`, `print`, `tts`, `watch`, `serve`): `what` it does, in that
    language, on the build `build --lang` makes in `<out>/<lang>/<game>/`."""
    return click.option("--lang", default=None, metavar="LANG",
                        help=f"{what} in this language of the game's `languages:` (fr), built into "
                             "output/<lang>/<game>/ as `build --lang` does.")


def draft_option(command: Callable) -> Callable:
    """`--draft` of a command that builds (`build`, `watch`, `serve`): a missing image is a placeholder."""
    return click.option("--draft", is_flag=True,
                        help="An image that does not exist yet is drawn as a labelled placeholder (its file name "
                             "and box), with a warning, instead of stopping the build.")(command)

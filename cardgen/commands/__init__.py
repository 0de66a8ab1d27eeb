"""The commands of `cardgen`: `cli.py` declares them (their options), and each command's module does its work
(`build_cmd` for build and watch, `list_cmd`, `print_cmd`...). A command parses its options and calls one function.

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


def games_of(root: Path, names: tuple[str, ...]) -> list[str]:
    """The games named, or every game of the workspace when none is; an error when there is none."""
    from cardgen.core.errors import CardgenError
    from cardgen.core.workspace import list_games

    games = list(names) or list_games(root)
    if not games:
        raise CardgenError(f"no games found: expected data/<game>/game.yaml under {root}")
    return games


def lang_option(what: str) -> Callable[[Callable], Callable]:
    """`--lang LANG` of a command that builds (`build`, `print`, `tts`, `watch`, `serve`): `what` it does, in that
    language, on the build `build --lang` makes in `<out>/<lang>/<game>/`."""
    return click.option("--lang", default=None, metavar="LANG",
                        help=f"{what} in this language of the game's `languages:` (fr), built into "
                             "output/<lang>/<game>/ as `build --lang` does.")


def snapshot_lang_option(command: Callable) -> Callable:
    """`--lang LANG` of `snapshot` and `changes`: the game's build in that language, whose snapshots are its own."""
    return click.option("--lang", default=None, metavar="LANG",
                        help="The game's build in this language of its `languages:` (fr), output/<lang>/<game>/ as "
                             "`build --lang` makes it; its snapshots are kept apart, in data/<game>/snapshots/<lang>/."
                        )(command)


def asked_outputs_options(command: Callable) -> Callable:
    """`build --pod`, `--guides`, ... (and `serve`'s, for its rebuilds): a flag for each registered output a build
    writes only when asked (`cardgen.core.registry.OUTPUTS`, its `build_flag`), given to the command as
    `also_<name>`."""
    from cardgen.core.registry import asked_for

    for name, help_text in reversed(asked_for().items()):
        command = click.option(f"--{name}", f"also_{name}", is_flag=True, help=help_text)(command)
    return command


def asked_outputs(flags: dict[str, bool]) -> tuple[str, ...]:
    """The outputs `asked_outputs_options`' flags ask for, in the order a build runs them."""
    from cardgen.core.registry import asked_for

    return tuple(name for name in asked_for() if flags.get(f"also_{name}"))


def draft_option(command: Callable) -> Callable:
    """`--draft` of a command that builds (`build`, `watch`, `serve`): a missing image is a placeholder."""
    return click.option("--draft", is_flag=True,
                        help="An image that does not exist yet is drawn as a labelled placeholder (its file name "
                             "and box), with a warning, instead of stopping the build.")(command)

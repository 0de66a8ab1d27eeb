"""The `cardgen` command line: each command parses its options and calls one function (`cardgen.commands`).

Heavy libraries (pydantic, cairosvg, reportlab) are imported inside commands so that
`cardgen --help` and `cardgen list` start fast.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from cardgen import __version__
from cardgen.commands import (
    asked_outputs,
    asked_outputs_options,
    complete_games,
    draft_option,
    games_of,
    lang_option,
    snapshot_lang_option,
)
from cardgen.commands.group import CardgenGroup
from cardgen.commands.startup import exit_now  # its start-up patch is made on import, before any command runs
from cardgen.commands.tts_push import push_options, target_of


def run() -> None:
    """The `cardgen` command: `main`, then an exit that leaves freeing the process's objects to the system.

    Python frees every module and object one by one as it exits: ~0.08 s after a build, a tenth of a one-card
    edit (measured). `os._exit` skips that, as mypy ends its runs (`mypy.util.hard_exit`), once everything an
    exit does that can be seen has been done: the atexit functions run and the output streams are flushed. While
    another thread or a child process is still running, the exit is Python's own (it waits for them).
    """
    try:
        main(prog_name="cardgen")
    except SystemExit as end:
        exit_now(end)


@click.group(cls=CardgenGroup)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="Workspace folder holding data/ and templates/ (default: current folder).")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.version_option(__version__, prog_name="cardgen")
@click.pass_context
def main(ctx: click.Context, root: Path, debug: bool) -> None:
    """cardgen: turn card data (CSV/YAML/XLSX) and SVG templates into print-and-play cards."""
    ctx.meta["cardgen.debug"] = debug
    ctx.obj = root.resolve()


@main.command()
@click.argument("games", nargs=-1, shell_complete=complete_games)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root (default: <root>/output).")
@click.option("--svg", "keep_svg", is_flag=True, help="Also keep each card's rendered SVG next to its PNG.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--force", is_flag=True,
              help="Build despite errors: cards whose data has errors or that cannot be drawn are left out, "
                   "the rest is built; the exit code is still 1.")
@asked_outputs_options
@draft_option
@lang_option("Build the games")
@click.pass_obj
def build(root: Path, games: tuple[str, ...], out: Path | None, keep_svg: bool, jobs: int, force: bool, draft: bool,
          lang: str | None, **asked: bool) -> None:
    """Build GAMES (all games when none are named): card PNGs and build.json under output/."""
    from cardgen.commands.build_cmd import build_games

    build_games(root, games_of(root, games), out, jobs, keep_svg, force, asked_outputs(asked), draft, lang)


@main.command("list")
@click.pass_obj
def list_command(root: Path) -> None:
    """Show the games of the workspace, their decks and card counts."""
    from cardgen.commands.list_cmd import list_games

    list_games(root)


@main.command()
@click.option("--paper", default="letter", show_default=True, help="letter, a4, ... or a size such as 210x297mm.")
@click.option("--duplex", type=click.Choice(["long-edge", "short-edge", "none"]), default="long-edge",
              show_default=True, help="How the printer turns the sheet (none: you turn it by hand, long edge).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PDF (default: output/).")
@click.pass_obj
def calibrate(root: Path, paper: str, duplex: Any, out: Path | None) -> None:
    """Write a one-sheet duplex test page to measure the back offset of a printer."""
    from cardgen.commands.calibrate_cmd import calibrate as write_page

    write_page(root, paper, duplex, out)


# ---------------------------------------------------------------- fast regeneration: snapshots, changes, watch

@main.command()
@click.argument("game", shell_complete=complete_games)
@click.argument("name")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--force", is_flag=True, help="Replace an existing snapshot of that name.")
@snapshot_lang_option
@click.pass_obj
def snapshot(root: Path, game: str, name: str, out: Path | None, force: bool, lang: str | None) -> None:
    """Record the current build of GAME as version NAME (e.g. the one you printed)."""
    from cardgen.commands.snapshot_cmd import snapshot as save

    save(root, game, name, out, force, lang)


@main.command()
@click.argument("game", shell_complete=complete_games)
@click.option("--since", "since", required=True, help="Name of a snapshot (see `cardgen snapshot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@snapshot_lang_option
@click.pass_obj
def changes(root: Path, game: str, since: str, out: Path | None, lang: str | None) -> None:
    """List the cards of GAME added, changed or removed since a snapshot, with field changes."""
    from cardgen.commands.snapshot_cmd import changes as show

    show(root, game, since, out, lang)


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--outputs", is_flag=True, help="Also delete every built game, not only the render cache.")
@click.pass_obj
def clean(root: Path, out: Path | None, outputs: bool) -> None:
    """Empty the render cache (and with --outputs, the built games too).

    Only what cardgen made is removed (its folders hold a .cardgen-made stamp); anything else is left alone.
    """
    from cardgen.commands.clean_cmd import clean as remove

    remove(root, out, outputs)


@main.command()
@click.argument("games", nargs=-1, shell_complete=complete_games)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True)
@draft_option
@lang_option("Build and rebuild the games")
@push_options
@click.pass_obj
def watch(root: Path, games: tuple[str, ...], out: Path | None, jobs: int, draft: bool, lang: str | None,
          **push: Any) -> None:
    """Build GAMES, then rebuild whatever an edit to data, templates, icons or fonts affects (Ctrl-C stops)."""
    from cardgen.commands.build_cmd import watch_games

    watch_games(root, games_of(root, games), out, jobs, target_of(**push), draft, lang)


@main.command()
@click.argument("games", nargs=-1, shell_complete=complete_games)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: one line per finding; json: for editors and tools.")
@click.option("--no-layout", is_flag=True, help="Skip the layout layer (it renders every card to SVG).")
@click.option("--lang", default=None, help="Check the game in this one of its languages (fr): its translations.")
@click.pass_context
def validate(ctx: click.Context, games: tuple[str, ...], output_format: str, no_layout: bool,
             lang: str | None) -> None:
    """Check GAMES (all when none are named): manifest, data, references, game rules and layout.

    Prints one line per finding and a summary; exits with 1 when there are errors (warnings alone: 0).
    """
    from cardgen.commands.validate_cmd import validate as check

    if not check(ctx.obj, games, output_format, not no_layout, lang):
        ctx.exit(1)


# ---------------------------------------------------------------- starting a game, icons and fonts

@main.command()
@click.argument("name")
@click.option("--size", default="poker", show_default=True,
              help="Card size: a preset (poker, bridge, mini, mini-euro, tarot, square, business, jumbo), "
                   "optionally 'landscape', or WIDTHxHEIGHT such as 63x88mm.")
@click.option("--paper", default="letter", show_default=True, help="Paper of the print PDF: letter, a4, ...")
@click.option("--decks", default="1", show_default=True,
              help="Number of decks, or their names separated by commas (heroes,monsters).")
@click.pass_obj
def init(root: Path, name: str, size: str, paper: str, decks: str) -> None:
    """Start a new game NAME: manifest, example cards, face and back templates and a README.

    In an empty folder this makes the workspace too; `cardgen build NAME` then works at once.
    """
    from cardgen.commands.init_cmd import init_game

    init_game(root, name, size, paper, decks)


@main.group(invoke_without_command=True)
@click.option("--credits", "show_credits", is_flag=True, help="Print the attribution the icons' license asks for.")
@click.pass_context
def icons(ctx: click.Context, show_credits: bool) -> None:
    """The icons cards can use: the bundled game-icons.net set and the workspace's icons/ folder."""
    from cardgen.commands.icons_cmd import icons_summary

    if show_credits or ctx.invoked_subcommand is None:
        icons_summary(ctx.obj, show_credits)


@icons.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--show", "sheet", is_flag=True, help="Also write a preview PNG of the matches (at most 120).")
@click.pass_obj
def icons_search(root: Path, words: tuple[str, ...], sheet: bool) -> None:
    """List the icon names holding every one of WORDS (e.g. `cardgen icons search sword`)."""
    from cardgen.commands.icons_cmd import search_icons

    search_icons(root, words, sheet)


@icons.command("show")
@click.argument("names", nargs=-1, required=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PNG file to write (default: output/icons/NAME.png).")
@click.option("--color", default="#1d1d1d", show_default=True, help="Colour to draw the icons in.")
@click.pass_obj
def icons_show(root: Path, names: tuple[str, ...], out: Path | None, color: str) -> None:
    """Write a preview PNG of one or more icons (e.g. `cardgen icons show gears cog`)."""
    from cardgen.commands.icons_cmd import show_icons

    show_icons(root, names, out, color)


@main.command()
@click.pass_obj
def fonts(root: Path) -> None:
    """List the font families templates can use: the workspace's fonts/ and cardgen's bundled fonts."""
    from cardgen.commands.fonts_cmd import list_fonts

    list_fonts(root)


@main.command()
@click.argument("game", shell_complete=complete_games)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 to serve on (0: any free port).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True,
              help="Open the gallery in the web browser.")
@asked_outputs_options
@draft_option
@lang_option("Serve the game")
@push_options
@click.pass_obj
def serve(root: Path, game: str, port: int, out: Path | None, jobs: int, open_browser: bool, draft: bool,
          lang: str | None, push: bool, push_dealt: bool, push_port: int, reply_port: int, **asked: bool) -> None:
    """Serve GAME's gallery on localhost; rebuild on every save and reload the page (Ctrl-C stops)."""
    from cardgen.commands.serve_cmd import serve as serve_gallery
    from cardgen.commands.tts_push import target_of

    serve_gallery(root, game, port, asked_outputs(asked), out, jobs, open_browser,
                  target_of(push, push_dealt, push_port, reply_port), draft, lang)


# ---------------------------------------------------------------- playtesting: the numbers, simulations, pictures
# (each command imports its libraries when it runs: pandas for stats, the designer's module for simulate)
from cardgen.commands.showcase_cmd import showcase_command  # noqa: E402
from cardgen.commands.simulate_cmd import simulate_command  # noqa: E402
from cardgen.commands.stats_cmd import stats_command  # noqa: E402

main.add_command(stats_command)
main.add_command(simulate_command)
main.add_command(showcase_command)

"""The `cardgen` command line: each command parses its options and calls one function (`cardgen.commands`).

Heavy libraries (pydantic, cairosvg, reportlab) are imported inside commands so that
`cardgen --help` and `cardgen list` start fast.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from cardgen import __version__
from cardgen.commands import complete_games, draft_option, lang_option
from cardgen.commands.tts_push import push_options, target_of
from cardgen.core.errors import CardgenError
from cardgen.core.registry import OUTPUTS, imported

# pydantic looks for plugins by scanning every installed package's metadata the first time a model is built
# (~20 ms of every build); cardgen uses none. PYDANTIC_DISABLE_PLUGINS set to an empty value loads them.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
PLUGINS_OFF = ("__all__", "1", "true")  # the values with which pydantic's plugin loader loads none


def _no_plugin_loader() -> None:
    """With plugins off, stand in for pydantic's plugin loader (`pydantic.plugin._loader`) with a module that
    finds none, as pydantic's does then: importing pydantic's imports importlib.metadata (10-20 ms of every
    command that builds a model) only to look at PYDANTIC_DISABLE_PLUGINS and return nothing. Nothing is done
    when plugins are on, or when pydantic's loader was imported already."""
    name = "pydantic.plugin._loader"
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in PLUGINS_OFF or name in sys.modules:
        return
    import types

    loader = types.ModuleType(name, "cardgen's stand-in for pydantic's plugin loader, while plugins are off.")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[name] = loader


_no_plugin_loader()


class CardgenGroup(click.Group):
    """A click group that turns CardgenError into readable lines and an exit code.

    The commands of the registered outputs (`cardgen.core.registry.OUTPUTS`: `print`, `tts`, and any output with
    options) have flags derived from an output's options model; they are imported only when named, so that
    `cardgen build` with nothing to do loads none of it.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, the outputs' commands included."""
        return sorted({*super().list_commands(ctx), *_output_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A command by name, importing an output's command now."""
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in _output_commands():
            return command
        output = OUTPUTS[cmd_name]
        if output.command:
            return imported(output.command)
        from cardgen.commands.output_cmd import output_command

        return output_command(cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        """Run a command; show problems as lines, tracebacks only with --debug."""
        from cardgen.core.interrupts import noted, notice_interrupts

        notice_interrupts()
        try:
            return super().invoke(ctx)
        except CardgenError as exc:
            if ctx.meta.get("cardgen.debug"):
                raise
            for problem in exc.problems:
                click.secho(str(problem), fg="red" if problem.severity == "error" else "yellow", err=True)
            unchanged = "; nothing was changed in the output" if exc.outputs_unchanged else ""
            click.echo(f"{len(exc.problems)} problem(s){unchanged}.", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except Exception:
            # A Ctrl-C that lands where Python turns its KeyboardInterrupt into another error (a class being made
            # wraps it in a RuntimeError) is still the designer's Ctrl-C, not a crash.
            if not noted() or ctx.meta.get("cardgen.debug"):
                raise
            _interrupted(ctx)


def _interrupted(ctx: click.Context) -> NoReturn:
    """End a command stopped by Ctrl-C: one line, exit code 130."""
    click.echo("interrupted; previous outputs are left as they were.", err=True)
    ctx.exit(130)


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
        _exit(end)


def _exit(end: SystemExit) -> None:
    """End the process as `end` asks (see `run`)."""
    import atexit
    import threading

    multiprocessing = sys.modules.get("multiprocessing")
    if threading.active_count() > 1 or (multiprocessing is not None and multiprocessing.active_children()):
        raise end
    code = end.code
    if not isinstance(code, int):  # sys.exit's rule: None is success, anything else is printed and fails
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: Python's own exit reports it
        raise end from None
    os._exit(code)


def _output_commands() -> list[str]:
    """The outputs that have a command: their own, or the one every output with options gets."""
    return [name for name, output in OUTPUTS.items() if output.command or output.options]


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


def _games(root: Path, names: tuple[str, ...]) -> list[str]:
    from cardgen.core.workspace import list_games

    games = list(names) or list_games(root)
    if not games:
        raise CardgenError(f"no games found: expected data/<game>/game.yaml under {root}")
    return games


def _reporter():
    """A rich progress bar on a terminal, plain lines otherwise."""
    from cardgen.core.progress import make_reporter

    return make_reporter(sys.stderr.isatty())


@main.command()
@click.argument("games", nargs=-1, shell_complete=complete_games)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root (default: <root>/output).")
@click.option("--svg", "keep_svg", is_flag=True, help="Also keep each card's rendered SVG next to its PNG.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--pod", is_flag=True, help="Also write the print-on-demand files (game.yaml's pod: vendors) to pod/.")
@click.option("--force", is_flag=True,
              help="Build despite errors: cards whose data has errors or that cannot be drawn are left out, "
                   "the rest is built; the exit code is still 1.")
@click.option("--guides", is_flag=True,
              help="Also write guides/: the card images with trim, bleed, safe zone and every text box, icon and "
                   "image box drawn over them (and turn the gallery's guides on). The real outputs do not change.")
@draft_option
@lang_option("Build the games")
@click.pass_obj
def build(root: Path, games: tuple[str, ...], out: Path | None, keep_svg: bool, jobs: int, pod: bool,
          force: bool, guides: bool, draft: bool,
          lang: str | None) -> None:
    """Build GAMES (all games when none are named): card PNGs and build.json under output/."""
    from cardgen.commands.build_cmd import build_games

    build_games(root, _games(root, games), out, jobs, keep_svg, force, pod, guides, draft, lang)


@main.command("list")
@click.pass_obj
def list_command(root: Path) -> None:
    """Show the games of the workspace, their decks and card counts."""
    from cardgen.load.data import load_deck
    from cardgen.load.manifest import load_game

    for name in _games(root, ()):
        game = load_game(root, name)
        click.echo(f"{name}: {game.spec.title} v{game.spec.version}")
        for deck_name, deck in game.spec.decks.items():
            cards = load_deck(game, deck_name)
            size = game.deck_size(deck)
            click.echo(f"  {deck_name}: {len(cards)} cards, {sum(c.copies for c in cards)} with copies, "
                       f"{size.width_mm:g} x {size.height_mm:g} mm")


@main.command()
@click.option("--paper", default="letter", show_default=True, help="letter, a4, ... or a size such as 210x297mm.")
@click.option("--duplex", type=click.Choice(["long-edge", "short-edge", "none"]), default="long-edge",
              show_default=True, help="How the printer turns the sheet (none: you turn it by hand, long edge).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PDF (default: output/).")
@click.pass_obj
def calibrate(root: Path, paper: str, duplex: Any, out: Path | None) -> None:
    """Write a one-sheet duplex test page to measure the back offset of a printer."""
    from cardgen.core.units import parse_paper
    from cardgen.outputs.calibrate import write_calibration_pdf
    from cardgen.outputs.imposition import PrintOptions

    try:
        parse_paper(paper)
    except ValueError as exc:
        raise CardgenError(f"--paper: {exc}") from None
    name = PrintOptions(paper=paper).paper_name
    path = write_calibration_pdf((out or root / "output") / f"calibration-{name}-{duplex}.pdf", paper, duplex)
    click.echo(f"{path}: print it double-sided at 100%, then follow the instructions on it.")


# ---------------------------------------------------------------- fast regeneration: snapshots, changes, watch

@main.command()
@click.argument("game", shell_complete=complete_games)
@click.argument("name")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--force", is_flag=True, help="Replace an existing snapshot of that name.")
@click.pass_obj
def snapshot(root: Path, game: str, name: str, out: Path | None, force: bool) -> None:
    """Record the current build of GAME as version NAME (e.g. the one you printed)."""
    from cardgen.record.changes import save_snapshot
    from cardgen.record.record import BuildRecord

    record = BuildRecord.of_build((out or root / "output") / game)
    path = save_snapshot(record, root, game, name, replace=force)
    click.echo(f"{game}: snapshot '{name}' of {len(record.cards)} cards -> {path.relative_to(root)}")


@main.command()
@click.argument("game", shell_complete=complete_games)
@click.option("--since", "since", required=True, help="Name of a snapshot (see `cardgen snapshot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.pass_obj
def changes(root: Path, game: str, since: str, out: Path | None) -> None:
    """List the cards of GAME added, changed or removed since a snapshot, with field changes."""
    from cardgen.record.changes import describe, diff_records, load_snapshot
    from cardgen.record.record import BuildRecord

    record = BuildRecord.of_build((out or root / "output") / game)
    diff = diff_records(load_snapshot(root, game, since), record)
    click.echo(f"{game} since '{since}': {len(diff.added)} added, {len(diff.changed)} changed, "
               f"{len(diff.removed)} removed")
    if not diff.empty:
        for line in describe(diff):
            click.echo(f"  {line}")


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--outputs", is_flag=True, help="Also delete every built game, not only the render cache.")
@click.pass_obj
def clean(root: Path, out: Path | None, outputs: bool) -> None:
    """Empty the render cache (and with --outputs, the built games too).

    Only what cardgen made is removed (its folders hold a .cardgen-made stamp); anything else is left alone.
    """
    from cardgen.core.ownership import check_output_root, clean_output_root

    out_root = check_output_root(root, out or root / "output")
    removed, kept = clean_output_root(out_root, outputs)
    click.echo(f"removed {', '.join(str(t) for t in removed)}" if removed else f"nothing to remove in {out_root}")
    if kept:
        click.echo(f"left alone (not made by cardgen): {', '.join(str(t) for t in kept)}")


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

    watch_games(root, _games(root, games), out, jobs, target_of(**push), draft, lang)


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
    from cardgen.validate import validate_game
    from cardgen.validate.findings import errors_in, format_json, summary

    results = {name: validate_game(ctx.obj, name, layout=not no_layout, lang=lang) for name in _games(ctx.obj, games)}
    if output_format == "json":
        click.echo(format_json(results))
    else:
        for findings in results.values():
            for finding in findings:
                click.secho(str(finding), fg="red" if finding.severity == "error" else "yellow")
        for name, findings in results.items():
            click.echo(summary(name, findings))
    if any(errors_in(findings) for findings in results.values()):
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
    from cardgen.commands.scaffold import InitOptions, create_game, deck_names

    written = create_game(root, name, InitOptions(size, paper, deck_names(decks)))
    for path in written:
        click.echo(f"  wrote {path.relative_to(root)}")
    click.echo(f"{name}: ready. Next: `cardgen build {name}` (or `cardgen serve {name}` to see the cards as you "
               f"edit data/{name}/ and templates/{name}/)")


@main.group(invoke_without_command=True)
@click.option("--credits", "show_credits", is_flag=True, help="Print the attribution the icons' license asks for.")
@click.pass_context
def icons(ctx: click.Context, show_credits: bool) -> None:
    """The icons cards can use: the bundled game-icons.net set and the workspace's icons/ folder."""
    from cardgen.core.bundled import ICON_ATTRIBUTION
    from cardgen.load.icons import IconLibrary

    if show_credits:
        click.echo(ICON_ATTRIBUTION.read_text(encoding="utf-8"))
    elif ctx.invoked_subcommand is None:
        library = IconLibrary(ctx.obj)
        click.echo(f"{len(library.bundled.names):,} bundled game-icons.net icons (CC BY 3.0; see "
                   f"`cardgen icons --credits`), {len(library.files)} in {ctx.obj / 'icons'}.")
        click.echo("Find names with `cardgen icons search WORD`, see one with `cardgen icons show NAME`.")


@icons.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--show", "sheet", is_flag=True, help="Also write a preview PNG of the matches (at most 120).")
@click.pass_obj
def icons_search(root: Path, words: tuple[str, ...], sheet: bool) -> None:
    """List the icon names holding every one of WORDS (e.g. `cardgen icons search sword`)."""
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
        _write_icon_sheet(root, library, found[:120], "search-" + "-".join(words))


@icons.command("show")
@click.argument("names", nargs=-1, required=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PNG file to write (default: output/icons/NAME.png).")
@click.option("--color", default="#1d1d1d", show_default=True, help="Colour to draw the icons in.")
@click.pass_obj
def icons_show(root: Path, names: tuple[str, ...], out: Path | None, color: str) -> None:
    """Write a preview PNG of one or more icons (e.g. `cardgen icons show gears cog`)."""
    from cardgen.load.icons import IconLibrary

    _write_icon_sheet(root, IconLibrary(root), list(names), "-".join(names[:3]), out, color)


def _write_icon_sheet(root: Path, library, names: list[str], stem: str, out: Path | None = None,
                      color: str = "#1d1d1d") -> None:
    from cardgen.commands.iconsheet import write_sheet

    drawn = [library.get(name) for name in names]
    target = write_sheet(drawn, out or root / "output" / "icons" / f"{stem[:80]}.png", color)
    click.echo(f"preview of {len(drawn)} icon(s) -> {target}")


@main.command()
@click.pass_obj
def fonts(root: Path) -> None:
    """List the font families templates can use: the workspace's fonts/ and cardgen's bundled fonts."""
    from cardgen.core.bundled import FONTS_DIR
    from cardgen.load.fonts import FontBook

    book = FontBook(root / "fonts")
    for family in book.families:
        faces = [f for f in book.faces.values() if f.family == family]
        names = {(False, False): "regular", (False, True): "italic", (True, False): "bold", (True, True): "bold italic"}
        styles = ", ".join(names[style] for style in sorted({(f.bold, f.italic) for f in faces}))
        where = "bundled" if all(f.path.parent == FONTS_DIR for f in faces) else "fonts/"
        click.echo(f"{family}: {styles} ({where})")
    click.echo("Add a family by copying its static .ttf/.otf files (and license) into fonts/ in the workspace.")


@main.command()
@click.argument("game", shell_complete=complete_games)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 to serve on (0: any free port).")
@click.option("--guides", is_flag=True, help="Draw layout guides (also in guides/); the gallery can toggle them.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True,
              help="Open the gallery in the web browser.")
@draft_option
@lang_option("Serve the game")
@push_options
@click.pass_obj
def serve(root: Path, game: str, port: int, guides: bool, out: Path | None, jobs: int, open_browser: bool,
          draft: bool, lang: str | None, **push: Any) -> None:
    """Serve GAME's gallery on localhost; rebuild on every save and reload the page (Ctrl-C stops)."""
    import time

    from cardgen.commands.build_cmd import GUIDES, build_one, output_root
    from cardgen.commands.serve import serve_game
    from cardgen.core.ownership import check_game_name
    from cardgen.outputs.gallery import gallery_state

    if not (root / "data" / game / "game.yaml").is_file():  # no such game: say so, rather than serve its errors
        from cardgen.load.manifest import load_game

        load_game(root, game)
    out_root = output_root(root, out, lang)
    out_dir = out_root / check_game_name(game)
    target = target_of(**push)

    def build_once() -> str:
        build_one(root, game, out_root, jobs, always=GUIDES if guides else (), draft=draft, lang=lang)
        if target is not None:
            from cardgen.commands.tts_push import push_built_game, report

            report(push_built_game(out_dir, target))
        return str(gallery_state(out_dir).get("built", ""))

    try:
        running = serve_game(root, game, out_dir, build_once, port, lambda text: click.secho(text, fg="red", err=True))
    except OSError as exc:
        raise CardgenError(f"cannot serve on port {port}: {exc.strerror or exc}; try --port 0") from None
    click.echo(f"{game}: gallery at {running.url} (rebuilt on every save; Ctrl-C stops)")
    if open_browser:
        import webbrowser

        webbrowser.open(running.url)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        click.echo("stopped serving")
    finally:
        running.stop()


# ---------------------------------------------------------------- playtesting: the numbers, simulations, pictures
# (each command imports its libraries when it runs: pandas for stats, the designer's module for simulate)
from cardgen.commands.showcase_cmd import showcase_command  # noqa: E402
from cardgen.commands.simulate_cmd import simulate_command  # noqa: E402
from cardgen.commands.stats_cmd import stats_command  # noqa: E402

main.add_command(stats_command)
main.add_command(simulate_command)
main.add_command(showcase_command)

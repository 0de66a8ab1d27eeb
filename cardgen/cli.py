"""The `cardgen` command line: parses options, calls pipeline stages, prints results.

Heavy libraries (pandas, cairosvg, reportlab) are imported inside commands so that
`cardgen --help` and `cardgen list` start fast.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cardgen.errors import CardgenError


class CardgenGroup(click.Group):
    """A click group that turns CardgenError into readable lines and an exit code."""

    def invoke(self, ctx: click.Context) -> object:
        """Run a command; show problems as lines, tracebacks only with --debug."""
        try:
            return super().invoke(ctx)
        except CardgenError as exc:
            if ctx.meta.get("cardgen.debug"):
                raise
            for problem in exc.problems:
                click.secho(str(problem), fg="red" if problem.severity == "error" else "yellow", err=True)
            click.echo(f"{len(exc.problems)} problem(s); nothing was changed in the output.", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted; previous outputs are left as they were.", err=True)
            ctx.exit(130)


@click.group(cls=CardgenGroup)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="Workspace folder holding data/ and templates/ (default: current folder).")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@click.version_option(package_name="cardgen")
@click.pass_context
def main(ctx: click.Context, root: Path, debug: bool) -> None:
    """cardgen: turn card data (CSV/YAML/XLSX) and SVG templates into print-and-play cards."""
    ctx.meta["cardgen.debug"] = debug
    ctx.obj = root.resolve()


def _games(root: Path, names: tuple[str, ...]) -> list[str]:
    from cardgen.manifest import list_games

    games = list(names) or list_games(root)
    if not games:
        raise CardgenError(f"no games found: expected data/<game>/game.yaml under {root}")
    return games


def _reporter():
    """A rich progress bar on a terminal, plain lines otherwise."""
    from cardgen.progress import make_reporter

    return make_reporter(sys.stderr.isatty())


@main.command()
@click.argument("games", nargs=-1)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root (default: <root>/output).")
@click.option("--svg", "keep_svg", is_flag=True, help="Also keep each card's rendered SVG next to its PNG.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.pass_obj
def build(root: Path, games: tuple[str, ...], out: Path | None, keep_svg: bool, jobs: int) -> None:
    """Build GAMES (all games when none are named): card PNGs and build.json under output/."""
    from cardgen.build import BuildOptions, build_game
    from cardgen.outputs import default_stages

    options = BuildOptions((out or root / "output").resolve(), jobs, keep_svg)
    problems: list = []
    for name in _games(root, games):
        try:
            result = build_game(root, name, options, _reporter(), default_stages())
        except CardgenError as exc:
            problems += exc.problems
            continue
        for warning in result.warnings:
            click.secho(str(warning), fg="yellow", err=True)
        click.echo(f"{name}: {result.cards} cards ({result.copies} with copies), {result.rendered} drawn, "
                   f"{result.cached} from cache, {result.seconds:.1f}s -> {result.out_dir}")
    if problems:
        raise CardgenError(problems)


@main.command("list")
@click.pass_obj
def list_command(root: Path) -> None:
    """Show the games of the workspace, their decks and card counts."""
    from cardgen.data import load_deck
    from cardgen.manifest import load_game

    for name in _games(root, ()):
        game = load_game(root, name)
        click.echo(f"{name}: {game.spec.title} v{game.spec.version}")
        for deck_name, deck in game.spec.decks.items():
            cards = load_deck(game, deck_name)
            size = game.deck_size(deck)
            click.echo(f"  {deck_name}: {len(cards)} cards, {sum(c.copies for c in cards)} with copies, "
                       f"{size.width_mm:g} x {size.height_mm:g} mm")


@main.command()
@click.argument("game")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root holding the built game (default: <root>/output).")
@click.option("--base-url", default=None,
              help="Write image URLs as URL/<file name> (for images uploaded to a host) instead of file:/// paths.")
@click.option("--format", "image_format", type=click.Choice(["jpeg", "png"]), default=None,
              help="Image format of card sheets and boards (default: the manifest's tts.image_format, jpeg).")
@click.option("--install", "do_install", is_flag=True,
              help="Also copy the export into Tabletop Simulator's Saved Objects folder (cardgen subfolder).")
@click.option("--tts-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Tabletop Simulator's data folder (default: the usual place on this OS).")
@click.pass_obj
def tts(root: Path, game: str, out: Path | None, base_url: str | None, image_format: str | None,
        do_install: bool, tts_dir: Path | None) -> None:
    """Export a built GAME to Tabletop Simulator: deck sheets, tokens, boards and a saved object."""
    from cardgen.manifest import load_game
    from cardgen.outputs.cards import read_build_record
    from cardgen.outputs.tts import TTSOptions, export_tts
    from cardgen.outputs.tts_install import install, install_dir

    loaded = load_game(root, game)
    target = install_dir(tts_dir) if do_install else None  # fail before the work if TTS is not there
    out_dir = (out or root / "output").resolve() / game
    record = read_build_record(out_dir)
    options = TTSOptions.from_spec(loaded.spec.tts, base_url=base_url, image_format=image_format)
    saved = export_tts(loaded, record, out_dir, options)
    click.echo(f"{game}: Tabletop Simulator saved object -> {saved}")
    if target is not None:
        click.echo(f"{game}: installed -> {install(saved.parent, game, target)}")

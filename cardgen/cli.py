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
@click.option("--force", is_flag=True, help="Build even when validation finds errors.")
@click.pass_obj
def build(root: Path, games: tuple[str, ...], out: Path | None, keep_svg: bool, jobs: int, force: bool) -> None:
    """Build GAMES (all games when none are named): card PNGs and build.json under output/."""
    from cardgen.build import BuildOptions, build_game
    from cardgen.outputs import default_stages

    options = BuildOptions((out or root / "output").resolve(), jobs, keep_svg, force)
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
@click.argument("games", nargs=-1)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: one line per finding; json: for editors and tools.")
@click.option("--no-layout", is_flag=True, help="Skip the layout layer (it renders every card to SVG).")
@click.pass_context
def validate(ctx: click.Context, games: tuple[str, ...], output_format: str, no_layout: bool) -> None:
    """Check GAMES (all when none are named): manifest, data, references, game rules and layout.

    Prints one line per finding and a summary; exits with 1 when there are errors (warnings alone: 0).
    """
    from cardgen.validate import validate_game
    from cardgen.validate.findings import errors_in, format_json, summary

    results = {name: validate_game(ctx.obj, name, layout=not no_layout) for name in _games(ctx.obj, games)}
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

"""The `cardgen` command line: parses options, calls pipeline stages, prints results.

Heavy libraries (pandas, cairosvg, reportlab) are imported inside commands so that
`cardgen --help` and `cardgen list` start fast.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cardgen import __version__
from cardgen.errors import CardgenError

if TYPE_CHECKING:
    from cardgen.record import BuildRecord, CardEntry


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
@click.version_option(__version__, prog_name="cardgen")
@click.pass_context
def main(ctx: click.Context, root: Path, debug: bool) -> None:
    """cardgen: turn card data (CSV/YAML/XLSX) and SVG templates into print-and-play cards."""
    ctx.meta["cardgen.debug"] = debug
    ctx.obj = root.resolve()


def _complete_games(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of game names: the games of the workspace given by --root (or the current folder)."""
    from click.shell_completion import CompletionItem

    from cardgen.manifest import list_games

    root = ctx.find_root().params.get("root") or Path(".")
    return [CompletionItem(name) for name in list_games(Path(root)) if name.startswith(incomplete)]


def _games(root: Path, names: tuple[str, ...]) -> list[str]:
    from cardgen.workspace import list_games

    games = list(names) or list_games(root)
    if not games:
        raise CardgenError(f"no games found: expected data/<game>/game.yaml under {root}")
    return games


def _reporter():
    """A rich progress bar on a terminal, plain lines otherwise."""
    from cardgen.progress import make_reporter

    return make_reporter(sys.stderr.isatty())


@main.command()
@click.argument("games", nargs=-1, shell_complete=_complete_games)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root (default: <root>/output).")
@click.option("--svg", "keep_svg", is_flag=True, help="Also keep each card's rendered SVG next to its PNG.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--pod", is_flag=True, help="Also write print-on-demand PNGs (The Game Crafter sizes) to pod/.")
@click.option("--force", is_flag=True,
              help="Build despite errors: cards whose data has errors or that cannot be drawn are left out, "
                   "the rest is built; the exit code is still 1.")
@click.option("--guides", is_flag=True,
              help="Also write guides/: the card images with trim, bleed, safe zone and every text box, icon and "
                   "image box drawn over them (and turn the gallery's guides on). The real outputs do not change.")
@click.pass_obj
def build(root: Path, games: tuple[str, ...], out: Path | None, keep_svg: bool, jobs: int, pod: bool,
          force: bool, guides: bool) -> None:
    """Build GAMES (all games when none are named): card PNGs and build.json under output/."""
    from cardgen.ownership import check_output_root

    out_root = check_output_root(root, out or root / "output")
    problems: list = []
    forced = 0
    for name in _games(root, games):
        try:
            forced += _bring_up_to_date(root, name, out_root, jobs, keep_svg, force, pod, guides)
        except CardgenError as exc:
            problems += exc.problems
    if problems:
        raise CardgenError(problems)
    if forced:
        click.echo(f"built with {forced} error(s) (--force): the cards named above are left out", err=True)
        sys.exit(1)


def _bring_up_to_date(root: Path, name: str, out_root: Path, jobs: int = os.cpu_count() or 1,
                      keep_svg: bool = False, force: bool = False, pod: bool = False, guides: bool = False) -> int:
    """Build one game unless its last build is current, and report what was done; return how many
    errors a forced build left (their cards are out).

    A current build is reported from its build.json alone, without importing the pipeline (pandas,
    cairosvg, reportlab stay unloaded): the settings compared are the ones build_game records.
    """
    from cardgen.freshness import current_build, settings_key
    from cardgen.outputs import stage_names
    from cardgen.ownership import check_game_name

    started = time.perf_counter()
    settings = settings_key(keep_svg, force, stage_names(pod, guides))
    current = current_build(out_root / check_game_name(name), root, name, settings)
    if current is not None:
        _report_current(name, *current, time.perf_counter() - started)
        return sum(f.severity == "error" for f in current[1])
    result = _build_one(root, name, out_root, jobs, keep_svg, force, pod, guides)
    _report_build(result)
    return sum(f.severity == "error" for f in result.findings)


def _build_one(root: Path, name: str, out_root: Path, jobs: int, keep_svg: bool, force: bool, pod: bool,
               guides: bool = False):
    """Run the whole pipeline for one game (imports it on first use)."""
    from cardgen.build import BuildOptions, build_game
    from cardgen.outputs import default_stages

    return build_game(root, name, BuildOptions(out_root, jobs, keep_svg, force), _reporter(),
                      default_stages(pod, guides))


def _report_current(name: str, cards: int, warnings: list, seconds: float) -> None:
    """Print what a current build recorded: its warnings and that there is nothing to do."""
    for finding in warnings:
        click.secho(str(finding), fg="red" if finding.severity == "error" else "yellow", err=True)
    _echo_up_to_date(name, cards, seconds)


def _echo_up_to_date(name: str, cards: int, seconds: float) -> None:
    click.echo(f"{name}: up to date ({cards} cards), nothing to do, {seconds:.1f}s")


def _report_build(result) -> None:
    """Print a build's warnings, what changed since the previous build, and its counts."""
    from cardgen.changes import describe

    for finding in result.findings:
        click.secho(str(finding), fg="red" if finding.severity == "error" else "yellow", err=True)
    name = result.name
    if result.changes is not None and not result.changes.empty:
        for line in describe(result.changes):
            click.echo(f"  {line}")
    if result.up_to_date:
        _echo_up_to_date(name, result.cards, result.seconds)
    else:
        click.echo(f"{name}: {result.cards} cards ({result.copies} with copies), {result.rendered} drawn, "
                   f"{result.cached} from cache, {result.seconds:.1f}s -> {result.out_dir}")


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


def _print_spec(root: Path, game: str, flags: dict):
    """The game's `print:` options with command-line flags (those given) on top."""
    from pydantic import ValidationError

    from cardgen.manifest import PrintSpec, load_game

    spec = load_game(root, game).spec.print_options
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        return PrintSpec.model_validate({**spec.model_dump(), **given})
    except ValidationError as exc:
        raise CardgenError([_flag_problem(e) for e in exc.errors()]) from None


def _flag_problem(error: Any):
    from cardgen.errors import Problem

    flag = "--" + "-".join(str(p) for p in error["loc"]).replace("_", "-") if error["loc"] else "options"
    return Problem(f"{flag}: {error['msg'].removeprefix('Value error, ')}")


_PRINT_CHOICES = {
    "orientation": ["auto", "portrait", "landscape"], "duplex": ["none", "long-edge", "short-edge", "fold"],
    "spacing": ["touching", "gap"], "images": ["png", "jpeg"],
}


@main.command("print")
@click.argument("game", shell_complete=_complete_games)
@click.option("--paper", help="letter, a4, legal, a3 or a size such as 210x297mm (default: game.yaml, letter).")
@click.option("--orientation", type=click.Choice(_PRINT_CHOICES["orientation"]), help="Default: auto (most cards).")
@click.option("--duplex", type=click.Choice(_PRINT_CHOICES["duplex"]),
              help="none: backs in a separate PDF; long-edge/short-edge: back page after each front; "
                   "fold: fronts and mirrored backs on one page, fold in the middle.")
@click.option("--spacing", type=click.Choice(_PRINT_CHOICES["spacing"]),
              help="touching: cards share cuts, bleed clipped; gap: each card keeps its bleed.")
@click.option("--gap", help="Space between cards in gap spacing, e.g. 2mm.")
@click.option("--margin", help="Least distance from cards to the paper edge (default 6.35mm = 1/4 in).")
@click.option("--back-offset", help="X,Y in mm added to back pages (right, up); see `cardgen calibrate`.")
@click.option("--marks/--no-marks", "crop_marks", default=None, help="Crop marks in the margin.")
@click.option("--cut-lines/--no-cut-lines", default=None, help="Thin lines along every trim.")
@click.option("--back-marks/--no-back-marks", default=None, help="Marks on back pages too.")
@click.option("--images", type=click.Choice(_PRINT_CHOICES["images"]), help="png (crisp) or jpeg (smaller).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PDF (default: output/<game>/print).")
@click.option("--changed-since", "since", default=None,
              help="Only the cards added or changed since this snapshot (see `cardgen snapshot`).")
@click.option("--from", "built_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root holding the built game, if it was built with `build --out` (default: <root>/output).")
@click.pass_obj
def print_command(root: Path, game: str, out: Path | None, since: str | None, built_root: Path | None,
                  **flags: object) -> None:
    """Write the print-and-play PDF of GAME, building first whatever is missing or out of date.

    Without flags this is the build's own PDF (one per paper of game.yaml's `print:`). A PDF made with
    other options into output/<game>/print is named after what differs (`scrapbots-a4.pdf`,
    `scrapbots-letter-fold.pdf`) and kept up to date by later builds until you delete it.
    """
    from cardgen.freshness import seal_outputs
    from cardgen.manifest import load_game
    from cardgen.outputs.imposition import PrintOptions
    from cardgen.outputs.kept_prints import keep, pdf_name, read_kept
    from cardgen.outputs.pdf import write_print_pdf
    from cardgen.ownership import check_game_name, check_output_root, output_lock
    from cardgen.record import BuildRecord

    spec = _print_spec(root, game, flags)
    usual = PrintOptions.all_from_spec(load_game(root, game).spec.print_options)
    out_root = check_output_root(root, built_root or root / "output")
    _bring_up_to_date(root, game, out_root)
    build_dir = out_root / check_game_name(game)
    print_dir = (build_dir / "print").resolve()
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        record = BuildRecord.of_build(build_dir)
        cards = None if since is None else _changed_cards(root, game, since, record)
        own, kept = {pdf_name(game, o, usual) for o in usual}, read_kept(print_dir)
        for options in PrintOptions.all_from_spec(spec):
            name = pdf_name(game, options, usual)
            target = (out or print_dir) / name
            if since is not None:
                target = target.with_name(f"{target.stem}-changed-since-{since}.pdf")
            kept_here = since is None and target.parent.resolve() == print_dir  # later builds remake it
            if kept_here and (name in own or kept.get(name) == options) and target.is_file():
                click.echo(f"{game}: {target} (up to date: builds make it)")
                continue
            _write_pdf(game, record, build_dir, options, target, cards, write_print_pdf)
            if kept_here and name not in own:
                keep(print_dir, name, options)
            if target.parent.resolve() == print_dir:  # the build stays current: its own print files
                seal_outputs(build_dir, print_dir)


def _write_pdf(game: str, record, build_dir: Path, options, target: Path, cards, write) -> None:
    """Write one print PDF and report its files, pages and warnings."""
    try:
        result = write(record, build_dir, options, target, cards)
    except OSError as exc:  # a card image gone since the build, or an unwritable folder
        raise CardgenError(f"cannot write the print PDF: {exc}; run `cardgen build {game}` again?") from None
    for warning in result.warnings:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    for path in result.files:
        click.echo(f"{game}: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    click.echo(f"{game}: {result.pages} pages" + (f" + {result.back_pages} back pages" if result.back_pages else ""))


def _changed_cards(root: Path, game: str, since: str, record: BuildRecord) -> list[CardEntry]:
    """The cards of a build added or changed since a snapshot; an error when there are none."""
    from cardgen.changes import describe, diff_records, load_snapshot

    changes = diff_records(load_snapshot(root, game, since), record)
    wanted = changes.card_ids()
    if not wanted:
        raise CardgenError(f"no card of {game} was added or changed since '{since}'; nothing to print")
    for line in describe(changes):
        click.echo(f"  {line}")
    return [card for card in record.cards if card.id in wanted]


@main.command()
@click.option("--paper", default="letter", show_default=True, help="letter, a4, ... or a size such as 210x297mm.")
@click.option("--duplex", type=click.Choice(["long-edge", "short-edge", "none"]), default="long-edge",
              show_default=True, help="How the printer turns the sheet (none: you turn it by hand, long edge).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PDF (default: output/).")
@click.pass_obj
def calibrate(root: Path, paper: str, duplex: Any, out: Path | None) -> None:
    """Write a one-sheet duplex test page to measure the back offset of a printer."""
    from cardgen.outputs.calibrate import write_calibration_pdf
    from cardgen.outputs.imposition import PrintOptions
    from cardgen.units import parse_paper

    try:
        parse_paper(paper)
    except ValueError as exc:
        raise CardgenError(f"--paper: {exc}") from None
    name = PrintOptions(paper=paper).paper_name
    path = write_calibration_pdf((out or root / "output") / f"calibration-{name}-{duplex}.pdf", paper, duplex)
    click.echo(f"{path}: print it double-sided at 100%, then follow the instructions on it.")


# ---------------------------------------------------------------- fast regeneration: snapshots, changes, watch

@main.command()
@click.argument("game", shell_complete=_complete_games)
@click.argument("name")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--force", is_flag=True, help="Replace an existing snapshot of that name.")
@click.pass_obj
def snapshot(root: Path, game: str, name: str, out: Path | None, force: bool) -> None:
    """Record the current build of GAME as version NAME (e.g. the one you printed)."""
    from cardgen.changes import save_snapshot
    from cardgen.record import BuildRecord

    record = BuildRecord.of_build((out or root / "output") / game)
    path = save_snapshot(record, root, game, name, replace=force)
    click.echo(f"{game}: snapshot '{name}' of {len(record.cards)} cards -> {path.relative_to(root)}")


@main.command()
@click.argument("game", shell_complete=_complete_games)
@click.option("--since", "since", required=True, help="Name of a snapshot (see `cardgen snapshot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.pass_obj
def changes(root: Path, game: str, since: str, out: Path | None) -> None:
    """List the cards of GAME added, changed or removed since a snapshot, with field changes."""
    from cardgen.changes import describe, diff_records, load_snapshot
    from cardgen.record import BuildRecord

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
    from cardgen.ownership import check_output_root, clean_output_root

    out_root = check_output_root(root, out or root / "output")
    removed, kept = clean_output_root(out_root, outputs)
    click.echo(f"removed {', '.join(str(t) for t in removed)}" if removed else f"nothing to remove in {out_root}")
    if kept:
        click.echo(f"left alone (not made by cardgen): {', '.join(str(t) for t in kept)}")


@main.command()
@click.argument("games", nargs=-1, shell_complete=_complete_games)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True)
@click.pass_obj
def watch(root: Path, games: tuple[str, ...], out: Path | None, jobs: int) -> None:
    """Build GAMES, then rebuild whatever an edit to data, templates, icons or fonts affects (Ctrl-C stops)."""
    import threading

    from cardgen.build import BuildOptions, build_game
    from cardgen.outputs import default_stages
    from cardgen.watch import watch_games

    names = _games(root, games)
    options = BuildOptions((out or root / "output").resolve(), jobs)

    def rebuild(todo: list[str]) -> None:
        for name in todo:
            try:
                _report_build(build_game(root, name, options, _reporter(), default_stages()))
            except CardgenError as exc:
                for problem in exc.problems:
                    click.secho(str(problem), fg="red", err=True)
                click.echo(f"{name}: not rebuilt; fix the problems above and save again", err=True)

    rebuild(names)
    click.echo(f"watching {root} for changes to {', '.join(names)} (Ctrl-C to stop)")
    try:
        watch_games(root, names, rebuild, threading.Event())
    except KeyboardInterrupt:
        click.echo("stopped watching")


@main.command()
@click.argument("game", shell_complete=_complete_games)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 to serve on (0: any free port).")
@click.option("--guides", is_flag=True, help="Draw layout guides (also in guides/); the gallery can toggle them.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None, help="Output root.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=os.cpu_count() or 1, show_default=True,
              help="Processes drawing cards in parallel.")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True,
              help="Open the gallery in the web browser.")
@click.pass_obj
def serve(root: Path, game: str, port: int, guides: bool, out: Path | None, jobs: int, open_browser: bool) -> None:
    """Serve GAME's gallery on localhost; rebuild on every save and reload the page (Ctrl-C stops)."""
    import time

    from cardgen.outputs.gallery import gallery_state
    from cardgen.ownership import check_game_name, check_output_root
    from cardgen.serve import serve_game

    out_root = check_output_root(root, out or root / "output")
    out_dir = out_root / check_game_name(game)

    def build_once() -> str:
        result = _build_one(root, game, out_root, jobs, False, False, False, guides)
        _report_build(result)
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


@main.command()
@click.argument("game", shell_complete=_complete_games)
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
    """Export GAME to Tabletop Simulator (deck sheets, tokens, boards and a saved object), building first
    whatever is missing or out of date.

    The build writes output/<game>/tts with game.yaml's `tts:` settings; other settings given here
    replace that export until the next build (put them in game.yaml to keep them).
    """
    from cardgen.freshness import seal_outputs
    from cardgen.manifest import load_game
    from cardgen.outputs.tts import TTSOptions, export_tts, saved_object_path
    from cardgen.outputs.tts_install import install, install_dir
    from cardgen.ownership import check_output_root, output_lock
    from cardgen.record import BuildRecord

    loaded = load_game(root, game)
    target = install_dir(tts_dir) if do_install else None  # fail before the work if TTS is not there
    out_root = check_output_root(root, out or root / "output")
    _bring_up_to_date(root, game, out_root)
    out_dir = out_root / game
    options = TTSOptions.from_spec(loaded.spec.tts, base_url=base_url, image_format=image_format)
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        record = BuildRecord.of_build(out_dir)
        saved = saved_object_path(out_dir, record)
        if options != TTSOptions.from_spec(loaded.spec.tts) or not saved.is_file():
            try:
                saved = export_tts(loaded, record, out_dir, options)
                if options == TTSOptions.from_spec(loaded.spec.tts):  # the build's own export: still current
                    seal_outputs(out_dir, saved.parent)
            except OSError as exc:  # a read-only output folder, a full disk
                raise CardgenError(f"cannot write the Tabletop Simulator export: {exc.strerror or exc}",
                                   file=str(out_dir / "tts")) from None
        click.echo(f"{game}: Tabletop Simulator saved object -> {saved}")
        if target is not None:
            click.echo(f"{game}: installed -> {install(saved.parent, game, target)}")


@main.command()
@click.argument("games", nargs=-1, shell_complete=_complete_games)
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
    from cardgen.scaffold import InitOptions, create_game, deck_names

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
    from cardgen.bundled import ICON_ATTRIBUTION
    from cardgen.icons import IconLibrary

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
    from cardgen.icons import IconLibrary

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
    from cardgen.icons import IconLibrary

    _write_icon_sheet(root, IconLibrary(root), list(names), "-".join(names[:3]), out, color)


def _write_icon_sheet(root: Path, library, names: list[str], stem: str, out: Path | None = None,
                      color: str = "#1d1d1d") -> None:
    from cardgen.iconsheet import write_sheet

    drawn = [library.get(name) for name in names]
    target = write_sheet(drawn, out or root / "output" / "icons" / f"{stem[:80]}.png", color)
    click.echo(f"preview of {len(drawn)} icon(s) -> {target}")


@main.command()
@click.pass_obj
def fonts(root: Path) -> None:
    """List the font families templates can use: the workspace's fonts/ and cardgen's bundled fonts."""
    from cardgen.bundled import FONTS_DIR
    from cardgen.fonts import FontBook

    book = FontBook(root / "fonts")
    for family in book.families:
        faces = [f for f in book.faces.values() if f.family == family]
        names = {(False, False): "regular", (False, True): "italic", (True, False): "bold", (True, True): "bold italic"}
        styles = ", ".join(names[style] for style in sorted({(f.bold, f.italic) for f in faces}))
        where = "bundled" if all(f.path.parent == FONTS_DIR for f in faces) else "fonts/"
        click.echo(f"{family}: {styles} ({where})")
    click.echo("Add a family by copying its static .ttf/.otf files (and license) into fonts/ in the workspace.")

"""`cardgen print GAME`: the print-and-play PDF of a built game, with flags derived from the `print:` section."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import complete_games, lang_option
from cardgen.commands.build_cmd import bring_up_to_date, output_root
from cardgen.commands.flags import add_flags, folder_option
from cardgen.core.errors import CardgenError
from cardgen.core.ownership import check_game_name, output_lock
from cardgen.load.freshness import seal_outputs
from cardgen.load.manifest import load_game
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.kept_prints import keep, pdf_name, read_kept
from cardgen.outputs.pdf import PrintStage, write_print_pdf
from cardgen.record.record import BuildRecord, CardEntry


@click.command("print")
@click.argument("game", shell_complete=complete_games)
@folder_option("--out", help="Folder for the PDF (default: output/<game>/print).")
@click.option("--changed-since", "since", default=None,
              help="Only the cards added or changed since this snapshot (see `cardgen snapshot`).")
@folder_option("--from", "built_root",
               help="Output root holding the built game, if it was built with `build --out` (default: <root>/output).")
@lang_option("The PDF of the game")
@add_flags(PrintSpec, "print")
@click.pass_obj
def print_command(root: Path, game: str, out: Path | None, since: str | None, built_root: Path | None,
                  lang: str | None, **flags: object) -> None:
    """Write the print-and-play PDF of GAME, building first whatever is missing or out of date.

    Without flags this is the build's own PDF (one per paper of game.yaml's `print:`). A PDF made with
    other options into output/<game>/print is named after what differs (`scrapbots-a4.pdf`,
    `scrapbots-letter-fold.pdf`) and kept up to date by later builds until you delete it.
    """
    print_game(root, game, flags, out, since, built_root, lang)


def print_game(root: Path, game: str, flags: dict, out: Path | None, since: str | None,
               built_root: Path | None, lang: str | None = None) -> None:
    """Bring the build up to date (in `lang`, under `<built_root>/<lang>/`), then write the PDFs of the manifest's
    `print:` options under the flags given."""
    loaded = load_game(root, game, lang)
    spec = PrintStage.for_game(loaded, flags).config
    usual = PrintStage.for_game(loaded).config.per_paper(root)
    out_root = output_root(root, built_root, lang)
    bring_up_to_date(root, game, out_root, lang=lang)
    build_dir = out_root / check_game_name(game)
    print_dir = (build_dir / "print").resolve()
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        record = BuildRecord.of_build(build_dir)
        cards = None if since is None else changed_cards(root, game, since, record, lang)
        own, kept = {pdf_name(game, o, usual) for o in usual}, read_kept(print_dir, root)
        for options in spec.per_paper(root):
            name = pdf_name(game, options, usual)
            target = (out or print_dir) / name
            if since is not None:
                target = target.with_name(f"{target.stem}-changed-since-{since}.pdf")
            kept_here = since is None and target.parent.resolve() == print_dir  # later builds remake it
            if kept_here and (name in own or kept.get(name) == options) and target.is_file():
                click.echo(f"{game}: {target} (up to date: builds make it)")
                continue
            _write_pdf(game, record, build_dir, options, target, cards)
            if kept_here and name not in own:
                keep(print_dir, root, name, options)
            if target.parent.resolve() == print_dir:  # the build stays current: its own print files
                seal_outputs(build_dir, print_dir)


def _write_pdf(game: str, record: BuildRecord, build_dir: Path, options: PrintSpec, target: Path,
               cards: list[CardEntry] | None) -> None:
    """Write one print PDF and report its files, pages and warnings."""
    try:
        result = write_print_pdf(record, build_dir, options, target, cards)
    except OSError as exc:  # a card image gone since the build, or an unwritable folder
        read = Path(exc.filename) if exc.filename else target
        if isinstance(exc, FileNotFoundError) and read.resolve().is_relative_to(build_dir.resolve()):
            raise CardgenError(f"cannot write the print PDF: {exc.strerror} ({read}); run `cardgen build {game}` "
                               "again", file=str(target)) from None
        raise CardgenError(f"cannot write the print PDF: {exc.strerror or exc}; choose another folder with --out "
                           "or fix its permissions", file=str(target)) from None
    for warning in result.warnings:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    for path in result.files:
        click.echo(f"{game}: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    click.echo(f"{game}: {result.pages} pages" + (f" + {result.back_pages} back pages" if result.back_pages else ""))


def changed_cards(root: Path, game: str, since: str, record: BuildRecord, lang: str | None = None) -> list[CardEntry]:
    """The cards of a build (in `lang`) added or changed since a snapshot of that language's build; an error when
    there are none."""
    from cardgen.record.changes import describe, diff_records, load_snapshot

    changes = diff_records(load_snapshot(root, game, since, lang), record)
    wanted = changes.card_ids()
    if not wanted:
        raise CardgenError(f"no card of {game} was added or changed since '{since}'; nothing to print")
    for line in describe(changes):
        click.echo(f"  {line}")
    return [card for card in record.cards if card.id in wanted]

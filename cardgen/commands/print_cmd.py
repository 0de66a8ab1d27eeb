"""`cardgen print GAME`: the print-and-play PDF of a built game, with flags derived from the `print:` section."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import complete_games
from cardgen.commands.flags import add_flags, folder_option
from cardgen.errors import CardgenError
from cardgen.manifest import PrintSpec, load_game
from cardgen.outputs.imposition import PrintOptions
from cardgen.outputs.pdf import PrintStage, print_pdf_name, write_print_pdf
from cardgen.ownership import check_game_name, output_lock
from cardgen.record import BuildRecord, CardEntry


@click.command("print")
@click.argument("game", shell_complete=complete_games)
@folder_option("--out", help="Folder for the PDF (default: output/<game>/print).")
@click.option("--changed-since", "since", default=None,
              help="Only the cards added or changed since this snapshot (see `cardgen snapshot`).")
@folder_option("--from", "built_root",
               help="Output root holding the built game, if it was built with `build --out` (default: <root>/output).")
@add_flags(PrintSpec, exclude=("pod",))
@click.pass_obj
def print_command(root: Path, game: str, out: Path | None, since: str | None, built_root: Path | None,
                  **flags: object) -> None:
    """Write the print-and-play PDF of a built GAME (reads output/<game>/build.json)."""
    print_game(root, game, flags, out, since, built_root)


def print_game(root: Path, game: str, flags: dict, out: Path | None, since: str | None,
               built_root: Path | None) -> None:
    """Write the PDF with the manifest's `print:` options under the flags given; report its files."""
    stage = PrintStage.for_game(load_game(root, game), flags)
    options = PrintOptions.from_spec(stage.options)
    build_dir = (built_root or root / "output").resolve() / check_game_name(game)
    with output_lock(build_dir.parent, create=False):  # no build swaps the images away meanwhile
        record = BuildRecord.of_build(build_dir)
        target = (out or build_dir / "print") / print_pdf_name(game, options)
        cards = None
        if since is not None:
            cards = changed_cards(root, game, since, record)
            target = target.with_name(f"{target.stem}-changed-since-{since}.pdf")
        try:
            result = write_print_pdf(record, build_dir, options, target, cards)
        except OSError as exc:  # a card image gone since the build, or an unwritable folder
            raise CardgenError(f"cannot write the print PDF: {exc}; run `cardgen build {game}` again?") from None
    for warning in result.warnings:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    for path in result.files:
        click.echo(f"{game}: {path} ({path.stat().st_size / 1e6:.1f} MB)")
    click.echo(f"{game}: {result.pages} pages" + (f" + {result.back_pages} back pages" if result.back_pages else ""))


def changed_cards(root: Path, game: str, since: str, record: BuildRecord) -> list[CardEntry]:
    """The cards of a build added or changed since a snapshot; an error when there are none."""
    from cardgen.changes import describe, diff_records, load_snapshot

    changes = diff_records(load_snapshot(root, game, since), record)
    wanted = changes.card_ids()
    if not wanted:
        raise CardgenError(f"no card of {game} was added or changed since '{since}'; nothing to print")
    for line in describe(changes):
        click.echo(f"  {line}")
    return [card for card in record.cards if card.id in wanted]

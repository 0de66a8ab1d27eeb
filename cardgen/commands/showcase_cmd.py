"""`cardgen showcase GAME --cards ID ...`: a fanned hand and a row in perspective with a reflection of built cards,
as PNGs to share (see `cardgen.playtest.showcase`), building first whatever is missing or out of date."""
from __future__ import annotations

import re
from pathlib import Path

import click

from cardgen.commands import complete_games


def _colour(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, int, int] | None:
    """--background transparent or #rrggbb."""
    if value == "transparent":
        return None
    if not re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        raise click.BadParameter(f"'{value}' is not transparent or a colour #rrggbb (e.g. '#1d1d1d', quoted)")
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


@click.command("showcase")
@click.argument("game", shell_complete=complete_games)
@click.option("--cards", "ids", required=True, multiple=True,
              help="Card ids to show, in order (repeat, or separate with commas): e.g. --cards jab,strike.")
@click.option("--background", default="transparent", show_default=True, callback=_colour,
              help="transparent, or a colour #rrggbb.")
@click.option("--height", type=click.IntRange(100, 2000), default=600, show_default=True,
              help="Height of each card in the pictures, in pixels.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the PNGs (default: <output root>/showcase).")
@click.option("--from", "built_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root holding the built game (default: <root>/output).")
@click.pass_obj
def showcase_command(root: Path, game: str, ids: tuple[str, ...], background: tuple[int, int, int] | None,
                     height: int, out: Path | None, built_root: Path | None) -> None:
    """Write GAME-fan.png (the cards as a fanned hand) and GAME-row.png (a row in perspective with a
    reflection) of the cards named, for a forum post or a rulebook."""
    from cardgen.commands.build_cmd import bring_up_to_date
    from cardgen.core.ownership import check_game_name, check_output_root, output_lock
    from cardgen.playtest.showcase import Look, write_showcase
    from cardgen.record.record import BuildRecord

    names = [i.strip() for value in ids for i in value.split(",") if i.strip()]
    out_root = check_output_root(root, built_root or root / "output")
    bring_up_to_date(root, game, out_root)
    out_dir = out_root / check_game_name(game)
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        written = write_showcase(out_dir, BuildRecord.of_build(out_dir), names, Look(height, background),
                                 out or out_root / "showcase")
    for path in written:
        click.echo(f"{game}: showcase -> {path}")

"""`cardgen <output> GAME`: the command of a registered output that has options but no command of its own. It
writes the output of a built game again with flags derived from its options model over game.yaml's section."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import complete_games
from cardgen.commands.build_cmd import bring_up_to_date, show_findings
from cardgen.commands.flags import add_flags, folder_option
from cardgen.core.ownership import check_game_name, check_output_root, output_lock
from cardgen.load.manifest import load_game
from cardgen.outputs import stage_class
from cardgen.outputs.stage import StageContext, options_model
from cardgen.record.record import BuildRecord


def output_command(name: str) -> click.Command:
    """The click command of the output registered as `name`, one flag per field of its options model."""
    model = options_model(name)
    assert model is not None, f"the output '{name}' has no options"

    @click.command(name, help=f"Write the `{name}` output of GAME again with the flags given over game.yaml's "
                              f"`{name}:` section (until the next build), building first whatever is missing or "
                              "out of date.")
    @click.argument("game", shell_complete=complete_games)
    @folder_option("--out", help="Output root holding the built game (default: <root>/output).")
    @add_flags(model, name)
    @click.pass_obj
    def command(root: Path, game: str, out: Path | None, **flags: object) -> None:
        write_output(root, name, game, flags, out)

    return command


def write_output(root: Path, name: str, game: str, flags: dict, out: Path | None) -> None:
    """Bring the build up to date, then run the output's stage on it with the flags given."""
    loaded = load_game(root, game)
    stage = stage_class(name).for_game(loaded, flags)
    out_root = check_output_root(root, out or root / "output")
    bring_up_to_date(root, game, out_root)
    out_dir = out_root / check_game_name(game)
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        findings = stage.run(StageContext(loaded, BuildRecord.of_build(out_dir), out_dir, out_dir))
    show_findings(findings)
    click.echo(f"{game}: {name} -> {out_dir}")

"""`cardgen tts GAME`: the Tabletop Simulator export of a built game, with flags derived from the `tts:` section."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands.flags import add_flags, folder_option
from cardgen.manifest import TTSSpec, load_game
from cardgen.outputs.tts import TTSOptions, TTSStage, export_tts
from cardgen.record import BuildRecord


@click.command("tts")
@click.argument("game")
@folder_option("--out", help="Output root holding the built game (default: <root>/output).")
@click.option("--install", "do_install", is_flag=True,
              help="Also copy the export into Tabletop Simulator's Saved Objects folder (cardgen subfolder).")
@folder_option("--tts-dir", help="Tabletop Simulator's data folder (default: the usual place on this OS).")
@add_flags(TTSSpec)
@click.pass_obj
def tts_command(root: Path, game: str, out: Path | None, do_install: bool, tts_dir: Path | None,
                **flags: object) -> None:
    """Export a built GAME to Tabletop Simulator: deck sheets, tokens, boards and a saved object."""
    export_game(root, game, flags, out, do_install, tts_dir)


def export_game(root: Path, game: str, flags: dict, out: Path | None, do_install: bool, tts_dir: Path | None) -> None:
    """Write the export with the manifest's `tts:` options under the flags given (and install it if asked)."""
    from cardgen.outputs.tts_install import install, install_dir

    loaded = load_game(root, game)
    stage = TTSStage.for_game(loaded, flags)
    assert isinstance(stage, TTSStage)
    target = install_dir(tts_dir) if do_install else None  # fail before the work if TTS is not there
    out_dir = (out or root / "output").resolve() / game
    record = BuildRecord.of_build(out_dir)
    saved = export_tts(loaded, record, out_dir, TTSOptions.from_spec(stage.spec))
    click.echo(f"{game}: Tabletop Simulator saved object -> {saved}")
    if target is not None:
        click.echo(f"{game}: installed -> {install(saved.parent, game, target)}")

"""`cardgen tts GAME`: the Tabletop Simulator export of a built game, with flags derived from the `tts:` section."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import complete_games, lang_option
from cardgen.commands.build_cmd import bring_up_to_date, output_root
from cardgen.commands.flags import add_flags, folder_option
from cardgen.commands.tts_push import PushTarget, push_options, push_saved_object, report, target_of
from cardgen.core.errors import CardgenError
from cardgen.core.ownership import output_lock
from cardgen.load.freshness import seal_outputs
from cardgen.load.manifest import Game, load_game
from cardgen.options.tts import TTSSpec, UploadSpec
from cardgen.outputs.tts.stage import TTSStage, export_tts, saved_object_path
from cardgen.record.record import BuildRecord


@click.command("tts")
@click.argument("game", shell_complete=complete_games)
@folder_option("--out", help="Output root holding the built game (default: <root>/output).")
@click.option("--install", "do_install", is_flag=True,
              help="Also copy the export into Tabletop Simulator's Saved Objects folder (cardgen subfolder).")
@folder_option("--tts-dir", help="Tabletop Simulator's data folder (default: the usual place on this OS).")
@click.option("--upload", "do_upload", is_flag=True,
              help="Put the images in the S3-compatible bucket of game.yaml's tts: upload: and write their public "
                   "addresses into the saved object.")
@lang_option("Export the game")
@push_options
@add_flags(TTSSpec, "tts")
@click.pass_obj
def tts_command(root: Path, game: str, out: Path | None, do_install: bool, tts_dir: Path | None, do_upload: bool,
                lang: str | None, push: bool, push_dealt: bool, push_port: int, reply_port: int,
                **flags: object) -> None:
    """Export GAME to Tabletop Simulator (deck sheets, tokens, boards and a saved object), building first
    whatever is missing or out of date.

    The build writes output/<game>/tts with game.yaml's `tts:` settings; other settings given here
    replace that export until the next build (put them in game.yaml to keep them). With --push, the export is
    also sent into a running Tabletop Simulator.
    """
    export_game(root, game, flags, out, do_install, tts_dir, target_of(push, push_dealt, push_port, reply_port),
                do_upload, lang)


def export_game(root: Path, game: str, flags: dict, out: Path | None, do_install: bool, tts_dir: Path | None,
                push: PushTarget | None = None, upload: bool = False, lang: str | None = None) -> None:
    """Bring the build up to date (in `lang`, under `<out>/<lang>/`), export again if the flags change the
    manifest's `tts:` options, upload its images, install the export and push it into a running Tabletop
    Simulator, each if asked."""
    from cardgen.outputs.tts.install import install_dir

    loaded = load_game(root, game, lang)
    stage = TTSStage.for_game(loaded, flags)
    target = install_dir(tts_dir) if do_install else None  # fail before the work if TTS is not there
    bucket = stage.config.upload if upload else None
    if upload and bucket is None:
        raise CardgenError("--upload needs the bucket: add `upload: {bucket: ..., public_url: ...}` under `tts:`",
                           file=str(root / "data" / game / "game.yaml"))
    out_root = output_root(root, out, lang)
    built = bring_up_to_date(root, game, out_root, lang=lang).built
    try:
        saved = _export_and_install(root, loaded, stage, out_root / game, target, bucket)
    except CardgenError as exc:
        exc.outputs_unchanged = exc.outputs_unchanged and not built  # the build before it changed them
        raise
    if push is not None:  # after the output lock is let go: a game slow to answer holds up no build
        report(push_saved_object(saved, game, push))


def _export_and_install(root: Path, loaded: Game, stage: TTSStage, out_dir: Path, target: Path | None,
                        bucket: UploadSpec | None = None) -> Path:
    """Export the built game again when the flags change its options (or the export is missing), upload its images
    to `bucket`, and install it into Tabletop Simulator's folder `target`, when given; return the saved object's
    path."""
    from cardgen.outputs.tts.install import install

    game, out_root = loaded.name, out_dir.parent
    options = stage.config
    with output_lock(out_root, create=False):  # no build swaps the images away meanwhile
        record = BuildRecord.of_build(out_dir)
        saved = saved_object_path(out_dir, record)
        usual = TTSStage.for_game(loaded).config
        if options != usual or not saved.is_file():
            try:
                saved = export_tts(loaded, record, out_dir, options)
                if options == usual:  # the build's own export: still current
                    seal_outputs(out_dir, saved.parent)
            except OSError as exc:  # a read-only output folder, a full disk
                raise CardgenError(f"cannot write the Tabletop Simulator export: {exc.strerror or exc}",
                                   file=str(out_dir / "tts")) from None
        click.echo(f"{game}: Tabletop Simulator saved object -> {saved}")
        if bucket is not None:
            from cardgen.commands.tts_upload import upload_export

            done = upload_export(saved, game, bucket)
            click.echo(f"{game}: uploaded {done.sent} image(s) to {bucket.bucket} ({done.kept} there already); "
                       f"the saved object now names {bucket.public_url}")
        if target is not None:
            try:
                click.echo(f"{game}: installed -> {install(saved.parent, game, target, loaded.lang)}")
            except OSError as exc:  # a read-only Saves folder, a full disk
                raise CardgenError(f"cannot install the export into Tabletop Simulator's folder: "
                                   f"{exc.strerror or exc}; fix its permissions or choose another with --tts-dir",
                                   file=str(exc.filename or target)) from None
        return saved

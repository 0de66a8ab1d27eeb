"""The Tabletop Simulator stage: `tts/` written from a build record, the manifest's `tts:` section checked
against the game, and where the saved object lands."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from cardgen.core.cachebound import uses
from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.core.filenames import slugify
from cardgen.core.ownership import make_staging, remove_ours
from cardgen.core.storage import swap_into_place
from cardgen.load.freshness import PreviousOutputs
from cardgen.load.manifest import Game
from cardgen.options.tts import TTSSpec
from cardgen.outputs.reuse import reuse_or_make
from cardgen.outputs.stage import Stage, StageContext
from cardgen.outputs.tts.exporter import TTS_DIR, Exporter
from cardgen.outputs.tts.layout import PLAY_AREA
from cardgen.outputs.tts.objects import write_saved_object
from cardgen.outputs.tts.sizes import MM_PER_UNIT
from cardgen.outputs.tts.thumbnail import cover_faces, cover_hashes, thumbnail
from cardgen.outputs.tts.urls import url_maker
from cardgen.outputs.tts.work import Recipes, TTSCardWork
from cardgen.record.record import BuildRecord


class TTSStage(Stage[TTSSpec]):
    """`tts/`: the Tabletop Simulator export, written as the manifest's `tts:` section says."""

    name = "tts"
    # Pillow (~17 ms to import) is imported when the export draws, not with this module (see `select_stages`).
    while_drawing = True  # each image waits for the card files it shows (their cells and sheets come with them)

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write the export."""
        problems: list[Problem] = []
        export_tts(ctx.game, ctx.record, ctx.out_dir, self.config, ctx.previous, ctx.wait_for, problems, ctx.out_root)
        return problems

    def card_work(self, game: Game, record: BuildRecord, out_root: Path) -> dict[str, TTSCardWork]:
        """Each card's sheet cell, resampled in the render workers (see `card_work`)."""
        return card_work(game.name, record, self.config, out_root)


def export_tts(game: Game, record: BuildRecord, out_dir: Path, options: TTSSpec,
               previous: PreviousOutputs | None = None,
               wait: Callable[[str], Path | None] = lambda image: None, problems: list[Problem] | None = None,
               out_root: Path | None = None) -> Path:
    """Write `<out_dir>/tts/` from a build record; return the saved-object JSON path (at its final place). Warnings
    for the designer go into `problems`: a game too large for the table's play area.

    Images the `previous` build wrote with the same content are kept, not copied again from the cache. A sheet
    cell missing from the cache is made from its card's file. `wait(image)` returns once the image of a path of the
    record is drawn (during a build, as the workers draw it and make its cells), with the file to read it from
    (None: its path in `out_dir`): each image of the export waits for the cards it shows. `out_root` is the output
    root the game's folder ends up in (default: `out_dir`'s folder), whose caches the export uses.
    """
    _check_cutout(game, record, options)
    _check_snap_points(game, record, options)
    # During `cardgen build` out_dir is a staging folder renamed to output/<game> at the end (or a folder thrown
    # away, outside the output root: a watch's rehearsal, `build.warm_up`): URLs name the final place.
    out_root = out_root or out_dir.parent
    final_dir = out_root / game.name / TTS_DIR
    staging = make_staging(out_dir, TTS_DIR)
    try:
        exporter = Exporter(game.name, record, out_dir, staging, options, url_maker(options.base_url, final_dir),
                             previous=previous, wait=wait, out_root=out_root)
        saved = exporter.saved_object()
        if exporter.outside and problems is not None:
            problems.append(Problem(
                f"Tabletop Simulator: {exporter.outside} object(s) reach past the default table's play area "
                f"({PLAY_AREA:g} units, {PLAY_AREA * MM_PER_UNIT / 10:.0f} cm, from its centre): the game holds more "
                "than a table's worth of pieces laid side by side; move them in the game",
                file=relative(game.manifest_path, game.root), severity="warning"))
        stem = file_stem(record.game.title)
        # The thumbnail shows faces only: made while the backs, drawn last, are drawn (`put_last` waits for them),
        # not after the last card (~20-25 ms of a cold 20-card build's tail).
        reuse_or_make(out_root, staging / f"{stem}.png", ["thumbnail", *cover_hashes(exporter)],
                      lambda temp: thumbnail(exporter).save(temp, format="PNG"), __name__)
        exporter.put_last()
        write_saved_object(staging / f"{stem}.json", saved, final_dir / f"{stem}.json", out_root)
        swap_into_place(staging, out_dir / TTS_DIR)
        exporter.staging = out_dir / TTS_DIR  # (an image kept on trust found changed is made there: see `_put`)
    finally:
        remove_ours(staging)
    return final_dir / f"{stem}.json"



def card_work(game: str, record: BuildRecord, options: TTSSpec, out_root: Path) -> dict[str, TTSCardWork]:
    """The export's work on card images for the render workers of a build, by image hash (see `TTSCardWork`):
    what the caches under `out_root` lack."""
    recipes = Recipes()
    exporter = Exporter(game, record, out_root / game, out_root / game, options, lambda name: name, recipes)
    exporter.saved_object(marked=False)  # what its images are made of, not what a push compares
    recipes.faces = {face.source.hash: face for face in cover_faces(exporter)}
    uses(functools.partial(recipes.entries, out_root))  # (listed once the build has reported)
    return recipes.work(out_root)


def saved_object_path(out_dir: Path, record: BuildRecord) -> Path:
    """Where the export of a built game (in `out_dir`) puts its saved object."""
    return out_dir / TTS_DIR / f"{file_stem(record.game.title)}.json"


def file_stem(title: str) -> str:
    """The saved object's file name from the game's title, a safe slug ('#Shitstorm' -> 'Shitstorm', 'Con' ->
    'Con-game'); the title itself stays the object's name inside the JSON."""
    return slugify(title, "game", keep_case=True)


def _check_cutout(game: Game, record: BuildRecord, options: TTSSpec) -> None:
    for name in options.cutout:
        if name not in record.decks or record.decks[name].kind != "token":
            raise CardgenError(f"tts.cutout: '{name}' is not a token deck of this game",
                               file=relative(game.manifest_path, game.root), row=game.line("tts", "cutout"))


def _check_snap_points(game: Game, record: BuildRecord, options: TTSSpec) -> None:
    """Each grid of `tts: snap_points:` is on a board deck of the game, its cells' centres on the board."""
    for name, grids in options.snap_points.items():
        where = {"file": relative(game.manifest_path, game.root), "row": game.line("tts", "snap_points", name)}
        deck = record.decks.get(name)
        if deck is None or deck.kind != "board":
            raise CardgenError(f"tts.snap_points: '{name}' is not a board deck of this game", **where)
        size = deck.size_mm
        for grid in grids:
            reach_x = abs(grid.x) + (grid.columns - 1) * grid.across / 2
            reach_y = abs(grid.y) + (grid.rows - 1) * grid.down / 2
            if reach_x > size.width / 2 or reach_y > size.height / 2:
                raise CardgenError(
                    f"tts.snap_points.{name}: a grid of {grid.columns} x {grid.rows} cells {grid.across:g} x "
                    f"{grid.down:g} mm apart reaches past the {size.width:g} x {size.height:g} mm board; give it "
                    "fewer cells or smaller steps", **where)

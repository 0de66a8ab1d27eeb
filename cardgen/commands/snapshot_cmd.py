"""`cardgen snapshot` and `cardgen changes`: a build recorded under a name, and the cards changed since."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cardgen.record.record import BuildRecord


def build_record(root: Path, game: str, out: Path | None, lang: str | None) -> BuildRecord:
    """The record of the game's build in `lang` (`<out>/<lang>/<game>/`; the game's own language: `<out>/<game>/`);
    an error naming the build to run when there is none."""
    from cardgen.commands.build_cmd import language_root
    from cardgen.core.errors import CardgenError
    from cardgen.record.record import BUILD_RECORD, BuildRecord

    build_dir = language_root(root, out or root / "output", lang) / game
    if lang and not (build_dir / BUILD_RECORD).is_file():
        raise CardgenError(f"no {lang} build found at {build_dir}; run `cardgen build {game} --lang {lang}` first")
    return BuildRecord.of_build(build_dir)


def snapshot(root: Path, game: str, name: str, out: Path | None, force: bool, lang: str | None = None) -> None:
    """Record the current build of `game` (in `lang`) as snapshot `name` (replacing one of that name with
    `force`)."""
    from cardgen.record.changes import save_snapshot

    record = build_record(root, game, out, lang)
    path = save_snapshot(record, root, game, name, replace=force, lang=lang)
    click.echo(f"{game}{' (' + lang + ')' if lang else ''}: snapshot '{name}' of {len(record.cards)} cards -> "
               f"{path.relative_to(root)}")


def changes(root: Path, game: str, since: str, out: Path | None, lang: str | None = None) -> None:
    """Print the cards of `game` (its build in `lang`) added, changed or removed since snapshot `since`, with field
    changes."""
    from cardgen.record.changes import describe, diff_records, load_snapshot

    record = build_record(root, game, out, lang)
    diff = diff_records(load_snapshot(root, game, since, lang), record)
    click.echo(f"{game}{' (' + lang + ')' if lang else ''} since '{since}': {len(diff.added)} added, "
               f"{len(diff.changed)} changed, {len(diff.removed)} removed")
    if not diff.empty:
        for line in describe(diff):
            click.echo(f"  {line}")

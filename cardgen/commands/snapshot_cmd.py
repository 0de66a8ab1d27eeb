"""`cardgen snapshot` and `cardgen changes`: a build recorded under a name, and the cards changed since."""
from __future__ import annotations

from pathlib import Path

import click


def snapshot(root: Path, game: str, name: str, out: Path | None, force: bool) -> None:
    """Record the current build of `game` as snapshot `name` (replacing one of that name with `force`)."""
    from cardgen.record.changes import save_snapshot
    from cardgen.record.record import BuildRecord

    record = BuildRecord.of_build((out or root / "output") / game)
    path = save_snapshot(record, root, game, name, replace=force)
    click.echo(f"{game}: snapshot '{name}' of {len(record.cards)} cards -> {path.relative_to(root)}")


def changes(root: Path, game: str, since: str, out: Path | None) -> None:
    """Print the cards of `game` added, changed or removed since snapshot `since`, with field changes."""
    from cardgen.record.changes import describe, diff_records, load_snapshot
    from cardgen.record.record import BuildRecord

    record = BuildRecord.of_build((out or root / "output") / game)
    diff = diff_records(load_snapshot(root, game, since), record)
    click.echo(f"{game} since '{since}': {len(diff.added)} added, {len(diff.changed)} changed, "
               f"{len(diff.removed)} removed")
    if not diff.empty:
        for line in describe(diff):
            click.echo(f"  {line}")

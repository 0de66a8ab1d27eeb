"""`cardgen clean`: the render cache emptied, and with --outputs the built games removed (only what cardgen made)."""
from __future__ import annotations

from pathlib import Path

import click


def clean(root: Path, out: Path | None, outputs: bool) -> None:
    """Remove cardgen's folders under the output root and say what was removed and what was left alone."""
    from cardgen.core.ownership import check_output_root, clean_output_root

    out_root = check_output_root(root, out or root / "output")
    removed, kept = clean_output_root(out_root, outputs)
    click.echo(f"removed {', '.join(str(t) for t in removed)}" if removed else f"nothing to remove in {out_root}")
    if kept:
        click.echo(f"left alone (not made by cardgen): {', '.join(str(t) for t in kept)}")

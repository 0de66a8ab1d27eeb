"""`cardgen calibrate`: a one-sheet duplex test page to measure a printer's back offset."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cardgen.core.errors import CardgenError


def calibrate(root: Path, paper: str, duplex: Any, out: Path | None) -> None:
    """Write the test page for `paper` and `duplex` into `out` (default: output/) and say what to do with it."""
    from cardgen.core.units import parse_paper
    from cardgen.options.pdf import paper_name
    from cardgen.outputs.calibrate import write_calibration_pdf

    try:
        parse_paper(paper)
    except ValueError as exc:
        raise CardgenError(f"--paper: {exc}") from None
    target = (out or root / "output") / f"calibration-{paper_name(paper)}-{duplex}.pdf"
    path = write_calibration_pdf(target, paper, duplex)
    click.echo(f"{path}: print it double-sided at 100%, then follow the instructions on it.")

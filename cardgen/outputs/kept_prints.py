"""PDFs made with `cardgen print` that later builds keep up to date.

A build replaces `output/<game>/` as a whole, so a PDF written there by `cardgen print --paper a4`
would vanish at the next build. Instead `cardgen print` notes the options of each PDF it writes into
`print/` in `print/kept.json`, and every build remakes those PDFs with the new cards, for as long
as the file is there: delete the PDF and builds stop making it. The PDFs the manifest asks for
(`print:` in game.yaml, one per paper listed) are the build's own and are not noted.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Mapping

from cardgen.core.errors import CardgenError
from cardgen.core.storage import write_json
from cardgen.options.pdf import PrintSpec

log = logging.getLogger("cardgen")

KEPT_FILE = "kept.json"


def pdf_name(game: str, options: PrintSpec, usual: list[PrintSpec]) -> str:
    """`<game>-<paper>.pdf`, plus a word for each option that differs from the manifest's on that paper.

    `cardgen print --paper a4` makes `scrapbots-a4.pdf`; `--duplex fold` on the manifest's paper makes
    `scrapbots-letter-fold.pdf`, beside the build's own `scrapbots-letter.pdf` rather than over it.
    """
    same_paper = next((o for o in usual if o.paper_name == options.paper_name), None)
    base = same_paper or usual[0].model_copy(update={"paper": options.sheet})
    wanted, normal = options.words(), base.words()
    extra = [word for key, word in wanted.items() if normal[key] != word and word]  # no grid word beside a layout
    return f"{game}-{'-'.join([options.paper_name, *extra])}.pdf"


def read_kept(print_dir: Path, root: Path, read_as: Mapping[str, str] | None = None) -> dict[str, PrintSpec]:
    """The kept PDFs of a game's print folder whose files are still there, with their options (their sheet layout
    read from the workspace at `root`; `read_as`: see `Catalogue.read`)."""
    try:
        noted = json.loads((print_dir / KEPT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    kept = {}
    for name, values in (noted.items() if isinstance(noted, dict) else []):
        try:
            options = PrintSpec.model_validate(_as_noted_now(values)).per_paper(root, read_as)[0]
        except (TypeError, KeyError, ValueError, CardgenError):  # pydantic's ValidationError is a ValueError
            log.warning(f"{print_dir / KEPT_FILE}: cannot read the options of {name}; it is no longer remade")
            continue
        if (print_dir / name).is_file():
            kept[name] = options
    return kept


def _as_noted_now(values: dict) -> dict:
    """A PDF's options as kept.json notes them: `print:`'s keys. A kept.json written before the options had one
    model noted lengths in mm (`gap_mm`), the grid as [columns, rows] and the whole sheet layout: read as the keys
    they stand for, so that an upgrade keeps remaking the designer's PDFs."""
    if "gap_mm" not in values:
        return values
    grid, layout = values.get("grid"), values.get("layout")
    renamed = {_RENAMED.get(key, key): value for key, value in values.items()}
    return {**renamed, "grid": "{}x{}".format(*grid) if grid else None, "layout": layout["name"] if layout else None}


_RENAMED = {"gap_mm": "gap", "margin_mm": "margin", "unprintable_mm": "unprintable"}


def write_kept(print_dir: Path, kept: dict[str, PrintSpec]) -> None:
    """Note the kept PDFs of a print folder (none: no file)."""
    if kept:
        write_json(print_dir / KEPT_FILE, {name: o.model_dump(mode="json") for name, o in sorted(kept.items())})


def keep(print_dir: Path, root: Path, name: str, options: PrintSpec) -> None:
    """Note one more PDF made into a print folder (of the workspace at `root`), for later builds to remake."""
    write_kept(print_dir, {**read_kept(print_dir, root), name: options})

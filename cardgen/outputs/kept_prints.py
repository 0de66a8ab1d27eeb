"""PDFs made with `cardgen print` that later builds keep up to date.

A build replaces `output/<game>/` as a whole, so a PDF written there by `cardgen print --paper a4`
would vanish at the next build. Instead `cardgen print` notes the options of each PDF it writes into
`print/` in `print/kept.json`, and every build remakes those PDFs with the new cards, for as long
as the file is there: delete the PDF and builds stop making it. The PDFs the manifest asks for
(`print:` in game.yaml, one per paper listed) are the build's own and are not noted.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from cardgen.core.storage import write_json
from cardgen.outputs.imposition import PrintOptions

log = logging.getLogger("cardgen")

KEPT_FILE = "kept.json"


def pdf_name(game: str, options: PrintOptions, usual: list[PrintOptions]) -> str:
    """`<game>-<paper>.pdf`, plus a word for each option that differs from the manifest's on that paper.

    `cardgen print --paper a4` makes `scrapbots-a4.pdf`; `--duplex fold` on the manifest's paper makes
    `scrapbots-letter-fold.pdf`, beside the build's own `scrapbots-letter.pdf` rather than over it.
    """
    same_paper = next((o for o in usual if o.paper_name == options.paper_name), None)
    base = same_paper or dataclasses.replace(usual[0], paper=options.paper)
    wanted, normal = options.words(), base.words()
    extra = [word for key, word in wanted.items() if normal[key] != word and word]  # no grid word beside a layout
    return f"{game}-{'-'.join([options.paper_name, *extra])}.pdf"


def read_kept(print_dir: Path) -> dict[str, PrintOptions]:
    """The kept PDFs of a game's print folder whose files are still there, with their options."""
    try:
        noted = json.loads((print_dir / KEPT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    kept = {}
    for name, values in (noted.items() if isinstance(noted, dict) else []):
        try:
            options = PrintOptions.of(values)
        except (TypeError, KeyError, ValueError):
            log.warning(f"{print_dir / KEPT_FILE}: cannot read the options of {name}; it is no longer remade")
            continue
        if (print_dir / name).is_file():
            kept[name] = options
    return kept


def write_kept(print_dir: Path, kept: dict[str, PrintOptions]) -> None:
    """Note the kept PDFs of a print folder (none: no file)."""
    if kept:
        write_json(print_dir / KEPT_FILE, {name: dataclasses.asdict(o) for name, o in sorted(kept.items())})


def keep(print_dir: Path, name: str, options: PrintOptions) -> None:
    """Note one more PDF made into a print folder, for later builds to remake."""
    write_kept(print_dir, {**read_kept(print_dir), name: options})

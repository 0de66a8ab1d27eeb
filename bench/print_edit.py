"""The print PDF's share of a warm one-card edit, with the file written whole and with its incremental update.

Run: .venv/bin/python bench/print_edit.py [--cards 1000] [--pairs 6]
In one process, as a running `cardgen watch` rebuilds (rows kept in memory, and a thread beside the builds: with
one, as in a watch, no render pool is forked ahead and the print files are written in this process): the bench's
generated game built cold, then pairs of one-card edits (a new text on the middle card, so a new image each
time), the first of a pair with the print file written whole (`pdf_update.REVISIONS_AT_MOST = 0`, as before the
update existed), the second with the update. Prints each build's wall and process CPU, the print stage's
(`write_print_pdf`) wall and thread CPU and that of its file writes (`write_volume`), and the revisions each print
file holds; then the medians.
"""
from __future__ import annotations

import argparse
import csv
import functools
import io
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from run import _write_rows, generated_game, workspace

import cardgen.outputs.pdf as pdf
from cardgen.commands.build_cmd import build_one
from cardgen.load.data import remember_rows
from cardgen.outputs import pdf_update

FIGURES = ("build wall", "build CPU", "print wall", "print CPU", "file wall", "file CPU")


def timed(name: str, seconds: dict[str, list[float]]) -> None:
    """Add each call's wall and thread CPU of `pdf.<name>` to `seconds` (as `name wall`, `name cpu`)."""
    function: Callable[..., Any] = getattr(pdf, name)

    @functools.wraps(function)
    def timing(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            seconds.setdefault(f"{name} wall", []).append(time.perf_counter() - wall)
            seconds.setdefault(f"{name} cpu", []).append(time.thread_time() - cpu)

    setattr(pdf, name, timing)


def edit_text(root: Path, game: str, value: int) -> None:
    """Give the middle card of a generated game a new text (a new image)."""
    path = root / "data" / game / "cards.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    row = rows[len(rows) // 2]
    row["text"] = f"{row['text'].split(' #')[0]} #{value}"
    _write_rows(path, rows)


def main() -> None:
    """Run the edits and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=6)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {}
    timed("write_print_pdf", seconds)
    timed("write_volume", seconds)
    threading.Thread(target=threading.Event().wait, daemon=True).start()  # as a watch's observer
    remember_rows()
    rows: dict[str, list[tuple[float, ...]]] = {"whole": [], "update": []}
    with tempfile.TemporaryDirectory(prefix="cardgen-bench-print-edit-") as scratch:
        root = workspace(Path(scratch) / "ws")
        game = generated_game(root, args.cards)
        build_one(root, game, root / "output", 2)
        for edit in range(2 * args.pairs):
            kind = "update" if edit % 2 else "whole"
            pdf_update.REVISIONS_AT_MOST = 64 if edit % 2 else 0
            seconds.clear()
            edit_text(root, game, edit)
            wall, cpu = time.perf_counter(), time.process_time()
            build_one(root, game, root / "output", 2)
            figures = (time.perf_counter() - wall, time.process_time() - cpu,
                       *(sum(seconds.get(f"{name} {what}", [])) for name in ("write_print_pdf", "write_volume")
                         for what in ("wall", "cpu")))
            rows[kind].append(figures)
            revisions = [path.read_bytes().count(b"%%EOF") - 1 for path in (root / "output" / game / "print").iterdir()]
            print(f"{kind:6}", "  ".join(f"{label} {value:.3f}" for label, value in zip(FIGURES, figures)),
                  f" revisions {revisions}", flush=True)
    for kind, runs in rows.items():
        medians = [statistics.median(column) for column in zip(*runs)]
        print(f"median {kind:6}", "  ".join(f"{label} {value:.3f}" for label, value in zip(FIGURES, medians)))


if __name__ == "__main__":
    main()

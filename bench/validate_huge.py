"""How fast `cardgen validate` is on big data: 100k rows without the layout layer, 1000 cards with it.

Run: .venv/bin/python bench/validate_huge.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the tests' game `mini`

from cardgen.validate import validate_game  # noqa: E402
from tests.test_validate_support import mini_workspace  # noqa: E402

# The game `mini` of the validator tests: one deck of text cards on 40 x 60 mm, with a line and a text box to fit (the
# layout layer); its cards.csv is replaced by `rows`.


def rows(count: int) -> str:
    """A CSV of `count` distinct cards for the test game."""
    body = "".join(f"Card {i},Unit,{i % 10},1,Gain {i} :scrap: and **draw** a card.\n" for i in range(count))
    return "name,kind,power,count,text\n" + body


def timed(root: Path, layout: bool) -> float:
    """Seconds to validate the workspace's game (with or without the layout layer); it must have no errors."""
    started = time.perf_counter()
    findings = validate_game(root, "mini", layout=layout)
    assert not [f for f in findings if f.severity == "error"], findings[:3]
    return time.perf_counter() - started


def main() -> None:
    """Time validation of 100,000 rows without layout and 1,000 rows with it."""
    with tempfile.TemporaryDirectory() as folder:
        root = mini_workspace(Path(folder))
        for count, layout in ((100_000, False), (1_000, True)):
            (root / "data" / "mini" / "cards.csv").write_text(rows(count), encoding="utf-8")
            seconds = timed(root, layout)
            print(f"{count:>7} rows, layout {'on ' if layout else 'off'}: {seconds:6.2f} s "
                  f"({seconds / count * 1000:.3f} ms per row)")


if __name__ == "__main__":
    main()

"""How fast `cardgen validate` is on big data: 100k rows without the layout layer, 1000 cards with it.

Run: .venv/bin/python bench/validate_huge.py
"""
from __future__ import annotations

import tempfile
import textwrap
import time
from pathlib import Path

from cardgen.validate import validate_game

# The game `mini`: one deck of text cards on 40 x 60 mm, with a line and a text box to fit (the layout layer).
MANIFEST = """\
    title: Mini
    version: 1
    font: Roboto Mono
    dpi: 100
    size: {width: 40mm, height: 60mm}
    bleed: 2mm
    safe: 2mm
    icons:
      scrap: hexagonal-nut
    fields:
      name: {type: str, required: true}
      kind: {type: enum, values: [Unit, Spell]}
      power: {type: int, min: 0, max: 10}
      count: {type: int}
      text: str
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
"""
FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_line(card.name, geo.safe.x, geo.safe.y, geo.safe.width, 14, min_size=8) }}
      {{ text_box(card.text, geo.safe.x, 60, geo.safe.width, 100, 12, min_size=8) }}
    </svg>
"""
BACK = '<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#345"/></svg>\n'


def make_workspace(base: Path) -> Path:
    """A workspace under `base` holding the game `mini` (no cards yet); its root."""
    root = base / "ws"
    (root / "data" / "mini").mkdir(parents=True)
    (root / "data" / "mini" / "game.yaml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    (root / "templates" / "mini").mkdir(parents=True)
    (root / "templates" / "mini" / "face.svg").write_text(textwrap.dedent(FACE), encoding="utf-8")
    (root / "templates" / "mini" / "back.svg").write_text(BACK, encoding="utf-8")
    return root


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
        root = make_workspace(Path(folder))
        for count, layout in ((100_000, False), (1_000, True)):
            (root / "data" / "mini" / "cards.csv").write_text(rows(count), encoding="utf-8")
            seconds = timed(root, layout)
            print(f"{count:>7} rows, layout {'on ' if layout else 'off'}: {seconds:6.2f} s "
                  f"({seconds / count * 1000:.3f} ms per row)")


if __name__ == "__main__":
    main()

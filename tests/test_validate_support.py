"""Helpers shared by the validator tests: a throw-away workspace with one small game."""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

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

CARDS = """\
    name,kind,power,count,text
    Alpha,Unit,1,2,Gain 1 :scrap:.
    Beta,Spell,2,1,**Bold** and *italic*
"""


def make_workspace(base: Path) -> Path:
    """An empty workspace sharing the repository's fonts and icons."""
    root = base / "ws"
    (root / "data").mkdir(parents=True)
    (root / "templates").mkdir()
    shutil.copytree(REPO / "fonts", root / "fonts")
    shutil.copytree(REPO / "icons", root / "icons")
    return root


def write_game(root: Path, name: str = "mini", manifest: str = MANIFEST, files: dict[str, str | bytes] | None = None,
               templates: dict[str, str] | None = None) -> Path:
    """Write a game (manifest, data files, templates) into a workspace; return its data folder."""
    data = root / "data" / name
    data.mkdir(parents=True, exist_ok=True)
    (data / "game.yaml").write_text(textwrap.dedent(manifest), encoding="utf-8")
    for file, content in ({"cards.csv": CARDS} if files is None else files).items():
        if isinstance(content, bytes):
            (data / file).write_bytes(content)
        else:
            (data / file).write_text(textwrap.dedent(content), encoding="utf-8")
    tdir = root / "templates" / name
    tdir.mkdir(parents=True, exist_ok=True)
    for file, text in ({"face.svg": FACE, "back.svg": BACK} if templates is None else templates).items():
        (tdir / file).write_text(textwrap.dedent(text), encoding="utf-8")
    return data


def mini_workspace(tmp_path: Path) -> Path:
    """A workspace holding the small game `mini` (test modules wrap it as their `ws` fixture)."""
    root = make_workspace(tmp_path)
    write_game(root)
    return root


def rules_of(findings: list) -> list[str | None]:
    """The rule ids of findings, in order."""
    return [f.rule for f in findings]


def with_manifest(extra: str) -> str:
    """The mini manifest with more YAML appended (dedented)."""
    return textwrap.dedent(MANIFEST) + textwrap.dedent(extra)

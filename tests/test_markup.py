"""Card text markup: one parser, the same words bold, italic and iconic on the card face and in Tabletop Simulator."""
from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from cardgen.load.markup import escape, icon_names, parse, plain_text
from tests.conftest import SIMPLE_BACK, make_workspace, run_cli, write_game

SVG_NS = "{http://www.w3.org/2000/svg}"

MANIFEST = """\
    title: Marks
    version: 1
    font: Roboto Mono
    fields:
      text: str
    icons:
      power_up: cog
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
"""
# One text box per card, top left, big letters: wide enough for one line of each sample.
FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_box(card.text, 60, 60, 700, 1000, 40, fill="#000000") }}
    </svg>
"""
CARDS = {
    "stars": "2 * 3 * 4",
    "icon": "Gain :power_up: now",
    "breaks": "*one\\ntwo*",
    "escaped": "\\*not italic\\* a\\:b\\: \\\\",
    "spaces": "a     b",
    "onespace": "a b",
    "nested": "**bold *both*** plain",
}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The markup sample game, built with kept SVGs through the CLI; its output folder."""
    root = make_workspace(tmp_path_factory.mktemp("marks"))
    rows = "".join(f'{name},"{text}"\n' for name, text in CARDS.items())
    write_game(root, "marks", MANIFEST, {"cards.csv": "name,text\n" + rows},
               {"face.svg": FACE, "back.svg": SIMPLE_BACK})
    run_cli(root, "build", "marks", "--svg")
    return root / "output" / "marks"


def _runs(out: Path, card: str) -> list[tuple[str, bool, bool, float, float]]:
    """(text, bold, italic, x, baseline) of each tspan of a card's rendered SVG."""
    svg = ElementTree.parse(out / "cards" / "main" / f"{card}.svg").getroot()
    runs = []
    for text in svg.iter(f"{SVG_NS}text"):
        for span in text.iter(f"{SVG_NS}tspan"):
            runs.append((span.text or "", span.get("font-weight") == "bold", span.get("font-style") == "italic",
                         float(span.get("x", "0")), float(text.get("y", "0"))))
    return runs


def _descriptions(out: Path) -> dict[str, str]:
    saved = json.loads((out / "tts" / "Marks.json").read_text(encoding="utf-8"))
    deck = saved["ObjectStates"][0]
    return {card["Nickname"]: card["Description"] for card in deck["ContainedObjects"]}


def test_card_faces_and_tts_agree_on_markup(out: Path) -> None:
    tts = _descriptions(out)

    # Stars with spaces around them are arithmetic, not emphasis: literal on the card and in TTS.
    assert [r[:3] for r in _runs(out, "stars")] == [(t, False, False) for t in ("2", "*", "3", "*", "4")]
    assert tts["stars"] == "2 * 3 * 4"

    # An alias with an underscore draws its icon on the card and reads as a word in TTS.
    assert [r[0] for r in _runs(out, "icon")] == ["Gain", "now"]
    face = np.asarray(Image.open(out / "cards" / "main" / "icon.png").convert("L"))
    gain_end, now_start = _runs(out, "icon")[0][3] + 4 * 24, _runs(out, "icon")[1][3]
    assert face[60:120, int(gain_end) + 30:int(now_start) - 20].min() < 100  # the icon's ink between the words
    assert tts["icon"] == "Gain [power up] now"

    # A line break inside italic text keeps both lines, both italic.
    runs = _runs(out, "breaks")
    assert [r[:3] for r in runs] == [("one", False, True), ("two", False, True)]
    assert runs[1][4] > runs[0][4] + 40
    assert tts["breaks"] == "[i]one\ntwo[/i]"

    # Escapes print the characters themselves.
    assert " ".join(r[0] for r in _runs(out, "escaped")) == "*not italic* a:b: \\"
    assert not any(r[1] or r[2] for r in _runs(out, "escaped"))
    assert tts["escaped"] == "*not italic* a:b: \\"

    # Nesting: the same words bold and italic on the card and in TTS.
    assert [r[:3] for r in _runs(out, "nested")] == [("bold", True, False), ("both", True, True),
                                                     ("plain", False, False)]
    assert tts["nested"] == "[b]bold [i]both[/i][/b] plain"


def test_runs_of_spaces_print_as_written(out: Path) -> None:
    wide, narrow = _runs(out, "spaces"), _runs(out, "onespace")
    advance = narrow[1][3] - narrow[0][3]  # "a" and one space in a monospaced font
    assert wide[1][3] - wide[0][3] == pytest.approx(3 * advance, abs=0.02)  # "a" and five spaces

    def ink_columns(card: str) -> np.ndarray:
        face = np.asarray(Image.open(out / "cards" / "main" / f"{card}.png").convert("L"))
        return np.where(face[60:120].min(axis=0) < 128)[0]

    assert ink_columns("spaces").max() - ink_columns("onespace").max() == pytest.approx(2 * advance, abs=2)
    assert _descriptions(out)["spaces"] == "a     b"


def test_icons_named_in_text_are_checked_with_escapes_respected() -> None:
    assert icon_names("a :energy: b \\:scrap: :energy: *:power_up:*") == ("energy", "power_up")


# Text with none of the markup characters: letters, digits, punctuation, spaces, tabs, newlines, accents.
PLAIN = st.text(st.characters(blacklist_characters="*:\\\r", blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_plain_text_round_trips(text: str) -> None:
    spans = parse(text)
    assert plain_text(spans) == text
    assert all(not (s.bold or s.italic) and s.kind != "icon" for s in spans)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_escaped_text_round_trips(text: str) -> None:
    """Any text, escaped, prints exactly as written: no style, no icon, every character kept."""
    spans = parse(escape(text))
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    assert plain_text(spans) == expected
    assert all(not (s.bold or s.italic) and s.kind != "icon" for s in spans)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab *:\\\n_x")), max_size=30))
def test_markup_never_loses_letters(text: str) -> None:
    """Whatever the stars do, every letter written is printed, in order."""
    spans = parse(text)
    letters = [c for c in text if c in "abx_"]
    printed = [c for s in spans if s.kind == "text" for c in s.text if c in "abx_"]
    icons = "".join(s.text for s in spans if s.kind == "icon")
    assert len(printed) + len([c for c in icons if c in "abx_"]) == len(letters)


TERMS_MANIFEST = """\
    title: Terms
    version: 1
    dpi: 100
    font: Roboto Mono
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
    rules:
      - {id: terms, message: unknown term, terms: {text: [text], known: [Gain]}}
"""


def test_term_checks_read_the_markup_as_the_card_prints_it(tmp_path: Path) -> None:
    """Bold words are terms, italic words are flavour, and arithmetic stars are neither: as drawn on the card."""
    root = make_workspace(tmp_path)
    write_game(root, "t", TERMS_MANIFEST, {"cards.csv": """\
        name,text
        Arith,deal 2 * Lane * 3
        Flavour,gain one. *Ancient Words here*
        Escaped,gain \\*Lane\\* here
        Boldly,**Zap** now
    """}, {"face.svg": '<svg {{ geo.svg_attrs }}>{{ text_box(card.text, 40, 60, 180, 200, 16) }}</svg>',
           "back.svg": SIMPLE_BACK})
    result = run_cli(root, "validate", "t", expect=1)
    unknown = sorted(line.split("'")[1] + "@" + line.split(":")[1] for line in result.output.splitlines()
                     if "unknown term" in line)
    assert unknown == ["Lane@2", "Lane@4", "Zap@5"]


def test_layout_findings_name_the_column_of_escaped_text(tmp_path: Path) -> None:
    """Text printed from `\\*` escapes is still traced back to its column (here: crossing the safe zone)."""
    root = make_workspace(tmp_path)
    write_game(root, "t", TERMS_MANIFEST.replace("    rules:\n      - {id: terms, message: unknown term, "
                                                 "terms: {text: [text], known: [Gain]}}\n", ""),
               {"cards.csv": "name,text\nA,\\*starred\\* words\n"},
               {"face.svg": '<svg {{ geo.svg_attrs }}>{{ text_box(card.text, 0, 0, 250, 200, 16) }}</svg>',
                "back.svg": SIMPLE_BACK})
    result = run_cli(root, "validate", "t")
    [line] = [line for line in result.output.splitlines() if "safe zone" in line]
    assert line.startswith("data/t/cards.csv:2:text: warning:") and "'*starred*'" in line

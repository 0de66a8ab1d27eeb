"""A process that builds again (`cardgen watch`, `serve`) keeps what the last build made of each row: the rows read
(`data._READ`), their cards (`data._CARDS`, the same objects for unchanged rows) and what later steps made of a card
(`Card.made`: its render's cache keys, its render). Whatever the edit, its findings and outputs are those a fresh
process makes of the edited game."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import pytest
from PIL import Image

from cardgen.build.build import BuildOptions, build_game
from cardgen.core.errors import CardgenError
from cardgen.load import data
from cardgen.outputs import stage_names
from cardgen.validate import validate_game

RULE = """\
rules:
  - {id: strength, message: The cards are too strong together, severity: warning, decks: [main],
     total: "sum(power) <= 7"}
"""


def _fresh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`cardgen ARGS` in a process of its own."""
    return subprocess.run([sys.executable, "-m", "cardgen", "--root", str(root), *args], capture_output=True,
                          text=True, timeout=300)


def _finding(about: dict) -> tuple:
    return tuple(about.get(key) for key in ("file", "row", "column", "severity", "rule", "message"))


T = TypeVar("T")  # what an edit of the tiny game expects of its findings


def _checked_as_fresh(root: Path, edits: list[tuple[str, Callable[[Path], None], T]]) -> Iterator[tuple[str, list, T]]:
    """Validate the tiny game in this process keeping its rows, then make each edit and check again: yield each
    edit's name, this process's findings (asserted equal to a fresh process's validate) and what the edit expects."""
    data.remember_rows()
    validate_game(root, "tiny", out_root=root / "kept")
    for what, edit, expected in edits:
        edit(root)
        fresh = json.loads(_fresh(root, "validate", "tiny", "--format", "json").stdout)
        mine = validate_game(root, "tiny", out_root=root / "kept")
        assert sorted((_finding(p.__dict__) for p in mine), key=str) == \
            sorted((_finding(f) for f in fresh["games"]["tiny"]["findings"]), key=str), what
        yield what, mine, expected


def _outputs(folder: Path) -> dict[str, bytes | str]:
    """What a build wrote that does not say when or where: build.json (its times, file stamps, counts of images
    drawn and found and output root left out), the gallery, the Tabletop Simulator save and every card image."""
    texts: dict[str, bytes | str] = {}
    for name in ("build.json", "index.html", *(p.relative_to(folder).as_posix() for p in folder.glob("tts/*.json"))):
        text = (folder / name).read_text(encoding="utf-8").replace(str(folder.parent), "ROOT")
        if name == "build.json":
            text = re.sub(r'\n  "(sources|stats)": \{.*?\n  \}', "", text, flags=re.DOTALL)  # (drawn or found)
        texts[name] = re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "TIME", text)
    texts.update((path.relative_to(folder).as_posix(), path.read_bytes())
                 for path in sorted(folder.glob("cards/**/*.png")))
    return texts

# A second deck of the rows its filter keeps
STRONG = """\
  strong:
    source: cards.csv
    face: face.svg
    back: back.svg
    filter: "power >= 3"
    id_prefix: strong-
"""


def _kept_cards() -> dict[str, data.Card]:
    """The cards this process keeps for its next build, by id."""
    return {card.id: card for kept in data._CARDS.values() for made, _ in kept.by_key.values() for card in made}


def _rows(edit: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    """An edit of the game's rows (as lines; the header is line 0)."""
    def edited(root: Path) -> None:
        path = root / "data" / "tiny" / "cards.csv"
        path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")
    return edited


def _mark(color: str) -> Callable[[Path], None]:
    """The image every card draws, in one color."""
    def drawn(root: Path) -> None:
        Image.new("RGB", (40, 40), color).save(root / "data" / "tiny" / "mark.png")
    return drawn


def _file(name: str, old: str, new: str) -> Callable[[Path], None]:
    """An edit of a file of the workspace."""
    def edited(root: Path) -> None:
        path = root / name
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, new))
    return edited


# Each edit, and whether the game then builds.
EDITS: list[tuple[str, Callable[[Path], None], bool]] = [
    ("a row changed", _rows(lambda lines: [line.replace("Plain", "Plainer") for line in lines]), True),
    ("spaces around a name", _rows(lambda lines: [line.replace("Beta,", " Beta ,") for line in lines]), True),
    ("a row added", _rows(lambda lines: [*lines, "Delta,1,Added,1"]), True),
    ("the total broken", _rows(lambda lines: [*lines[:-1], "Delta,4,Added,1"]), True),
    ("a row removed", _rows(lambda lines: [lines[0], *lines[2:]]), True),
    ("rows reordered", _rows(lambda lines: [lines[0], lines[2], lines[1], *lines[3:]]), True),
    ("a field's type changed", _file("data/tiny/game.yaml", "power: int", "power: int\n  count: int"), True),
    ("the face template changed", _file("templates/tiny/face.svg", "#ffffff", "#ffeedd"), True),
    ("an image the cards draw changed", _mark("blue"), True),
    ("the image the cards draw removed", lambda root: (root / "data" / "tiny" / "mark.png").unlink(), False),
    ("the image back", _mark("green"), True),
    ("an id made twice", _rows(lambda lines: [line.replace("Delta,", "Beta,") for line in lines]), False),
    ("the id and the total mended", _rows(lambda lines: [line.replace("Beta,4,Added", "Delta,0,Added")
                                                         for line in lines]), True),
]
TOTAL_BROKEN = ("the total broken", "a row removed", "rows reordered", "a field's type changed",
                "the face template changed", "an image the cards draw changed", "the image the cards draw removed",
                "the image back", "an id made twice")
# The error of each edit after which the game does not build
ERRORS = {"the image the cards draw removed": "mark.png", "an id made twice": "duplicate card id 'beta'"}


def test_edits_in_a_process_building_again_find_and_make_what_a_fresh_process_does(tiny_game: Path) -> None:
    """After each edit (a row changed, added, removed, rows reordered, spaces around a name, a field's type, a
    template or an image the cards draw changed, removed and back, a total rule and the ids' uniqueness broken and
    mended), a build in
    a process that keeps its rows gives the findings, the record, gallery, TTS save and card images that a fresh
    process gives; an unchanged row's card is the last build's object, a changed one's a new one."""
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("    back: back.svg\n", "    back: back.svg\n" + STRONG) + RULE)
    _file("templates/tiny/face.svg", "</svg>", "{{ image('mark.png', 10, 10, 50, 50) }}</svg>")(tiny_game)
    _mark("red")(tiny_game)
    data.remember_rows()
    build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
    assert _fresh(tiny_game, "build", "tiny", "--out", str(tiny_game / "fresh"), "-j", "1").returncode == 0
    for what, edit, builds in EDITS:
        cards = _kept_cards()
        edit(tiny_game)
        fresh = json.loads(_fresh(tiny_game, "validate", "tiny", "--format", "json").stdout)
        mine = validate_game(tiny_game, "tiny", out_root=tiny_game / "kept")
        assert sorted((_finding(p.__dict__) for p in mine), key=str) == \
            sorted((_finding(f) for f in fresh["games"]["tiny"]["findings"]), key=str), what
        assert any(p.rule == "strength" for p in mine) == (what in TOTAL_BROKEN), what
        if not builds:
            with pytest.raises(CardgenError, match=ERRORS[what]):
                build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
            assert _fresh(tiny_game, "build", "tiny", "--out", str(tiny_game / "fresh"), "-j", "1").returncode != 0
            continue
        build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
        assert _fresh(tiny_game, "build", "tiny", "--out", str(tiny_game / "fresh"), "-j", "1").returncode == 0, what
        kept, made = _outputs(tiny_game / "kept" / "tiny"), _outputs(tiny_game / "fresh" / "tiny")
        assert kept.keys() == made.keys(), what
        for name in kept:
            assert kept[name] == made[name], f"{what}: {name}"
        if what == "a row changed":  # (after a removal or a reorder, every row after it is on another line)
            again = _kept_cards()
            assert [again[id] is cards[id] for id in ("alpha", "beta", "na")] == [True, True, False]


def test_a_game_built_in_one_of_its_languages_again_in_one_process_is_translated_as_in_a_fresh_one(
        workspace: Path) -> None:
    """A translation writes its cards (their text, and the original kept for the rules): a game built in one of its
    languages keeps no cards between builds, so a second French build of a watch translates the English rows again,
    its findings and record those of a fresh process."""
    from conftest import SIMPLE_BACK, SIMPLE_FACE, write_game
    from test_languages import CARDS, MANIFEST

    write_game(workspace, "tiny", MANIFEST, {"cards.csv": CARDS}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    data.remember_rows()
    options = BuildOptions(workspace / "kept" / "fr", jobs=1, lang="fr")  # where `build --lang fr` builds
    build_game(workspace, "tiny", options, stages=stage_names())
    _file("data/tiny/cards.csv", "Lose 1 Scrap.", "Lose 2 Scrap.")(workspace)
    mine = build_game(workspace, "tiny", options, stages=stage_names())
    assert _fresh(workspace, "build", "tiny", "--lang", "fr", "--out", str(workspace / "fresh"), "-j",
                  "1").returncode == 0
    assert [f.rule for f in mine.findings] == [f["rule"] for f in json.loads(
        (workspace / "fresh" / "fr" / "tiny" / "build.json").read_text(encoding="utf-8"))["warnings"]]
    assert _outputs(workspace / "kept" / "fr" / "tiny") == _outputs(workspace / "fresh" / "fr" / "tiny")


def test_a_note_made_once_a_file_is_made_again_on_another_row_after_an_edit(workspace: Path) -> None:
    """Data under a column with no name is noted once a file, at its first row holding some: when an edit empties
    that row's cell, a process that builds again notes the next row, as a fresh process does."""
    from conftest import SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, write_game

    from cardgen.load.manifest import load_game

    write_game(workspace, "tiny", SIMPLE_MANIFEST, {"cards.csv": "name,power,,text\nA,1,x,a\nB,2,y,b\nC,3,,c\n"},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    data.remember_rows()
    first = data.read_game_data(load_game(workspace, "tiny"))
    assert [(p.rule, p.row) for p in first.problems] == [("unnamed-column", 2)]
    _file("data/tiny/cards.csv", "A,1,x,a", "A,1,,a")(workspace)
    again = data.read_game_data(load_game(workspace, "tiny"))
    assert [(p.rule, p.row) for p in again.problems] == [("unnamed-column", 3)]


WEIGHT_RULES = """\
rules:
  - {id: heavy, message: The cards weigh too much together, severity: warning, total: "sum(weight) <= 6"}
  - {id: light, message: A card weighs nothing, severity: warning, check: "weight >= 1"}
"""

# Each edit of a game whose rules read the column `weight` (as rows: name,power,text,count,weight), and the rules
# that then have a finding.
WEIGHT_EDITS: list[tuple[str, Callable[[list[str]], list[str]], set[str]]] = [
    ("the total broken", lambda lines: [*lines[:-1], lines[-1].replace(",3,3", ",3,4")], {"heavy"}),
    ("the column renamed away", lambda lines: [lines[0].replace("weight", "heft"), *lines[1:]], {"heavy", "light"}),
    ("the column back", lambda lines: [lines[0].replace("heft", "weight"), *lines[1:]], {"heavy"}),
    ("a row of no weight added", lambda lines: [*lines, "Delta,1,Added,1,0"], {"heavy", "light"}),
    ("the total mended", lambda lines: [*lines[:-2], lines[-2].replace(",3,4", ",3,1"), lines[-1]], {"light"}),
    ("the row removed", lambda lines: lines[:-1], set()),
]


def test_rules_in_a_process_checking_again_find_what_a_fresh_process_does(tiny_game: Path) -> None:
    """A process that validates again keeps each rule's expression checked and compiled (by its text and the
    columns it may read): after each edit (a total broken and mended, the column the rules read renamed away and
    back, a row added and removed) its findings are those a fresh process gives."""
    game = tiny_game / "data" / "tiny"
    (game / "game.yaml").write_text((game / "game.yaml").read_text() + WEIGHT_RULES)
    lines = (game / "cards.csv").read_text().splitlines()
    weights = ["weight", "1", "2", "3"]  # the last row's weight is edited (",3,3": NA's count and weight)
    (game / "cards.csv").write_text("\n".join(f"{line},{w}" for line, w in zip(lines, weights)) + "\n")
    for what, mine, rules in _checked_as_fresh(tiny_game, [(w, _rows(e), r) for w, e, r in WEIGHT_EDITS]):
        assert {p.rule for p in mine if p.rule in ("heavy", "light")} == rules, what


CSV = ("# a note above the header\nname,power,text\nAlpha,1,One\nBeta,2,\"Two, quoted\"\nGamma,3,\"Three\nlines\"\n"
       "Delta,4,Four\n")

# Each edit of CSV's lines (line 0 the note, 1 the header), and whether it is read from the lines it changes only
# (after CSV itself).
CSV_EDITS: list[tuple[str, Callable[[list[str]], list[str]], bool]] = [
    ("a cell changed", lambda lines: [*lines[:2], "Alpha,5,One", *lines[3:]], True),
    ("two rows swapped", lambda lines: [*lines[:2], lines[3], lines[2], *lines[4:]], True),
    ("a quote left open", lambda lines: [*lines[:2], 'Alpha,1,"One', *lines[3:]], False),
    ("a row spread over two lines", lambda lines: [*lines[:2], 'Alpha,1,"One', 'Beta",2,Two', *lines[4:]], False),
    ("a row of a quoted line break changed", lambda lines: [*lines[:4], 'Gamma,6,"Three', *lines[5:]], False),
    ("a row made blank", lambda lines: [*lines[:3], ",,", *lines[4:]], False),
    ("a row made ragged", lambda lines: [*lines[:3], "Beta,2,Two,extra", *lines[4:]], False),
    ("the header changed", lambda lines: [lines[0], "name,power,text,", *lines[2:]], False),
    ("the note made a row", lambda lines: ["Zero,0,Nought", *lines[1:]], False),
    ("the last row changed", lambda lines: [*lines[:-2], "Delta,7,Four", lines[-1]], True),
    ("a line added", lambda lines: [*lines[:-1], "Epsilon,5,Five", lines[-1]], False),
]


def _read(text: str) -> tuple:
    """Everything a CSV table holds."""
    table = data.csv_table(text, "data/tiny/cards.csv")
    return (table.header, table.header_line, table.by_header, [p.__dict__ for p in table.problems],
            [(row.values, row.file, row.line, row.items, row.key_lines) for row in table.rows])


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_csv_file_read_again_from_the_lines_it_changes_reads_what_a_whole_read_does(
        newline: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that builds again reads a CSV file whose changed lines each held a row on a line of its own, and
    still do (a whole row, no quote left open), from those lines only; after every other edit (a quote left open, a
    row spread over two lines or holding a line break, a row made blank or ragged, the header or the note above it
    changed, a line added) it reads the whole file: either way what a whole read gives, with LF and CRLF lines."""
    from cardgen.core import storage

    parsed: list[str] = []
    whole = data._parsed_table
    monkeypatch.setattr(data, "_parsed_table", lambda *args: parsed.append(args[1]) or whole(*args))
    data.remember_rows()
    lines = CSV.replace("\n", newline).split("\n")
    for what, edit, from_lines in CSV_EDITS:
        _read("\n".join(lines))
        parsed.clear()
        text = "\n".join(edit(lines))
        mine = _read(text)
        assert (not parsed) == from_lines, what
        storage.BUILDS_AGAIN.clear()  # a whole read, as a process that builds once reads
        assert mine == _read(text), what
        storage.BUILDS_AGAIN.set()


ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><path d="M0 0h10v10z"/></svg>'


def _icon(name: str, present: bool) -> Callable[[Path], None]:
    """A workspace icon file of that name made or removed."""
    def placed(root: Path) -> None:
        path = root / "icons" / f"{name}.svg"
        path.parent.mkdir(exist_ok=True)
        path.write_text(ICON) if present else path.unlink()
    return placed


# Each edit of the tiny game, and whether a card's text then names an icon that cannot be found.
REFERENCE_EDITS: list[tuple[str, Callable[[Path], None], bool]] = [
    ("an unknown icon written", _rows(lambda lines: [line.replace("Plain", "Plain :gear2:") for line in lines]), True),
    ("its icon file added", _icon("gear2", True), False),
    ("its icon file removed", _icon("gear2", False), True),
    ("the text drawn plain", _file("templates/tiny/face.svg", "text_box(card.text,", "text_box(card.name,"), False),
    ("the text drawn as text again", _file("templates/tiny/face.svg", "text_box(card.name,", "text_box(card.text,"),
     True),
    ("the reference mended", _rows(lambda lines: [line.replace(" :gear2:", "") for line in lines]), False),
    ("an alias made unknown", _file("data/tiny/game.yaml", "hexagonal-nut", "hexagonal-nutt"), True),
]


def test_references_in_a_process_checking_again_find_what_a_fresh_process_does(tiny_game: Path) -> None:
    """A process that validates again keeps each card's reference findings (by the card, the same object for an
    unchanged row) while its templates use the columns alike and the icons and images it named are as they were:
    after each edit (an unknown icon written in a card's text and mended, its file added and removed, the template
    drawing the text plain and as text again, the manifest's alias made unknown) its findings are a fresh process's."""
    for what, mine, broken in _checked_as_fresh(tiny_game, REFERENCE_EDITS):
        assert any(p.rule == "unknown-icon" and p.column == "text" for p in mine) == broken, what


SAFE_FACE = """\
    <svg {{ geo.svg_attrs }}>
      {{ text_line(card.name, 80, 80, 600, 60) }}
      {{ text_box(card.text, 80, 300, 600, 400, 50, min_size=20) }}
      {% if card.power > 5 %}<text x="2" y="40" font-size="30">{{ card.name }}</text>{% endif %}
    </svg>
"""

# Each edit of the tiny game (its face drawing a card's name outside the safe zone when its power is over 5), and the
# layout findings' rules it then has.
LAYOUT_EDITS: list[tuple[str, Callable[[Path], None], set[str]]] = [
    ("a text made too long", _rows(lambda lines: [line.replace("Plain", "Plain" + " words" * 400)
                                                  for line in lines]), {"text-overflow"}),
    ("another card's text changed", _rows(lambda lines: [line.replace("**Bold**", "**Bolder**") for line in lines]),
     {"text-overflow"}),
    ("the text made short", _rows(lambda lines: [line.replace(" words", "") for line in lines]), set()),
    ("a name drawn outside the safe zone", _rows(lambda lines: [line.replace("Beta,2,", "Beta,6,")
                                                                for line in lines]), {"safe-zone"}),
    ("two names drawn outside", _rows(lambda lines: [line.replace("Alpha,1,", "Alpha,7,") for line in lines]),
     {"safe-zone"}),
    ("a card added outside", _rows(lambda lines: [*lines, "Delta,8,Added,1"]), {"safe-zone"}),
    ("rows reordered", _rows(lambda lines: [lines[0], lines[2], lines[1], *lines[3:]]), {"safe-zone"}),
    ("cards removed", _rows(lambda lines: lines[:2]), {"safe-zone"}),
    ("the name drawn inside", _rows(lambda lines: [line.replace(",6,", ",1,").replace(",7,", ",1,")
                                                   for line in lines]), set()),
]


def test_layout_in_a_process_checking_again_finds_what_a_fresh_process_does(tiny_game: Path) -> None:
    """A process that validates again takes the last check's renders and findings of the cards it saw (the same
    objects, at the same places) whole while the caches keep them: after each edit (a text made to overflow its box
    and short again, another card changed meanwhile, names drawn outside the safe zone on one, two and three cards,
    a card added, rows reordered and removed) its findings are a fresh process's."""
    (tiny_game / "templates" / "tiny" / "face.svg").write_text(textwrap.dedent(SAFE_FACE))
    for what, mine, rules in _checked_as_fresh(tiny_game, LAYOUT_EDITS):
        assert {p.rule for p in mine if p.rule in ("text-overflow", "safe-zone")} == rules, what


# A game of many rows (an edit of a few of them patches the last build's lists at their places), two decks of them by
# filters, and a total over one deck (46 as written: broken past 50).
MANY_MANIFEST = """\
title: Many
font: Roboto Mono
fields:
  power: int
decks:
  weak:
    source: cards.csv
    face: face.svg
    back: back.svg
    filter: "power < 3"
""" + STRONG + """\
rules:
  - {id: strength, message: The cards are too strong together, severity: warning, total: "sum(power) <= 50"}
"""
MANY_ROWS = ["name,power,text,count", *(f"Card {n:02},{n % 5},Text {n},1" for n in range(24))]

# The rules of findings the edits make: spaces around a name, the total, a duplicate id, a text overflowing, the game's
# copies past their bound (30 in the test)
SPACES, TOTAL, TWICE, OVER, MANY = "spaces", "strength", "duplicate-id", "text-overflow", "too-many-copies"
UNKNOWN = "unknown-icon"

# Each edit of the rows (as lines; the header is line 0), and the rules of the findings it leaves
MANY_EDITS: list[tuple[str, Callable[[list[str]], list[str]], set[str]]] = [
    ("a value changed", lambda lines: [line.replace("Text 7,", "Text seven,") for line in lines], set()),
    ("a cell made wrong", lambda lines: [line.replace("Card 08,3,", "Card 08,three,") for line in lines], set()),
    ("the cell mended", lambda lines: [line.replace("Card 08,three,", "Card 08,3,") for line in lines], set()),
    ("a row moved out of a deck into the other", lambda lines: [line.replace("Card 06,1,", "Card 06,4,")
                                                                for line in lines], set()),
    ("spaces around a name", lambda lines: [line.replace("Card 09,", " Card 09 ,") for line in lines], {SPACES}),
    ("the total broken", lambda lines: [line.replace("Card 10,0,", "Card 10,9,") for line in lines], {SPACES, TOTAL}),
    ("the total mended", lambda lines: [line.replace("Card 10,9,", "Card 10,0,") for line in lines], {SPACES}),
    ("no copies", lambda lines: [line.replace("Text 11,1", "Text 11,0") for line in lines], {SPACES}),
    ("copies again", lambda lines: [line.replace("Text 11,0", "Text 11,1") for line in lines], {SPACES}),
    ("copies past the game's bound", lambda lines: [line.replace("Text 15,1", "Text 15,9") for line in lines],
     {SPACES, MANY}),
    ("copies within it", lambda lines: [line.replace("Text 15,9", "Text 15,1") for line in lines], {SPACES}),
    ("an id made twice", lambda lines: [line.replace("Card 12,", "Card 11,") for line in lines], {SPACES, TWICE}),
    ("the id mended", lambda lines: [line.replace("Card 11,2,", "Card 12,2,") for line in lines], {SPACES}),
    ("an icon unknown", lambda lines: [line.replace("Text 16,", "Text :nosuch: 16,") for line in lines],
     {SPACES, UNKNOWN}),
    ("the icon gone", lambda lines: [line.replace("Text :nosuch: 16,", "Text 16,") for line in lines], {SPACES}),
    ("a row added", lambda lines: [*lines, "Card 99,2,Added,1"], {SPACES, TOTAL}),
    ("a row removed", lambda lines: [lines[0], *lines[2:]], {SPACES, TOTAL}),
    ("rows reordered", lambda lines: [lines[0], lines[3], lines[2], lines[1], *lines[4:]], {SPACES, TOTAL}),
    ("a text too long for its box", lambda lines: [line.replace("Text 14,", "Text " + "long " * 600 + ",")
                                                   for line in lines], {SPACES, TOTAL, OVER}),
    ("the text short again", lambda lines: [line.replace("Text " + "long " * 600 + ",", "Text 14,")
                                            for line in lines], {SPACES, TOTAL}),
]


def _cards_of(cards: list[data.Card]) -> list[tuple]:
    """Everything a card holds but what later steps made of it, in order."""
    return [(c.deck, c.id, c.name, c.copies, c.fields, c.face_template, c.back_template, c.source_file, c.source_row,
             c.text_fields) for c in cards]


def test_edits_of_a_few_rows_of_many_load_and_find_what_a_fresh_process_does(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that builds again, an edit of a few of a table's many rows takes the last build's lists and
    patches them at the rows that changed (`data.RowsMade`: the rows converted, the decks' cards, the rows' schema
    findings; the game's counts, the reference and layout checks' cards): after each edit (a value changed, a cell
    made wrong and mended, a row moved by the decks' filters, spaces around a name, a total broken and mended, no
    copies and again, the game's copies past their bound and within, an id made twice and mended, an unknown icon and
    gone, a row added, removed, rows reordered, a text overflowing its box and not) the cards and findings are those
    of a process that builds once, and so are the layout findings and renders its caches keep for the next check; an
    unchanged row's card is the last build's object."""
    from conftest import SIMPLE_BACK, SIMPLE_FACE, write_game

    from cardgen.core import storage
    from cardgen.svg.context import BuildContext
    from cardgen.validate import validate_context

    monkeypatch.setattr(data, "MAX_GAME_COPIES", 30)
    write_game(workspace, "tiny", MANY_MANIFEST, {"cards.csv": "\n".join(MANY_ROWS) + "\n"},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})

    def checked(out_root: Path | None) -> tuple[list[data.Card], list[tuple]]:
        context = BuildContext.load(workspace, "tiny", out_root)
        return context.data.cards, sorted((_finding(p.__dict__) for p in validate_context(context)), key=str)

    data.remember_rows()
    cards, _ = checked(workspace / "kept")
    for what, edit, rules in MANY_EDITS:
        _rows(edit)(workspace)
        mine, found = checked(workspace / "kept")
        storage.BUILDS_AGAIN.clear()  # a process that builds once: nothing kept used
        try:
            fresh, fresh_found = checked(None)
            checked(workspace / "fresh")  # its caches written whole
        finally:
            storage.keep_for_next_builds()
        assert (_cards_of(mine), found) == (_cards_of(fresh), fresh_found), what
        # what the caches keep for the next check (this process's: in memory, a few values beyond their files) is
        # what a process that builds once keeps: the same layout findings, the renders by the same keys
        assert storage.KeptByGame(workspace / "kept", "layout", "tiny").kept == \
            storage.KeptByGame(workspace / "fresh", "layout", "tiny").kept, what
        assert set(storage.KeptByGame(workspace / "kept", "svg", "tiny").kept) == \
            set(storage.KeptByGame(workspace / "fresh", "svg", "tiny").kept), what
        assert {f[4] for f in found if f[4]} == rules, what
        if what == "a value changed":
            assert [a is b for a, b in zip(mine, cards)] == [card.name != "Card 07" for card in cards]
        cards = mine


def _naive_changed_lines(old: str, new: str) -> dict[int, tuple[str, str]] | None:
    """What `data._changed_lines` gives, by splitting both texts whole."""
    olds, news = old.split("\n"), new.split("\n")
    return {n: pair for n, pair in enumerate(zip(olds, news)) if pair[0] != pair[1]} if len(olds) == len(news) \
        else None


@pytest.mark.parametrize("end", ["\n", "", "\r\n"])
def test_the_changed_lines_of_a_long_text_are_those_a_whole_split_finds(end: str) -> None:
    """A CSV text read again is compared chunk by chunk from both ends and split only where it differs
    (`data._changed_lines`): for edits at its start, middle and end, two far apart, a line longer or shorter, lines
    added, removed or merged, on chunk boundaries and not, the changed lines are those splitting both texts finds."""
    import random

    pick = random.Random(37)
    lines = [f"Card {n},{pick.randint(0, 9)},{'x' * pick.randint(0, 40)}" for n in range(4000)]
    old = "\n".join(lines) + end

    def edited(*changes: tuple[int, str | None]) -> str:
        new = list(lines)
        for index, line in sorted(changes, reverse=True):
            if line is None:
                del new[index]
            else:
                new[index] = line
        return "\n".join(new) + end

    boundary = old.count("\n", 0, data._CHUNK)  # the line a chunk ends in
    texts = [old, edited((0, "Zero,1,")), edited((2000, "Middle,2,longer than it was before")),
             edited((3999, "Last,3,")), edited((10, "A,1,"), (3990, "B,2,")), edited((1500, "C,4,")),
             edited((boundary, "On the boundary,5,")), edited((boundary + 1, "After it,6,")), edited((2500, None)),
             old.replace(lines[1234] + "\n", lines[1234] + "\nAdded,7,\n"), old.replace(lines[77] + "\n", lines[77]),
             old + "Tail,8,", old[:-5] if not end else old[:-len(end)]]
    for before in texts:
        for after in texts:
            assert data._changed_lines(before, after) == _naive_changed_lines(before, after)

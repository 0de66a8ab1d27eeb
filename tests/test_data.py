"""Data loading: text in, typed values out by the schema only; copies; ids; filters."""
from __future__ import annotations

import pytest

from cardgen.core.errors import CardgenError
from cardgen.load.data import convert_value, load_cards, slugify
from cardgen.load.manifest import FieldSpec, load_game
from tests.conftest import REPO, SIMPLE_MANIFEST, write_game


@pytest.mark.parametrize("text,spec,expected", [
    ("7", FieldSpec(type="int"), 7),
    (" 7 ", FieldSpec(type="int"), 7),
    ("2.5", FieldSpec(type="float"), 2.5),
    ("yes", FieldSpec(type="bool"), True),
    ("0", FieldSpec(type="bool"), False),
    ("Fire", FieldSpec(type="enum", values=["Fire", "Ice"]), "Fire"),
    ("a; b;c", FieldSpec(type="list"), ["a", "b", "c"]),
    ("1;2", FieldSpec(type="list", item="int"), [1, 2]),
    ("~", FieldSpec(type="int"), None),
    ("", FieldSpec(type="int", default=4), 4),
    ("-", FieldSpec(type="str", none=["-"]), None),
    ("NA", FieldSpec(type="str"), "NA"),
    ("None", FieldSpec(type="str"), "None"),
    ("007", FieldSpec(type="str"), "007"),
])
def test_convert_value(text, spec, expected) -> None:
    assert convert_value(text, spec) == expected


@pytest.mark.parametrize("text,spec,message", [
    ("seven", FieldSpec(type="int"), "not a whole number"),
    ("1.5", FieldSpec(type="int"), "not a whole number"),
    ("maybe", FieldSpec(type="bool"), "not yes/no"),
    ("Wind", FieldSpec(type="enum", values=["Fire", "Ice"]), "not one of Fire, Ice"),
    ("", FieldSpec(type="str", required=True), "required"),
    ("12", FieldSpec(type="int", max=10), "above the maximum 10"),
])
def test_convert_value_errors(text, spec, message) -> None:
    with pytest.raises(ValueError, match=message):
        convert_value(text, spec)


def test_tiny_cards_typed_and_copied(tiny_game) -> None:
    cards = load_cards(load_game(tiny_game, "tiny"))
    assert [(c.id, c.copies) for c in cards] == [("alpha", 2), ("beta", 1), ("na", 3)]
    assert cards[0].fields["power"] == 1 and isinstance(cards[0].fields["power"], int)
    assert cards[2].name == "NA"  # pandas-style NA guessing must not happen
    assert cards[0].fields["text"] == 'Fire & Ice <2> "quoted"'
    assert (cards[1].source_file, cards[1].source_row) == ("data/tiny/cards.csv", 3)


def test_bad_cell_names_file_row_column(workspace) -> None:
    write_game(workspace, "bad", SIMPLE_MANIFEST, {"cards.csv": "name,power\nA,1\nB,lots\n"}, {})
    with pytest.raises(CardgenError) as info:
        load_cards(load_game(workspace, "bad"))
    assert str(info.value.problems[0]) == "data/bad/cards.csv:3:power: error: 'lots' is not a whole number"


def test_duplicate_ids_are_an_error(workspace) -> None:
    write_game(workspace, "bad", SIMPLE_MANIFEST, {"cards.csv": "name,power\nSame Name,1\nSame  name,2\n"}, {})
    with pytest.raises(CardgenError, match="duplicate card id 'same-name'"):
        load_cards(load_game(workspace, "bad"))


def test_yaml_and_filter(workspace) -> None:
    manifest = SIMPLE_MANIFEST.replace("source: cards.csv", "source: cards.yaml\n        filter: \"power >= 2\"")
    write_game(workspace, "y", manifest, {"cards.yaml": """\
        - {name: One, power: 1}
        - name: Two
          power: 2
        - {name: Three, power: 3, count: 0}
    """}, {})
    cards = load_cards(load_game(workspace, "y"))
    assert [(c.name, c.copies, c.source_row) for c in cards] == [("Two", 1, 2), ("Three", 0, 4)]


def test_yaml_lists_keep_their_items_and_errors_name_the_key_line(workspace) -> None:
    manifest = SIMPLE_MANIFEST.replace("source: cards.csv", "source: cards.yaml").replace(
        "power: int\n", "power: int\n      rules: list\n      sizes: {type: list, item: int}\n")
    write_game(workspace, "y", manifest, {"cards.yaml": """\
        - name: One
          power: 1
          rules: ["Regenerate; heal 2", "Counter"]
          sizes: [1, 2]
    """}, {})
    [card] = load_cards(load_game(workspace, "y"))
    assert card.fields["rules"] == ["Regenerate; heal 2", "Counter"] and card.fields["sizes"] == [1, 2]
    write_game(workspace, "y", manifest, {"cards.yaml": "- name: One\n  power: 1\n- name: Two\n\n  power: lots\n"}, {})
    with pytest.raises(CardgenError) as info:
        load_cards(load_game(workspace, "y"))
    assert str(info.value.problems[0]) == "data/y/cards.yaml:5:power: error: 'lots' is not a whole number"


def test_filter_refuses_attribute_access(workspace) -> None:
    manifest = SIMPLE_MANIFEST.replace("source: cards.csv", "source: cards.csv\n        filter: \"name.__class__\"")
    write_game(workspace, "f", manifest, {"cards.csv": "name,power\nA,1\n"}, {})
    with pytest.raises(CardgenError, match="decks.main.filter: .*not allowed"):
        load_cards(load_game(workspace, "f"))


def test_xlsx_source(workspace) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Cards"
    sheet.append(["name", "power", "count"])
    sheet.append(["Gamma", 5, 2])
    sheet.append(["007", None, None])
    write_game(workspace, "x", SIMPLE_MANIFEST.replace("source: cards.csv", "source: {file: cards.xlsx, sheet: Cards}"),
               {}, {})
    book.save(workspace / "data" / "x" / "cards.xlsx")
    cards = load_cards(load_game(workspace, "x"))
    assert [(c.name, c.fields["power"], c.copies) for c in cards] == [("Gamma", 5, 2), ("007", None, 1)]


def test_scrapbots_has_100_cards() -> None:
    cards = load_cards(load_game(REPO, "scrapbots"))
    decks = {c.deck for c in cards}
    playing = [c for c in cards if c.deck in ("starting", "center", "wounds")]
    assert {"starting", "center", "wounds"} <= decks
    assert sum(c.copies for c in playing) == 100
    assert sum(c.copies for c in playing if c.fields["type"] == "Wound") == 20


def test_slugify() -> None:
    assert slugify("Laser Cannon") == "laser-cannon"
    assert slugify("Éclair  d'Or!") == "eclair-d-or"

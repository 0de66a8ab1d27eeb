"""`values:` in game.yaml: placeholders in card text, names in templates and rules, and rules that read text."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import SIMPLE_BACK, make_workspace, run_cli, write_game

MANIFEST = """\
    title: Values
    font: Roboto Mono
    values:
      bonus: 2
      gold: [1, 2]
      slash_damage: 15
      motto: Hold the line
    fields:
      power: int
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
    rules:
      - id: slash-damage
        message: "Elite Slash deals 15 damage (rulebook: Shop)"
        where: "name == 'Slash'"
        check: "power == slash_damage"
      - id: high-ground
        message: "High Ground: +2 damage to all attacks (rulebook: Environments)"
        text: {columns: text, term: damage, check: "number == bonus"}
      - id: apothecary
        message: "The Apothecary takes 1 or 2 gold (rulebook: Apothecary)"
        where: "name == 'Apothecary'"
        text: {columns: text, term: gold, check: "number in gold", require: "pay {gold.min}-{gold.max} gold"}
"""

CARDS = """\
    name,power,text
    Slash,{slash_damage},Hit hard.
    High Ground,1,+{bonus} damage to all attacks.
    Apothecary,1,"**Apothecary:** pay {gold.min}-{gold.max} gold, remove 1 wound per gold."
    Plain,3,Braces {Like this} and {2} stay
"""

FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_line(card.name, 80, 80, 600, 60) }}
      {{ text_box(card.text, 80, 300, 600, 400, 50, min_size=20) }}
      {% if card.name == 'Plain' %}{{ text_line(values.motto, 80, 800, 600, 40) }}{% endif %}
    </svg>
"""


def _game(tmp_path: Path, cards: str = CARDS, manifest: str = MANIFEST) -> Path:
    root = make_workspace(tmp_path)
    write_game(root, "v", manifest, {"cards.csv": cards}, {"face.svg": FACE, "back.svg": SIMPLE_BACK})
    return root


def _set_value(root: Path, old: str, new: str) -> None:
    path = root / "data" / "v" / "game.yaml"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))


def _findings(root: Path, expect: int) -> list[str]:
    result = run_cli(root, "validate", "v", expect=expect)
    return [line for line in result.output.splitlines() if ": error:" in line or ": warning:" in line]


def test_values_fill_text_columns_and_rules(tmp_path: Path) -> None:
    root = _game(tmp_path)
    assert _findings(root, 0) == []
    run_cli(root, "build", "v")
    cards = {c["id"]: c["fields"] for c in json.loads((root / "output/v/build.json").read_text())["cards"]}
    assert cards["high-ground"]["text"] == "+2 damage to all attacks."
    assert cards["apothecary"]["text"].startswith("**Apothecary:** pay 1-2 gold")
    assert cards["slash"]["power"] == 15  # an int column holding a placeholder is the value, typed
    assert cards["plain"]["text"] == "Braces {Like this} and {2} stay"  # not placeholders: printed as written


def test_unknown_placeholder_is_a_finding_at_the_cell(tmp_path: Path) -> None:
    root = _game(tmp_path, CARDS.replace("+{bonus}", "+{bonsu}"))
    findings = _findings(root, 1)
    assert findings == ["data/v/cards.csv:3:text: error: unknown value {bonsu}: add it under `values:` in game.yaml "
                        "(the values are bonus, gold, slash_damage, motto); did you mean '{bonus}'? (unknown-value)"]


def test_changing_a_value_redraws_exactly_the_cards_that_print_it(tmp_path: Path) -> None:
    root = _game(tmp_path)
    first = run_cli(root, "build", "v").output
    assert "5 drawn" in first  # 4 faces and the back
    _set_value(root, "bonus: 2", "bonus: 3")
    _set_value(root, "id: high-ground", "id: high-ground\n    severity: warning")  # the rule still says 2
    again = run_cli(root, "build", "v").output
    assert "1 drawn, 4 from cache" in again
    assert "~ high-ground: text +2 damage to all attacks. -> +3 damage to all attacks." in again
    _set_value(root, "motto: Hold the line", "motto: Stand fast")  # printed by the template on one card
    assert "1 drawn, 4 from cache" in run_cli(root, "build", "v").output


def test_text_rules_find_the_audit_edits_at_the_cell(tmp_path: Path) -> None:
    edited = CARDS.replace("{slash_damage}", "12").replace("+{bonus}", "+3").replace(
        "pay {gold.min}-{gold.max}", "pay 1-3")
    assert _findings(_game(tmp_path, edited), 1) == [
        "data/v/cards.csv:2:power: error: Elite Slash deals 15 damage (rulebook: Shop); card 'slash' has power = 12, "
        "slash_damage = 15 (slash-damage)",
        "data/v/cards.csv:3:text: error: High Ground: +2 damage to all attacks (rulebook: Environments); card "
        "'high-ground' says '3 damage': number = 3, bonus = 2 (high-ground)",
        "data/v/cards.csv:4:text: error: The Apothecary takes 1 or 2 gold (rulebook: Apothecary); card 'apothecary' "
        "says '1-3 gold': number = 3, gold = [1, 2] (apothecary)",
        "data/v/cards.csv:4:text: error: The Apothecary takes 1 or 2 gold (rulebook: Apothecary); card 'apothecary' "
        "does not say 'pay 1-2 gold' (apothecary)",
    ]


def test_numbers_after_a_term_plurals_and_patterns(tmp_path: Path) -> None:
    manifest = MANIFEST.split("    rules:")[0] + """\
    rules:
      - id: tens
        message: "Damage comes in tens (rulebook: Attack)"
        text: {columns: text, pattern: '(\\d+) (?:splash )?damage', check: "number % 10 == 0"}
      - id: attacks-with
        message: "An empty lane attacks with 1 (rulebook: Battles)"
        where: "name == 'Lane'"
        text: {columns: text, term: attacks with, check: "number == power"}
      - id: discarders
        message: "JQ+ places 2 Discarders (rulebook: Effect List)"
        where: "name == 'JQ'"
        text: {columns: text, term: discarder, check: "number == bonus"}
"""
    cards = """\
        name,power,text
        Cannon,1,Deal 20 damage and 15 splash damage.
        Lane,1,A lane with no red card attacks with **0**.
        JQ,1,Place 3 Discarders.
    """
    findings = _findings(_game(tmp_path, cards, manifest), 1)
    assert [f.split(": error: ")[0] for f in findings] == ["data/v/cards.csv:2:text", "data/v/cards.csv:3:text",
                                                          "data/v/cards.csv:4:text"]
    assert "says '15 splash damage': number = 15" in findings[0]
    assert "says 'attacks with 0': number = 0, power = 1" in findings[1]
    assert "says '3 Discarders': number = 3, bonus = 2" in findings[2]


def test_a_bad_text_rule_or_value_name_is_located_in_game_yaml(tmp_path: Path) -> None:
    manifest = MANIFEST.replace("number == bonus", "number == bonsu")
    manifest = manifest.replace("      motto:", "      power: 3\n      motto:")
    findings = _findings(_game(tmp_path, manifest=manifest), 1)
    assert findings == [
        "data/v/game.yaml:7: error: values.power: a column is called 'power' too, so a rule could not tell them "
        "apart; rename the value (value-name)",
        "data/v/game.yaml:22: error: rule 'high-ground' cannot be checked: unknown column 'bonsu' (high-ground)",
    ]


def test_a_patterns_named_groups_equal_their_values(tmp_path: Path) -> None:
    manifest = MANIFEST.split("    rules:")[0] + """\
    rules:
      - id: rounds
        message: "PvP after rounds 3, 6 and 9 (rulebook: PvP)"
        text: {columns: text, pattern: 'rounds (?P<pvp>\\d+), (?P<pvp__2>\\d+) and (?P<pvp__3>\\d+)'}
      - id: power
        message: "The power printed is the card's (rulebook: Cards)"
        text: {columns: text, pattern: 'Power (?P<power>\\d+)'}
"""
    manifest = manifest.replace("      motto: Hold the line\n", "      motto: Hold the line\n      pvp: [3, 6, 9]\n")
    cards = """\
        name,power,text
        Fine,2,"PvP after rounds 3, 6 and 9. Power 2."
        Off,2,"PvP after rounds 3, 7 and 9. Power 3."
    """
    findings = _findings(_game(tmp_path, cards, manifest), 1)
    assert findings == [
        "data/v/cards.csv:3:text: error: PvP after rounds 3, 6 and 9 (rulebook: PvP); card 'off' says 'rounds 3, 7 and "
        "9': number = 7, pvp = [3, 6, 9] (rounds)",
        "data/v/cards.csv:3:text: error: The power printed is the card's (rulebook: Cards); card 'off' says 'Power 3': "
        "number = 3, power = 2 (power)",
    ]


def test_a_pattern_group_naming_nothing_and_unchecked_groups_are_refused(tmp_path: Path) -> None:
    rules = MANIFEST.split("    rules:")[0] + """\
    rules:
      - id: typo
        message: "m"
        text: {columns: text, pattern: 'Power (?P<powr>\\d+)'}
"""
    assert _findings(_game(tmp_path / "a", manifest=rules), 1) == [
        "data/v/game.yaml:17: error: rule 'typo' cannot be checked: text.pattern: the group 'powr' names no value or "
        "column (typo)"]
    unchecked = rules.replace("(?P<powr>\\d+)", "(\\d+)")
    [finding] = _findings(_game(tmp_path / "b", manifest=unchecked), 1)
    assert finding.startswith("data/v/game.yaml:19: error: rules.0.text: a pattern's unnamed groups need check:")


def test_a_deck_filter_names_values_too(tmp_path: Path) -> None:
    filtered = "        text: [text]\n        filter: \"power < slash_damage\"\n"
    manifest = MANIFEST.split("    rules:")[0].replace("        text: [text]\n", filtered)
    root = _game(tmp_path, manifest=manifest)
    run_cli(root, "build", "v")
    ids = {c["id"] for c in json.loads((root / "output/v/build.json").read_text())["cards"]}
    assert ids == {"high-ground", "apothecary", "plain"}  # Slash's power is slash_damage: left out


def test_a_total_names_values(tmp_path: Path) -> None:
    manifest = MANIFEST + """\
      - id: power-budget
        message: "The cards' power adds up to at most 3 Slashes (rulebook: Budget)"
        total: "sum(power) <= 3 * slash_damage"
"""
    assert _findings(_game(tmp_path / "a", manifest=manifest), 0) == []
    over = CARDS.replace("Plain,3,", "Plain,31,")
    assert _findings(_game(tmp_path / "b", over, manifest), 1) == [
        "data/v/cards.csv: error: The cards' power adds up to at most 3 Slashes (rulebook: Budget); sum(power) = 48, "
        "slash_damage = 15 (power-budget)"]  # the sums, then the values they were compared with


def test_a_value_that_is_no_number_text_or_list_is_one_error_at_its_key(tmp_path: Path) -> None:
    for i, (bad, shown) in enumerate((("true", "True"), ("", "None"), ("[]", "[]"), ("{a: 1}", "{'a': 1}"))):
        root = _game(tmp_path / str(i), manifest=MANIFEST.replace("      bonus: 2", f"      bonus: {bad}"))
        assert _findings(root, 1) == [f"data/v/game.yaml:4: error: values.bonus: {shown} is not a value: write a "
                                      "number, a text or a list of them (2, \"two\", [1, 2])"]

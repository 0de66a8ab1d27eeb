"""Game rules in game.yaml: the expression sandbox, row/aggregate/expect/term rules, and the Scrapbots rules
catching data that follows the other side of each contradiction in its design document."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cardgen.core.expressions import (
    ExpressionError,
    check_aggregate,
    check_expression,
    evaluate_aggregate,
    evaluate_mask,
)
from cardgen.validate import validate_game
from cardgen.validate.rules import unknown_terms
from tests.test_validate_support import REPO, mini_workspace, rules_of, with_manifest, write_game


@pytest.fixture(name="ws")
def _ws(tmp_path: Path) -> Path:
    return mini_workspace(tmp_path)

FRAME = [{"name": "A", "tier": 1, "damage": 6.0, "count": 2},
         {"name": "B", "tier": 1, "damage": 9.0, "count": 3},
         {"name": "C", "tier": 2, "damage": None, "count": 1}]
COLUMNS = set(FRAME[0])


# ---------------------------------------------------------------- the sandbox

@pytest.mark.parametrize("expr", [
    "__import__('os')", "__import__('os').system('true')", "name.__class__", "damage.__class__.__init__.__globals__",
    "name.str.len() > 0", "@pd", "eval('1')", "open('/etc/passwd')", "name[0] == 'A'", "(lambda: 1)()",
    "[x for x in name]", "_hidden == 1", "filled(damage, name)", "filled('x')",
])
def test_sandbox_refuses(expr: str) -> None:
    with pytest.raises(ExpressionError):
        check_expression(expr, COLUMNS)
    with pytest.raises(ExpressionError):
        evaluate_mask(FRAME, expr)


def test_sandbox_refusal_names_the_offending_part() -> None:
    with pytest.raises(ExpressionError, match=r"'name.__class__' is not allowed"):
        check_expression("tier == 1 and name.__class__", COLUMNS)
    with pytest.raises(ExpressionError, match=r"'__import__\('os'\)' is not allowed: the only functions"):
        check_expression("__import__('os')")
    with pytest.raises(ExpressionError, match="unknown column 'dmg'"):
        check_expression("dmg > 1", COLUMNS)


def test_aggregates_are_only_allowed_in_totals() -> None:
    with pytest.raises(ExpressionError):
        check_expression("sum(count) == 5")
    check_aggregate("sum(count) == 5 and 1 <= rows() <= 3 and distinct(tier) == 2")
    with pytest.raises(ExpressionError, match="rows\\(\\) takes no arguments"):
        check_aggregate("rows(name) == 1")
    with pytest.raises(ExpressionError):
        check_aggregate("sum(count).__class__")


def test_row_expressions_with_helpers() -> None:
    assert evaluate_mask(FRAME, "5 <= damage <= 7") == [True, False, False]
    assert evaluate_mask(FRAME, "tier == 1 and damage > 4") == [True, True, False]
    assert evaluate_mask(FRAME, "empty(damage) or damage > 8") == [False, True, True]
    assert evaluate_mask(FRAME, "name in ['A', 'C']") == [True, False, True]


def test_matches_is_a_whole_text_pattern_and_empty_never_matches() -> None:
    assert evaluate_mask(FRAME, "matches(name, '[AB]')") == [True, True, False]
    assert evaluate_mask(FRAME, "not matches(name, 'A|C') and tier == 1") == [False, True, False]
    assert evaluate_mask(FRAME, "matches(damage, '.*')") == [True, True, False]  # the empty damage
    assert evaluate_mask(FRAME, r"matches(damage, '\d\.0')") == [True, True, False]  # taken as written
    for bad in ("matches(name)", "matches(name, tier)", "matches(name, '(')", "matches('A', 'A')",
                f"matches(name, '{'x' * 201}')"):
        with pytest.raises(ExpressionError, match="matches"):
            check_expression(bad, COLUMNS)


def test_distinct_counts_combinations_of_columns() -> None:
    frame = [{"rank": "2", "suit": "S"}, {"rank": "2", "suit": "H"}, {"rank": "2", "suit": "S"},
             {"rank": None, "suit": "D"}]
    assert evaluate_aggregate(frame, "distinct(rank, suit) == 2 and distinct(suit) == 3")[0]
    with pytest.raises(ExpressionError, match="one or more column names"):
        check_aggregate("distinct() == 1")


def test_aggregate_values_are_reported() -> None:
    assert evaluate_aggregate(FRAME, "sum(count) == 6") == (True, {"sum(count)": 6})
    holds, values = evaluate_aggregate([row for row in FRAME if row["tier"] == 2], "3 <= rows() <= 10")
    assert not holds and values == {"rows()": 1}
    assert evaluate_aggregate(FRAME, "max(damage) == 9 and distinct(tier) == 2")[0]


# ---------------------------------------------------------------- rules in a game

RULES = """\
    rules:
      - id: power-range
        message: "Units have power 1-5 (rulebook: Units)"
        where: "kind == 'Unit'"
        check: "1 <= power <= 5"
      - id: few-spells
        message: "Between 1 and 2 spells (rulebook: Deck)"
        severity: warning
        where: "kind == 'Spell'"
        total: "1 <= rows() <= 2"
      - id: copies-per-kind
        message: "At most 4 copies of each kind (rulebook: Deck)"
        total: "sum(count) <= 4"
        per: kind
      - id: card-list
        message: "Counts follow the card list (rulebook: Card List)"
        expect: {values: {Alpha: 2, Beta: 1, Gamma: 1}}
      - id: names
        message: "Cards the rulebook names exist (rulebook: Setup)"
        terms: {names: [Alpha, Omega]}
      - id: terms
        message: "Terms in text are known (rulebook: Terms)"
        terms: {text: [text], known: [Bold, Gain]}
"""


def test_rule_on_yaml_data_points_at_the_key_holding_the_value(ws: Path) -> None:
    """A failed check on a YAML record names the line of the key that holds the wrong value, and that column:
    the consequent of an implication (`... or power <= 5`), the failing part of an `and`."""
    manifest = with_manifest("""\
        rules:
          - {id: strong-units, message: "Units have power 1-5", check: "kind != 'Unit' or power <= 5"}
          - {id: both, message: "Counted and weak", check: "count >= 1 and power <= 5 and kind == 'Unit'"}
          - {id: spell, message: "Only spells", check: "kind == 'Spell'"}
        """).replace("source: cards.csv", "source: cards.yaml")
    write_game(ws, manifest=manifest, files={"cards.yaml": """\
        - name: Beta
          kind: Spell
        - name: Alpha
          kind: Unit
          count: 2
          text: Hi
          power: 7
        """})
    findings = {f.rule: (f.file, f.row, f.column) for f in validate_game(ws, "mini")}
    assert findings == {"strong-units": ("data/mini/cards.yaml", 7, "power"),
                        "both": ("data/mini/cards.yaml", 7, "power"),
                        "spell": ("data/mini/cards.yaml", 4, "kind")}


def test_rules_of_each_kind(ws: Path) -> None:
    write_game(ws, manifest=with_manifest(RULES), files={"cards.csv": """\
        name,kind,power,count,text
        Alpha,Unit,7,5,Then Draw a card.
        Beta,Spell,0,1,**Bold** and *Italic Flavour*
        Delta,Spell,0,1,
        Eps,Spell,0,1,
    """})
    shown = [str(f) for f in validate_game(ws, "mini", layout=False)]
    assert shown == [
        "data/mini/cards.csv:2:power: error: Units have power 1-5 (rulebook: Units); card 'alpha' has power = 7 "
        "(power-range)",
        "data/mini/cards.csv: warning: Between 1 and 2 spells (rulebook: Deck); rows() = 3 (few-spells)",
        "data/mini/cards.csv: error: At most 4 copies of each kind (rulebook: Deck); sum(count) = 5 for kind = "
        "'Unit' (copies-per-kind)",
        "data/mini/cards.csv:2:count: error: Counts follow the card list (rulebook: Card List); 'Alpha' has count 5, "
        "expected 2 (card-list)",
        "data/mini/game.yaml:38: error: Counts follow the card list (rulebook: Card List); no card has name "
        "'Gamma' (card-list)",
        "data/mini/cards.csv:4:name: error: Counts follow the card list (rulebook: Card List); 'Delta' is not "
        "listed; did you mean 'Beta'? (card-list)",
        "data/mini/cards.csv:5:name: error: Counts follow the card list (rulebook: Card List); 'Eps' is not "
        "listed (card-list)",
        "data/mini/game.yaml:41: error: Cards the rulebook names exist (rulebook: Setup); no card is called "
        "'Omega' (names)",
        "data/mini/cards.csv:2:text: error: Terms in text are known (rulebook: Terms); 'Draw' is neither a term "
        "of the rulebook nor a card name (terms)",
    ]


def test_rule_expression_refused_is_a_finding_at_the_rule(ws: Path) -> None:
    write_game(ws, manifest=with_manifest("""\
        rules:
          - id: sneaky
            message: "m"
            check: "name.__class__.__init__.__globals__"
    """))
    [finding] = validate_game(ws, "mini", layout=False)
    assert finding.rule == "sneaky" and finding.file == "data/mini/game.yaml" and finding.row == 23
    assert "rule 'sneaky' cannot be checked: 'name.__class__.__init__.__globals__' is not allowed" in finding.message


def test_unknown_terms_skip_sentence_starts_flavour_and_icons() -> None:
    known = {"scrapbot", "lane", "exhausted", "activate", "energy"}
    assert unknown_terms("**Activate:** Ready another Exhausted Scrapbot in your Lanes.", known) == []
    assert unknown_terms("*It Saw You First.* Gain 1 :energy:. Draw two.", known) == []
    assert unknown_terms("Deal 10 damage to a Scrapbott in a Lane.", known) == ["Scrapbott"]
    assert unknown_terms("**Overload:** deal 10.", known) == ["Overload"]


# ---------------------------------------------------------------- Scrapbots: the other side of each contradiction

@pytest.fixture
def scrapbots(tmp_path: Path) -> Path:
    """A copy of the repository's Scrapbots game (data and templates) in a workspace of its own."""
    root = tmp_path / "ws"
    for folder in ("templates/scrapbots", "data/scrapbots"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def _edit_cards(root: Path, old: str, new: str) -> None:
    path = root / "data" / "scrapbots" / "cards.csv"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_scrapbots_copy_is_clean(scrapbots: Path) -> None:
    assert validate_game(scrapbots, "scrapbots", layout=False) == []


def test_scrapbots_starting_deck_of_4_spare_parts_and_4_circuitry_is_caught(scrapbots: Path) -> None:
    # The Terms section says a starting deck is 4 Spare Parts and 4 Circuitry; the data follows the Card List.
    _edit_cards(scrapbots, "Spare Parts,Resource,starting,16,",
                "Spare Parts,Resource,starting,8,1,1,,,,,,,,,,\"Salvage.\",gears\n"
                "Circuitry,Resource,starting,8,")
    rules = set(rules_of(validate_game(scrapbots, "scrapbots", layout=False)))
    assert {"starting-deck", "card-list"} <= rules


def test_scrapbots_wounds_named_brain_damage_are_caught(scrapbots: Path) -> None:
    # Setup calls the 20 wounds "Brain Damage"; the Card List (which the data follows) calls them Head Trauma.
    _edit_cards(scrapbots, "Head Trauma,Wound", "Brain Damage,Wound")
    findings = validate_game(scrapbots, "scrapbots", layout=False)
    assert {"wound-name", "card-list", "rulebook-card-names"} <= set(rules_of(findings))
    wound = next(f for f in findings if f.rule == "wound-name")
    assert (wound.file, wound.row, wound.column) == ("data/scrapbots/cards.csv", 25, "name")


def test_scrapbots_health_and_attack_rules(scrapbots: Path) -> None:
    _edit_cards(scrapbots, "Drone,Scrapbot,center,8,2,,10,Zap,1,10,", "Drone,Scrapbot,center,8,2,,15,Zap,0,10,")
    _edit_cards(scrapbots, "Head Trauma,Wound,wound,20,", "Head Trauma,Wound,wound,19,")
    rules = set(rules_of(validate_game(scrapbots, "scrapbots", layout=False)))
    assert {"health-steps", "attack-costs-energy", "twenty-wounds", "hundred-cards", "card-list"} <= rules


def test_refers_rule_checks_deck_and_card_names(ws: Path) -> None:
    manifest = with_manifest("""\
        rules:
          - id: deck-types
            message: "Deck types name decks (rulebook: Monsters)"
            refers: {column: decks_of, to: decks}
          - id: summons
            message: "A summoned card exists (rulebook: Summoning)"
            refers: {column: summons, to: name, among: [main]}
    """).replace("  text: str\n", "  text: str\n  decks_of: list\n")
    write_game(ws, manifest=manifest, files={"cards.csv": """\
        name,decks_of,summons
        Alpha,main;mian,Beta
        Beta,,Gamma
    """})
    shown = [str(f) for f in validate_game(ws, "mini", layout=False)]
    assert shown == [
        "data/mini/cards.csv:2:decks_of: error: Deck types name decks (rulebook: Monsters); no deck 'mian'; "
        "did you mean 'main'? (deck-types)",
        "data/mini/cards.csv:3:summons: error: A summoned card exists (rulebook: Summoning); no card name "
        "'Gamma' (summons)",
    ]


def test_rules_on_undeclared_columns_and_on_no_cards(ws: Path) -> None:
    manifest = with_manifest("""\
        rules:
          - {id: tier1, message: "Tier 1 deals 5-7", where: "tier == 1", check: "5 <= damage <= 7"}
          - {id: some-cards, message: "At least one card", total: "rows() >= 1"}
    """)
    write_game(ws, manifest=manifest, files={"cards.csv": "name,tier,damage\nA,1,9\nB,2,9\n"})
    assert [(f.rule, f.row, f.column) for f in validate_game(ws, "mini", layout=False)] == [("tier1", 2, "damage")]
    write_game(ws, manifest=manifest, files={"cards.csv": "name,tier,damage,count\n"})
    findings = validate_game(ws, "mini", layout=False)
    assert [(f.rule, f.message) for f in findings if f.rule != "empty-file"] == [
        ("some-cards", "At least one card; rows() = 0")]


def test_a_text_compared_with_a_number_is_a_finding_at_the_rule_or_filter(ws: Path) -> None:
    manifest = with_manifest("""\
        rules:
          - {id: r, message: m, check: "name > 1"}
    """)
    write_game(ws, manifest=manifest)
    [finding] = validate_game(ws, "mini", layout=False)
    assert (finding.file, finding.row, finding.rule) == ("data/mini/game.yaml", 23, "r")
    assert finding.message == "rule 'r' cannot be evaluated: cannot compare 'Alpha' (a text) > 1 (a number) " \
                              "(card 'alpha')"
    write_game(ws, manifest=manifest.replace("source: cards.csv", "source: cards.csv\n    filter: \"kind == 'Spell' "
                                                                  "and name < 2\""))
    [finding] = validate_game(ws, "mini", layout=False)
    assert finding.rule == "filter" and finding.file == "data/mini/game.yaml"
    assert finding.message == "decks.main.filter: cannot compare 'Beta' (a text) < 2 (a number) (the row at " \
                              "data/mini/cards.csv:3)"


def test_a_game_without_rules_makes_no_rows_for_them(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules' rows (every card's fields, numbers read as numbers) are made only when a rule reads them: a game
    without rules, as most edits of one find it, pays nothing for them."""
    from cardgen.validate import rules

    made: list[int] = []
    card_rows = rules.card_rows
    monkeypatch.setattr(rules, "card_rows", lambda cards, *rest: made.append(len(cards)) or card_rows(cards, *rest))
    validate_game(ws, "mini", layout=False)
    assert made == []
    write_game(ws, manifest=with_manifest("""
        rules:
          - {id: some, message: "Some power", check: "power >= 0"}
        """))
    validate_game(ws, "mini", layout=False)
    assert made and made[0] > 0

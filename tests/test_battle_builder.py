"""Battle Builder (data/battle-builder): it builds and validates cleanly, its README's counts are the build's,
every rule fires when the data breaks it, and each contradiction's other side is caught."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pypdf import PdfReader

from cardgen.load.manifest import load_game
from cardgen.validate import validate_game
from tests.conftest import REPO, run_cli
from tests.example_games import built_counts, edit, readme_counts, rules_fired

GAME = "battle-builder"


# ---------------------------------------------------------------- the whole game

def test_build_matches_the_readme(built: tuple[Path, str]) -> None:
    out, log = built
    warnings = [line for line in log.splitlines() if "warning" in line]
    shipped = [line for line in warnings if line.endswith("(monster-hunter-reachable)")]  # README: contradictions
    # and none of the print: on Letter the cards and the score board's tiles get cut lines for the lost crop marks
    assert "error" not in log and warnings == shipped and len(shipped) == 1
    promised = readme_counts(GAME)
    assert len(promised) == 20 and built_counts(out) == promised
    assert sum(copies for _, _, copies in promised.values()) == 345


def test_outputs_hold_every_piece(built: tuple[Path, str]) -> None:
    out, _ = built
    record = json.loads((out / "build.json").read_text())
    cards = sum(c["copies"] for c in record["cards"] if c["kind"] == "card")
    pages = len(PdfReader(out / "print" / f"{GAME}-letter.pdf").pages)
    assert pages >= 2 * -(-cards // 9)  # 9 poker cards a page at most, and a back page for each
    [saved] = (out / "tts").glob("*.json")
    objects = json.loads(saved.read_text())["ObjectStates"]
    decks = {o["Nickname"]: len(o.get("ContainedObjects", [o])) for o in objects if o["Name"] in ("DeckCustom", "Card")}
    assert decks["Starting Attacks"] == 20 and decks["Monsters"] == 9 and decks["Quick Reference"] == 4
    assert sum(1 for o in objects if o["Name"] == "Infinite_Bag") == 6
    assert [o["Nickname"] for o in objects if o["Name"] == "Custom_Board"] == ["Score Board"]
    gallery = (out / "index.html").read_text()
    assert all(card["face"] in gallery for card in record["cards"])


def test_yaml_errors_name_the_line_of_the_key(copy: Path) -> None:
    edit(copy, GAME, "monsters.yaml", "hp: 25\n  attack: 4", "hp: lots\n  attack: 4")
    text = (copy / "data" / GAME / "monsters.yaml").read_text()
    line = text.splitlines().index("  hp: lots") + 1
    [finding] = [f for f in validate_game(copy, GAME, layout=False) if f.severity == "error"]
    assert (finding.file, finding.row, finding.column) == (f"data/{GAME}/monsters.yaml", line, "hp")


# ---------------------------------------------------------------- each rule fires when the data breaks it

BREAKS = {  # rule id -> (file, text, replacement)
    "environment-numbers": ("table.csv", "-{sandstorm_speed} speed", "-3 speed"),
    "arena-numbers": ("table.csv", "reduced by {cursed_ground_hp}", "reduced by 4"),
    "elite-slash": ("cards.csv", "2,12,{elite_slash_damage},", "2,12,14,"),
    "reference-numbers": ("reference.yaml", "after rounds {pvp_rounds}", "after rounds 3, 5 and 9"),
    "revenge-token": ("tokens.csv", "+{revenge_damage} damage with all attacks", "+3 damage with all attacks"),
    "starting-values": ("cards.csv", "Heavy Swing,Attack,0,4,,4,", "Heavy Swing,Attack,0,4,,5,"),
    "starting-attacks": ("cards.csv", "Jab,Attack,0,8,", "Jab,Attack,0,9,"),
    "starting-defenses": ("cards.csv", "Parry,Defense,0,4,", "Parry,Defense,0,5,"),
    "tier-costs": ("cards.csv", "Quick Slash,Attack,1,2,4,", "Quick Slash,Attack,1,2,5,"),
    "attack-values": ("cards.csv", "Flame Blade,Attack,2,2,8,9,", "Flame Blade,Attack,2,2,8,11,"),
    "defense-values": ("cards.csv", "Aegis,Defense,3,2,12,12,", "Aegis,Defense,3,2,12,13,"),
    "unique-per-tier": ("cards.csv", "Flurry,Attack,1,2,4,5,2,,*A blur of blows.*,whirlwind\n", ""),
    "card-values": ("cards.csv", "Cleave,Attack,2,2,8,8,3,", "Cleave,Attack,2,2,8,8,2,"),
    "monster-hp": ("monsters.yaml", "hp: 22", "hp: 26"),
    "monster-attack": ("monsters.yaml", "attack: 8", "attack: 9"),
    "monster-speed": ("monsters.yaml", "hp: 12\n  attack: 2\n  speed: 3", "hp: 12\n  attack: 2\n  speed: 4"),
    "monster-reward": ("monsters.yaml", "hp: 40\n  attack: 6\n  speed: 7\n  reward: 10",
                       "hp: 40\n  attack: 6\n  speed: 7\n  reward: 12"),
    "three-per-difficulty": ("monsters.yaml", "Giant Rat\n  set: game\n  difficulty: Easy",
                             "Giant Rat\n  set: game\n  difficulty: Medium"),
    "every-difficulty": ("monsters.yaml", "Iron Golem\n  set: game", "Iron Golem\n  set: playtest"),
    "monster-decks": ("monsters.yaml", "[attack-tier-1, defense-tier-3]", "[attack-tier-1, defence-tier-3]"),
    "playtest-monsters": ("monsters.yaml", "hp: 18", "hp: 20"),
    "playtest-three-monsters": ("monsters.yaml", "Training Ogre\n  set: playtest\n  difficulty: Hard",
                                "Training Ogre\n  set: playtest\n  difficulty: Medium"),
    "upgrade-costs": ("table.csv", "HP Upgrade,Upgrade,16,3,", "HP Upgrade,Upgrade,16,5,"),
    "upgrade-caps": ("table.csv", "Stamina Upgrade,Upgrade,12,", "Stamina Upgrade,Upgrade,16,"),
    "tracker-ranges": ("trackers.csv", "HP Tracker,HP,4,20,40", "HP Tracker,HP,4,20,45"),
    "nine-rounds": ("board.yaml", "pvp_every: 3", "pvp_every: 2"),
    "max-vp": ("board.yaml", "vp_max: 15", "vp_max: 16"),
    "vp-awards": ("board.yaml", "monster_vp: 1", "monster_vp: 2"),
    "document-names": ("table.csv", "Narrow Passage,Environment", "Tight Passage,Environment"),
    "monster-specials": ("monsters.yaml", "loses {speed_drain_stamina} stamina", "loses 3 stamina"),
    "tier-2-counter": ("cards.csv", "Riposte,Defense,2,2,8,7,3,,**Counter {tier2_counter_damage}",
                       "Riposte,Defense,2,2,8,7,3,,**Counter 2"),
    "objective-numbers": ("table.csv", "Defeat {monster_hunter_easy} or more", "Defeat 5 or more"),
    "objective-vp": ("table.csv", "Objective,1,,,,{elite_arsenal_vp},", "Objective,1,,,,3,"),
    "upgrade-text": ("table.csv", "+5 stamina.", "+10 stamina."),
    "score-board-text": ("board.yaml", "Defeat a monster: 1 VP", "Defeat a monster: 2 VP"),
}
SHIPPED = {"monster-hunter-reachable"}  # a warning the game ships with: tests/test_rulebook_numbers.py settles it


def test_every_rule_has_a_break() -> None:
    assert set(BREAKS) | SHIPPED == {rule.id for rule in load_game(REPO, GAME).spec.rules}


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_rule_fires_when_broken(copy: Path, rule: str) -> None:
    edit(copy, GAME, *BREAKS[rule])
    assert rule in rules_fired(copy, GAME)


# ---------------------------------------------------------------- the other side of each contradiction

CONTRADICTIONS = {  # name -> (edits following the side the data does not follow, rules that catch them)
    "first-playtest numbers in the full monster deck": (
        [("monsters.yaml", "hp: 22", "hp: 18"), ("monsters.yaml", "hp: 38", "hp: 25")], {"monster-hp"}),
    "difficulty-tier numbers in the playtest deck": (
        [("monsters.yaml", "hp: 18", "hp: 22")], {"playtest-monsters"}),
    "first-playtest attack values 2-5": (
        [("cards.csv", "Heavy Swing,Attack,0,4,,4,", "Heavy Swing,Attack,0,4,,5,")], {"starting-values"}),
    "first-playtest 10 attack and 6 defense cards per player": (
        [("cards.csv", "Jab,Attack,0,8,", "Jab,Attack,0,28,"), ("cards.csv", "Parry,Defense,0,4,",
                                                               "Parry,Defense,0,16,")],
        {"starting-attacks", "starting-defenses"}),
    "a game of 4 rounds": ([("board.yaml", "rounds: 9", "rounds: 4")], {"nine-rounds", "max-vp"}),
    "4-5 options per tier": (
        [("cards.csv", "Flurry,Attack,1,2,4,5,2,,*A blur of blows.*,whirlwind\n", "")], {"unique-per-tier"}),
}


@pytest.mark.parametrize("name", sorted(CONTRADICTIONS))
def test_other_side_of_contradiction_is_caught(copy: Path, name: str) -> None:
    edits, rules = CONTRADICTIONS[name]
    for change in edits:
        edit(copy, GAME, *change)
    assert rules <= rules_fired(copy, GAME)


def _simulated_turns(root: Path) -> float:
    result = run_cli(root, "simulate", GAME, "--runs", "40", "-j", "1", "--format", "json", expect=1)  # 1 < min_runs
    return json.loads(result.output[:result.output.rindex("]") + 1])[0]["measures"]["turns"]["estimate"]


@pytest.mark.parametrize(("value", "other"), [("enrage_attack: 2 ", "20"), ("enrage_turn: 3", "1"),
                                              ("regeneration_hp: 2 ", "0"),  # more: the monsters it helps win anyway
                                              ("counter_damage: 1 ", "10"), ("speed_drain_stamina: 2 ", "20")])
def test_the_simulation_plays_the_monster_specials_by_the_values_the_cards_print(copy: Path, value: str,
                                                                                  other: str) -> None:
    # Before: simulate.py wrote Enrage's +2 after turn 3, Regeneration's 2, Counter's 1 and Speed Drain's 2 in again
    usual = _simulated_turns(copy)
    edit(copy, GAME, "game.yaml", f"  {value}", f"  {value.split(':')[0]}: {other} ")
    assert _simulated_turns(copy) != usual

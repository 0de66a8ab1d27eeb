"""Card & Adventure (data/adventure): it builds and validates cleanly, its README's counts are the build's,
and every rule fires when the data breaks it."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest
from pypdf import PdfReader

from cardgen.load.manifest import load_game
from tests.conftest import REPO
from tests.example_games import built_counts, edit, readme_counts, rules_fired

GAME = "adventure"


def test_build_matches_the_readme(built: tuple[Path, str]) -> None:
    out, log = built
    # No warning: on Letter the crop marks have no room outside the printer's band, so cut lines are drawn instead
    assert "error" not in log and "warning" not in log
    promised = readme_counts(GAME)
    assert len(promised) == 6 and built_counts(out) == promised
    assert promised["main"][2] == 60 and promised["adventures"][2] == 20 and promised["characters"][1] >= 6


def test_outputs_hold_every_piece(built: tuple[Path, str]) -> None:
    out, _ = built
    record = json.loads((out / "build.json").read_text())
    assert len(PdfReader(out / "print" / f"{GAME}-letter.pdf").pages) >= 2 * -(-92 // 9)
    [saved] = (out / "tts").glob("*.json")
    objects = json.loads(saved.read_text())["ObjectStates"]
    decks = {o["Nickname"]: len(o.get("ContainedObjects", [o])) for o in objects if o["Name"] in ("DeckCustom", "Card")}
    assert decks == {"Main Deck": 60, "Adventure Deck": 20, "Characters": 8, "Player Aid": 4}
    assert sorted(o["Nickname"] for o in objects if o["Name"] == "Infinite_Bag") == ["Damage", "Gold", "Mana"]
    gallery = (out / "index.html").read_text()
    assert all(card["face"] in gallery for card in record["cards"])


# ---------------------------------------------------------------- each rule fires when the data breaks it

def _zero_victory_points(root: Path) -> None:
    path = root / "data" / GAME / "adventures.csv"
    lines = path.read_text().splitlines(keepends=True)
    # vp is the 6th column; cut every adventure's victory points to 0 (the rare Crown of Ages keeps its 2)
    path.write_text("".join(re.sub(r"^([^#,][^,]*,\d+,\d+,\d*,\d*,)\d+,", r"\g<1>0,", line) for line in lines))


def _five_characters(root: Path) -> None:
    path = root / "data" / GAME / "characters.yaml"
    text = path.read_text()
    path.write_text(text[:text.index("- name: Ranger")])


BREAKS: dict[str, list[tuple[str, str, str]] | Callable[[Path], None]] = {
    "weapon-fields": [("main-deck.csv", "Dagger,Weapon,2,1,,single,3,", "Dagger,Weapon,2,1,,single,,")],
    "hands-only-on-weapons": [("main-deck.csv", "Lucky Charm,Item,2,2,,,", "Lucky Charm,Item,2,2,,single,")],
    "spell-mana": [("main-deck.csv", "Haste,Spell,2,,1,", "Haste,Spell,2,,,")],
    "scroll-mana": [("main-deck.csv", "Scroll of Insight,Scroll,2,,1,", "Scroll of Insight,Scroll,2,,,")],
    "reaction-trigger": [("main-deck.csv", ",When another player gains gold,", ",,")],
    "trigger-only-on-reactions": [("main-deck.csv", "Forage,Action,2,,,,,,,,,", "Forage,Action,2,,,,,,,,At dawn,")],
    "items-cost-gold": [("main-deck.csv", "Mace,Weapon,1,3,", "Mace,Weapon,1,,")],
    "actions-are-free": [("main-deck.csv", "Haggle,Action,2,,", "Haggle,Action,2,1,")],
    "item-limit": [("main-deck.csv", "Mana Crystal,Item,2,3,,,,,,3,", "Mana Crystal,Item,2,3,,,,,,4,")],
    "main-deck-size": [("main-deck.csv", "Sharpen Up,Action,3,", "Sharpen Up,Action,13,")],
    "every-card-type": [("main-deck.csv", f"Scroll of {name},Scroll,2,,", f"Scroll of {name},Spell,2,,")
                        for name in ("Fire", "Mending", "Insight")],
    "adventure-cost": [("adventures.csv", "Rat Cellar,1,2,1,", "Rat Cellar,1,2,,")],
    "adventure-reward": [("adventures.csv", "Wolf Pack,1,5,1,,2,", "Wolf Pack,1,5,1,,0,")],
    "adventure-row": [("adventures.csv", "Rat Cellar,1,", "Rat Cellar,7,")],
    "victory-reachable": _zero_victory_points,
    "unique-characters": [("characters.yaml", "- name: Knight\n", "- name: Knight\n  count: 2\n")],
    "characters-for-four": _five_characters,
    "starting-mana": [("characters.yaml", "start_mana: 3", "start_mana: 9")],
    "victory-goal": [("aid.yaml", "victory: 15", "victory: 12")],
    "aid-draw": [("aid.yaml", "**Draw** {cards_drawn} card", "**Draw** 2 card")],
    "aid-actions": [("aid.yaml", "up to {actions_per_turn} actions", "up to 3 actions")],
    "aid-scheme": [("aid.yaml", "discard up to {scheme_cards} cards", "discard up to 3 cards")],
    "aid-apothecary": [("aid.yaml", "pay {apothecary_gold.min}-{apothecary_gold.max} gold", "pay 1-3 gold")],
    "aid-arcanist": [("aid.yaml", "pay {arcanist_gold.min}-{arcanist_gold.max} gold", "pay 2-4 gold")],
    "victory-text": [("board.yaml", "with {victory_points} or more", "with 12 or more")],
    "per-gold-and-mana-burn": [("aid.yaml", "take {mana_burn_damage} damage for each", "take 2 damage for each")],
}


def test_every_rule_has_a_break() -> None:
    assert set(BREAKS) == {rule.id for rule in load_game(REPO, GAME).spec.rules}


@pytest.mark.parametrize("rule", sorted(BREAKS))
def test_rule_fires_when_broken(copy: Path, rule: str) -> None:
    breaking = BREAKS[rule]
    if callable(breaking):
        breaking(copy)
    else:
        for change in breaking:
            edit(copy, GAME, *change)
    assert rule in rules_fired(copy, GAME)

"""The audit's edits of numbers in card text (issue 33), each made in a copy of its example game, now fail
validation at the cell: the numbers come from `values:` and rules read the text back."""
from __future__ import annotations

from pathlib import Path

import pytest
from example_games import edit, game_copy

from cardgen.validate import validate_game

AUDIT = [  # game, file, text as the data holds it, the audit's edit, the rule that finds it, the cell
    ("battle-builder", "table.csv", "+{high_ground_damage} damage", "+3 damage", "environment-numbers",
     "data/battle-builder/table.csv:11:text"),
    ("battle-builder", "cards.csv", "2,12,{elite_slash_damage},", "2,12,12,", "elite-slash",
     "data/battle-builder/cards.csv:27:value"),
    ("adventure", "aid.yaml", "pay {apothecary_gold.min}-{apothecary_gold.max} gold", "pay 1-3 gold",
     "aid-apothecary", "data/adventure/aid.yaml:8:actions"),
    ("deebz", "effects.csv", "Place {tokens_placed} Discarders", "Place 3 Discarders", "tokens-placed",
     "data/deebz/effects.csv:12:effect"),
    ("sams-battle", "reference.yaml", "attacks with **{empty_lane_attack}**", "attacks with **0**",
     "empty-lane-attack", "data/sams-battle/reference.yaml:7:text"),
    ("scrapbots", "cards.csv", "Deal 20 damage to any", "Deal 25 damage to any", "damage-in-text",
     "data/scrapbots/cards.csv:18:text"),
]
MORE = [  # numbers beside the audit's: what else the example games print from their rulebooks
    ("scrapbots", "components.csv", "per {damage_step} points", "per 5 points", "counter-step",
     "data/scrapbots/components.csv:6:text"),
    ("scrapbots", "components.csv", "the {lanes} Lanes", "the 4 Lanes", "three-lanes",
     "data/scrapbots/components.csv:7:text"),
    ("battle-builder", "reference.yaml", "reveal {monsters_drawn} monster", "reveal 2 monster", "reference-numbers",
     "data/battle-builder/reference.yaml:12:round"),
    ("battle-builder", "reference.yaml", "choose {attack_cards_played} attack", "choose 2 attack", "reference-numbers",
     "data/battle-builder/reference.yaml:5:turn"),
    ("battle-builder", "table.csv", "gains {healing_springs_hp} HP", "gains 2 HP", "environment-numbers",
     "data/battle-builder/table.csv:10:text"),
]


@pytest.mark.parametrize(("game", "file", "old", "new", "rule", "cell"), AUDIT + MORE,
                         ids=[f"{a[4]}-{i}" for i, a in enumerate(AUDIT + MORE)])
def test_the_audits_edit_fails_validation_at_the_cell(tmp_path: Path, game: str, file: str, old: str, new: str,
                                                      rule: str, cell: str) -> None:
    root = game_copy(tmp_path, game)
    assert [str(f) for f in validate_game(root, game, layout=False) if f.severity == "error"] == []
    edit(root, game, file, old, new)
    errors = [f for f in validate_game(root, game, layout=False) if f.severity == "error"]
    assert {f.rule for f in errors} == {rule}, [str(f) for f in errors]
    assert {":".join(map(str, (f.file, f.row, f.column))) for f in errors} == {cell}

"""Every number the example games' rulebooks state that a card prints comes from `values:` or is read back by a
rule (issue 33): each edit below, made in a copy of its game, makes `cardgen validate` fail at the cell, naming
the rule; and the two rulebook contradictions the games ship with are warnings of rules of their own game.yaml."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from example_games import edit, game_copy

from cardgen.commands.cli import main

AUDIT = [  # the audit: game, file, text as the data holds it, its edit, the rules that find it, the cell
    ('battle-builder', 'table.csv', '+{high_ground_damage} damage', '+3 damage',
     'environment-numbers', 'table.csv:11:text'),
    ('battle-builder', 'cards.csv', '2,12,{elite_slash_damage},', '2,12,12,', 'elite-slash', 'cards.csv:27:value'),
    ('adventure', 'aid.yaml', 'pay {apothecary_gold.min}-{apothecary_gold.max} gold', 'pay 1-3 gold',
     'aid-apothecary', 'aid.yaml:8:actions'),
    ('deebz', 'effects.csv', 'Place {tokens_placed} Discarders', 'Place 3 Discarders',
     'tokens-placed', 'effects.csv:12:effect'),
    ('sams-battle', 'reference.yaml', 'attacks with **{empty_lane_attack}**', 'attacks with **0**',
     'empty-lane-attack', 'reference.yaml:7:text'),
    ('scrapbots', 'cards.csv', 'Deal {laser_cannon_damage} damage to any', 'Deal 25 damage to any',
     'damage-in-text component-numbers', 'cards.csv:18:text'),
]
MORE = [  # every other number the example games print from their rulebooks (README: values), and Scrapbots' own
    # Scrapbots
    ('scrapbots', 'components.csv', 'per {damage_step} points', 'per 5 points',
     'counter-step', 'components.csv:6:text'),
    ('scrapbots', 'components.csv', 'the {lanes} Lanes', 'the 4 Lanes', 'three-lanes', 'components.csv:7:text'),
    ('scrapbots', 'cards.csv', 'draw {wound_draw} cards', 'draw 3 cards', 'wound-draw', 'cards.csv:25:text'),
    ('scrapbots', 'cards.csv', 'Deal {laser_cannon_damage} damage to any', 'Deal 30 damage to any',
     'component-numbers', 'cards.csv:18:text'),
    ('scrapbots', 'cards.csv', 'next {armor_plate_prevents} damage', 'next 20 damage',
     'component-numbers', 'cards.csv:15:text'),
    ('scrapbots', 'cards.csv', 'deals {chainsaw_damage} damage', 'deals 20 damage',
     'component-numbers', 'cards.csv:16:text'),
    ('scrapbots', 'cards.csv', 'Deal {rocket_pod_damage} damage', 'Deal 30 damage',
     'component-numbers', 'cards.csv:19:text'),
    ('scrapbots', 'cards.csv', 'and {rocket_pod_splash} splash', 'and 20 splash',
     'component-numbers', 'cards.csv:19:text'),
    ('scrapbots', 'cards.csv', 'draw {supply_crate_draw} cards', 'draw 3 cards',
     'resource-numbers', 'cards.csv:20:text'),
    ('scrapbots', 'cards.csv', 'repair {repair_kit_repairs} damage', 'repair 30 damage',
     'resource-numbers', 'cards.csv:21:text'),
    ('scrapbots', 'cards.csv', 'with {logic_bomb_health} Health', 'with 40 Health',
     'resource-numbers', 'cards.csv:23:text'),
    ('scrapbots', 'cards.csv', 'Gain {fusion_cell_bonus} more', 'Gain 2 more', 'resource-numbers', 'cards.csv:24:text'),
    ('scrapbots', 'cards.csv', 'Discard for 1 :scrap:', 'Discard for 2 :scrap:', 'energy-in-text', 'cards.csv:9:text'),
    ('scrapbots', 'cards.csv', 'Gain 1 :energy: and draw', 'Gain 2 :energy: and draw',
     'energy-in-text', 'cards.csv:20:text'),
    # Battle Builder
    ('battle-builder', 'reference.yaml', 'reveal {monsters_drawn} monster', 'reveal 2 monster',
     'reference-numbers', 'reference.yaml:12:round'),
    ('battle-builder', 'reference.yaml', 'choose {attack_cards_played} attack', 'choose 2 attack',
     'reference-numbers', 'reference.yaml:5:turn'),
    ('battle-builder', 'reference.yaml', 'after rounds {pvp_rounds}', 'after rounds 4, 8, 12',
     'reference-numbers', 'reference.yaml:12:round'),
    ('battle-builder', 'table.csv', 'gains {healing_springs_hp} HP', 'gains 2 HP',
     'environment-numbers', 'table.csv:10:text'),
    ('battle-builder', 'table.csv', '-{sandstorm_speed} speed', '-3 speed', 'environment-numbers', 'table.csv:9:text'),
    ('battle-builder', 'table.csv', '+{lightning_arena_speed} speed', '+2 speed', 'arena-numbers', 'table.csv:12:text'),
    ('battle-builder', 'table.csv', 'reduced by {cursed_ground_hp}', 'reduced by 3',
     'arena-numbers', 'table.csv:13:text'),
    ('battle-builder', 'tokens.csv', '+{revenge_stamina} stamina', '+3 stamina', 'revenge-token', 'tokens.csv:13:text'),
    ('battle-builder', 'monsters.yaml', '{regeneration_hp} HP at the end of each turn."\n  art: slime',
     '3 HP at the end of each turn."\n  art: slime', 'monster-specials', 'monsters.yaml:35:special'),
    ('battle-builder', 'monsters.yaml', '{counter_damage} damage to an attacker when hit."\n  art: rat',
     '2 damage to an attacker when hit."\n  art: rat', 'monster-specials', 'monsters.yaml:48:special'),
    ('battle-builder', 'monsters.yaml', 'loses {speed_drain_stamina} stamina', 'loses 3 stamina',
     'monster-specials', 'monsters.yaml:61:special'),
    ('battle-builder', 'monsters.yaml', 'after turn {enrage_turn}', 'after turn 4',
     'monster-specials', 'monsters.yaml:75:special'),
    ('battle-builder', 'cards.csv', 'Riposte,Defense,2,2,8,7,3,,**Counter {tier2_counter_damage}',
     'Riposte,Defense,2,2,8,7,3,,**Counter 2', 'tier-2-counter', 'cards.csv:40:effect'),
    ('battle-builder', 'table.csv', 'Defeat {monster_hunter_easy} or more', 'Defeat 3 or more',
     'objective-numbers', 'table.csv:20:text'),
    ('battle-builder', 'table.csv', 'Purchase {elite_arsenal_cards} or more', 'Purchase 4 or more',
     'objective-numbers', 'table.csv:22:text'),
    ('battle-builder', 'table.csv', 'Objective,1,,,,{final_champion_vp},', 'Objective,1,,,,2,',
     'objective-vp', 'table.csv:21:vp'),
    ('battle-builder', 'table.csv', '+5 maximum HP.', '+10 maximum HP.', 'upgrade-text', 'table.csv:28:text'),
    ('battle-builder', 'board.yaml', 'Win a PvP battle: 2 VP.', 'Win a PvP battle: 3 VP.',
     'score-board-text', 'board.yaml:12:text'),
    # Card & Adventure
    ('adventure', 'aid.yaml', '**Draw** {cards_drawn} card', '**Draw** 2 card', 'aid-draw', 'aid.yaml:5:turn'),
    ('adventure', 'aid.yaml', 'up to {actions_per_turn} actions', 'up to 3 actions', 'aid-actions', 'aid.yaml:5:turn'),
    ('adventure', 'aid.yaml', 'discard up to {scheme_cards} cards', 'discard up to 3 cards',
     'aid-scheme', 'aid.yaml:8:actions'),
    ('adventure', 'aid.yaml', 'pay {arcanist_gold.min}-{arcanist_gold.max} gold', 'pay 2-4 gold',
     'aid-arcanist', 'aid.yaml:8:actions'),
    ('adventure', 'aid.yaml', 'remove {damage_per_gold} damage', 'remove 2 damage',
     'aid-apothecary per-gold-and-mana-burn', 'aid.yaml:8:actions'),
    ('adventure', 'aid.yaml', 'take {mana_burn_damage} damage for each', 'take 2 damage for each',
     'per-gold-and-mana-burn', 'aid.yaml:14:mana_burn'),
    ('adventure', 'tokens.csv', 'take {mana_burn_damage} damage each', 'take 2 damage each',
     'per-gold-and-mana-burn', 'tokens.csv:5:text'),
    ('adventure', 'aid.yaml', 'victory: 15', 'victory: 12', 'victory-goal', 'aid.yaml:18:victory'),
    ('adventure', 'board.yaml', 'with {victory_points} or more', 'with 12 or more',
     'victory-text', 'board.yaml:5:text'),
    # Deebz
    ('deebz', 'effects.csv', 'Place {tokens_placed_with_ace} Multipliers', 'Place 2 Multipliers',
     'tokens-placed', 'effects.csv:16:effect'),
    ('deebz', 'effects.csv', 'gains {temporary_tokens} Temporary Bonus', 'gains 2 Temporary Bonus',
     'temporary-tokens', 'effects.csv:32:effect'),
    ('deebz', 'reference.yaml', 'gain {customise_penalties} Penalties', 'gain 3 Penalties',
     'strategy-numbers', 'reference.yaml:23:text'),
    ('deebz', 'reference.yaml', 'gain {acquire_bonuses} Temporary', 'gain 1 Temporary',
     'strategy-numbers', 'reference.yaml:23:text'),
    ('deebz', 'reference.yaml', 'starts at {attribute_start}', 'starts at 0',
     'attribute-numbers', 'reference.yaml:6:text'),
    ('deebz', 'reference.yaml', 'adds {attribute_per_card} to', 'adds 2 to',
     'attribute-numbers', 'reference.yaml:6:text'),
    ('deebz', 'reference.yaml', '+{pair_short_actions} Short Action', '+2 Short Action',
     'attribute-numbers', 'reference.yaml:6:text'),
    ('deebz', 'reference.yaml', '+{triple_activations} Activation', '+2 Activation',
     'attribute-numbers', 'reference.yaml:6:text'),
    ('deebz', 'reference.yaml', '{activation_short_actions} Short Actions or', '3 Short Actions or',
     'phase-numbers', 'reference.yaml:15:text'),
    ('deebz', 'reference.yaml', 'lose {end_turn_penalty_loss} Penalty', 'lose 2 Penalty',
     'phase-numbers', 'reference.yaml:15:text'),
    ('deebz', 'components.csv', 'An {map_size} x {map_size} grid', 'An 20 x 20 grid',
     'gridmap-text', 'components.csv:4:text'),
    # Sam's Battle Game
    ('sams-battle', 'reference.yaml', 'After turn {turns}, flip', 'After turn 3, flip',
     'turns-per-round', 'reference.yaml:7:text'),
    ('sams-battle', 'reference.yaml', 'lanes**: {battle_points} point', 'lanes**: 2 point',
     'battle-numbers', 'reference.yaml:7:text'),
    ('sams-battle', 'reference.yaml', 'at **{no_tie_win_points} points**', 'at **3 points**',
     'battle-numbers', 'reference.yaml:7:text'),
    ('sams-battle', 'reference.yaml', 'draw {redraw_cards}; the smaller', 'draw 2; the smaller',
     'battle-numbers', 'reference.yaml:7:text'),
    ('sams-battle', 'reference.yaml', 'draws {turn_draw} more', 'draws 2 more',
     'tracker-numbers', 'reference.yaml:18:text'),
    ('sams-battle', 'reference.yaml', 'playing {cards_per_turn} cards', 'playing 2 cards',
     'tracker-numbers', 'reference.yaml:18:text'),
]


def validate(root: Path, game: str) -> tuple[int, list[tuple[str, str, str]]]:
    """`cardgen validate GAME --no-layout` (rules need no drawing): exit code, and each finding's severity, place
    (`data/<game>/file:row:column`) and rule."""
    result = CliRunner().invoke(main, ["--root", str(root), "validate", game, "--no-layout"])
    findings = [line for line in result.output.splitlines() if ": error: " in line or ": warning: " in line]
    return result.exit_code, [(severity, place, line.rsplit("(", 1)[-1].rstrip(")"))
                              for line in findings
                              for place, severity in [line.split(": ", 2)[:2]]]


@pytest.mark.parametrize(("game", "file", "old", "new", "rules", "cell"), AUDIT + MORE,
                         ids=[f"{game}-{rules.split()[-1]}-{i}" for i, (game, _, _, _, rules, _) in
                              enumerate(AUDIT + MORE)])
def test_a_number_edited_in_card_text_fails_validation_at_the_cell(tmp_path: Path, game: str, file: str, old: str,
                                                                   new: str, rules: str, cell: str) -> None:
    root = game_copy(tmp_path, game)
    edit(root, game, file, old, new)
    code, findings = validate(root, game)
    errors = [(place, rule) for severity, place, rule in findings if severity == "error"]
    assert code == 1 and {rule for _, rule in errors} == set(rules.split()), findings
    assert {place for place, _ in errors} == {f"data/{game}/{cell}"}


# ---------------------------------------------------------------- the contradictions the games ship with

SHIPPED = [  # game, rule, where its warning is, what it says; edits of game.yaml's values that settle it
    ("battle-builder", "monster-hunter-reachable", "data/battle-builder/monsters.yaml",
     "sum(copies) = 3, monster_hunter_easy = 4", [("monster_hunter_easy: 4 ", "monster_hunter_easy: 3 ")]),
    ("sams-battle", "draw-pile-lasts", "data/common/standard-deck/cards.csv",  # 5 rounds x 2 players x (1 + 1 x 2)
     "sum(copies) = 36, win_points = 5, players = 2, first_hand = 5, turn_draw = 3, turns = 4",
     [("first_hand: 5 ", "first_hand: 1 "), ("turn_draw: 3 ", "turn_draw: 1 "), ("turns: 4 ", "turns: 3 ")]),
]


@pytest.mark.parametrize(("game", "rule", "place", "says", "settle"), SHIPPED, ids=[s[1] for s in SHIPPED])
def test_a_rulebook_contradiction_is_a_warning_until_the_values_settle_it(tmp_path: Path, game: str, rule: str,
                                                                          place: str, says: str,
                                                                          settle: list[tuple[str, str]]) -> None:
    root = game_copy(tmp_path, game)
    result = CliRunner().invoke(main, ["--root", str(root), "validate", game, "--no-layout"])
    assert result.exit_code == 0 and validate(root, game)[1] == [("warning", place, rule)], result.output
    assert f"; {says} ({rule})" in result.output
    for value, settled in settle:  # the texts printing the values follow them: no error either
        edit(root, game, "game.yaml", value, settled)
    assert validate(root, game) == (0, [])


def test_the_scrapbots_mat_draws_a_named_space_for_each_of_the_lanes_its_text_and_rule_count(tmp_path: Path) -> None:
    # Before: mat.svg drew three lane spaces with names of its own, whatever `lanes:` said (three-lanes checks only
    # the mat's "{lanes} Lanes"); now one space a lane, named by the mat's lane_names
    root = game_copy(tmp_path, "scrapbots")
    edit(root, "scrapbots", "game.yaml", "  lanes: 3 ", "  lanes: 2 ")
    edit(root, "scrapbots", "components.csv", "Left Lane;Center Lane;Right Lane", "Left Lane;Right Side")
    built = CliRunner().invoke(main, ["--root", str(root), "build", "scrapbots", "--svg", "-j", "1"])
    assert built.exit_code == 0, built.output
    mat = (root / "output" / "scrapbots" / "cards" / "mat" / "play-mat.svg").read_text()
    assert (mat.count(">LEFT<"), mat.count(">RIGHT<"), mat.count(">SIDE<"), mat.count(">CENTER<")) == (2, 2, 2, 0)
    # two names for 3 Lanes, then four: an error at the mat's cell, before anything is drawn
    edit(root, "scrapbots", "game.yaml", "  lanes: 2 ", "  lanes: 3 ")
    for more in ("", ";Far Lane;Back Lane"):
        edit(root, "scrapbots", "components.csv", "Right Side", "Right Side" + more)
        broken = CliRunner().invoke(main, ["--root", str(root), "build", "scrapbots", "-j", "1"])
        assert broken.exit_code == 1 and "components.csv:7:lane_names: error:" in broken.output, broken.output
        assert "lanes = 3 (a-name-a-lane)" in broken.output and "mat.svg" not in broken.output

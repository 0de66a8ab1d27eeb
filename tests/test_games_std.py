"""The standard deck and the two games played with it, Deebz and Sam's Battle Game: they validate and build
cleanly, share one deck definition, draw pips where printed cards have them, put tokens and the Gridmap in the
PDF and the Tabletop Simulator save, and every rule of theirs catches data that breaks it."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cardgen.svg.context import BuildContext
from cardgen.validate import validate_game
from tests.conftest import REPO
from tests.example_games import game_copy, shared_build

GAMES = ("deebz", "sams-battle")
PAPER = np.array([0xfd, 0xfc, 0xf7])


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> dict[str, Path]:
    """Both games built with the CLI once per test session (the xdist workers share the builds): game -> output."""
    return {game: shared_build(tmp_path_factory, worker_id, game)[0] for game in GAMES}


def record(built: dict[str, Path], game: str) -> dict:
    return json.loads((built[game] / "build.json").read_text())


# ---------------------------------------------------------------- both games, clean

def test_builds_hold_every_deck(built: dict[str, Path]) -> None:
    copies: dict[str, dict[str, int]] = {}
    for game in GAMES:
        for card in record(built, game)["cards"]:
            copies.setdefault(game, {}).setdefault(card["deck"], 0)
            copies[game][card["deck"]] += card["copies"]
    assert copies["deebz"] == {"red": 54, "blue": 54, "effects": 32, "reference": 3, "modifiers": 80, "pieces": 5,
                               "markers": 32, "gridmap": 1}
    assert copies["sams-battle"] == {"cards": 54, "reference": 2}


# ---------------------------------------------------------------- the standard deck as drawn

PIP_ROWS = {"2": [("C", 0), ("C", 1)], "3": [("C", 0), ("C", .5), ("C", 1)],
            "4": [(c, r) for r in (0, 1) for c in "LR"], "5": [("C", .5)] + [(c, r) for r in (0, 1) for c in "LR"],
            "6": [(c, r) for r in (0, .5, 1) for c in "LR"],
            "7": [("C", .25)] + [(c, r) for r in (0, .5, 1) for c in "LR"],
            "8": [("C", .25), ("C", .75)] + [(c, r) for r in (0, .5, 1) for c in "LR"],
            "9": [("C", .5)] + [(c, r) for r in (0, 1 / 3, 2 / 3, 1) for c in "LR"],
            "10": [("C", 1 / 6), ("C", 5 / 6)] + [(c, r) for r in (0, 1 / 3, 2 / 3, 1) for c in "LR"]}
COLUMNS = {"L": 262, "C": 412.5, "R": 563}


def _centre(column: str, row: float) -> tuple[int, int]:
    return round(COLUMNS[column]), round(262 + row * (863 - 262))


def _ink(image: np.ndarray, x: int, y: int) -> np.ndarray | None:
    """The mean colour of a small patch, or None where it is bare paper."""
    patch = image[y - 3:y + 4, x - 3:x + 4].reshape(-1, 3).mean(axis=0)
    return None if np.abs(patch - PAPER).max() < 40 else patch


@pytest.mark.parametrize("suit,red", [("hearts", True), ("spades", False), ("diamonds", True), ("clubs", False)])
def test_pips_sit_where_printed_cards_have_them_in_red_or_black(built: dict[str, Path], suit: str, red: bool) -> None:
    everywhere = {(c, r) for layout in PIP_ROWS.values() for c, r in layout}
    for rank, layout in PIP_ROWS.items():
        image = np.asarray(Image.open(built["sams-battle"] / "cards" / "cards" / f"{rank}-of-{suit}.png")
                           .convert("RGB")).astype(float)
        for column, row in layout:
            ink = _ink(image, *_centre(column, row))
            assert ink is not None, f"{rank} of {suit}: no pip at {column} {row:.2f}"
            assert (ink[0] > 150 and ink[1] < 90) if red else ink.max() < 80, f"{rank} of {suit}: pip colour {ink}"
        expected = [_centre(c, r) for c, r in layout]
        for column, row in everywhere - set(layout):
            x, y = _centre(column, row)
            if all(abs(x - ex) > 100 or abs(y - ey) > 100 for ex, ey in expected):
                assert _ink(image, x, y) is None, f"{rank} of {suit}: a pip at {column} {row:.2f}"


def test_index_corners_and_distinct_faces(built: dict[str, Path]) -> None:
    cards = built["sams-battle"] / "cards" / "cards"
    faces = {name: np.asarray(Image.open(cards / f"{name}.png").convert("RGB")).astype(float)
             for name in ("jack-of-clubs", "queen-of-clubs", "king-of-clubs", "ace-of-clubs", "10-of-clubs")}
    for name, image in faces.items():  # the index: ink in the top-left corner, and the same turned round
        top_left = image[75:260, 75:170]
        assert np.abs(top_left - PAPER).max(axis=2).mean() > 5, name
        assert np.allclose(top_left, np.rot90(image, 2)[75:260, 75:170], atol=60), name
    middles = [image[300:820, 250:575] for image in faces.values()]
    for i in range(len(middles)):
        for j in range(i + 1, len(middles)):
            assert np.abs(middles[i] - middles[j]).mean() > 10  # J, Q, K, A (and a number card) all differ


# ---------------------------------------------------------------- one definition for both games

def test_both_games_draw_the_same_standard_cards(built: dict[str, Path]) -> None:
    deebz, sams = built["deebz"] / "cards", built["sams-battle"] / "cards" / "cards"
    for card in ("7-of-hearts", "queen-of-spades", "ace-of-spades"):
        assert (deebz / "red" / f"red-{card}.png").read_bytes() == (sams / f"{card}.png").read_bytes()
    # ... but each game its own backs, and Sam's jokers their score track.
    backs = {game: {c["deck"]: c["back"] for c in record(built, game)["cards"]} for game in GAMES}
    colours = {deck: Image.open(built["deebz"] / backs["deebz"][deck]).convert("RGB").getpixel((20, 20))
               for deck in ("red", "blue")}
    assert colours["red"][0] > 120 > colours["red"][2] and colours["blue"][2] > 120 > colours["blue"][0]
    assert (deebz / "red" / "red-red-joker.png").read_bytes() != (sams / "red-joker.png").read_bytes()


def test_one_template_edit_changes_both_games(tmp_path: Path) -> None:
    root = game_copy(tmp_path, "deebz")
    shutil.copytree(REPO / "data" / "sams-battle", root / "data" / "sams-battle")
    template = root / "templates" / "common" / "standard-deck" / "number.svg"
    template.write_text(template.read_text().replace("{{ std.pips() }}", "{{ std.pips() }}<g id='edited'/>"))
    for game, deck in (("deebz", "blue"), ("sams-battle", "cards")):
        context = BuildContext.load(root, game)
        card = next(c for c in context.data.cards if c.deck == deck and c.name == "7 of Hearts")
        assert "id='edited'" in context.renderer.render(card.face_template, card.id, deck, card).svg, game


# ---------------------------------------------------------------- tokens and the board in the outputs

def test_tokens_and_gridmap_in_the_pdf(built: dict[str, Path]) -> None:
    import pdfplumber

    pdf_path = built["deebz"] / "print" / "deebz-letter.pdf"
    with pdfplumber.open(pdf_path) as pdf:
        texts = ["".join(c["text"] for c in page.chars) for page in pdf.pages]  # footers run up the margin
        decks = {deck for text in texts for deck in ("Map Modifiers", "Spawn Points and Objectives", "Unit Markers",
                                                       "Gridmap", "Effect List") if deck in text}
        assert decks == {"Map Modifiers", "Spawn Points and Objectives", "Unit Markers", "Gridmap", "Effect List"}
        tiles = [i for i, text in enumerate(texts) if re.search(r"tile \d of 6", text) and "back" not in text]
        assert len(tiles) == 6
        for i in tiles:  # the whole board image is placed at its size: one-inch squares on paper, both ways
            image = max(pdf.pages[i].images, key=lambda im: im["width"])
            width_mm, height_mm = (image["x1"] - image["x0"]) / 72 * 25.4, (image["bottom"] - image["top"]) / 72 * 25.4
            assert width_mm == pytest.approx(481.2, abs=0.2) and height_mm == pytest.approx(481.2, abs=0.2)


def test_tokens_and_gridmap_in_the_tts_save(built: dict[str, Path]) -> None:
    save = json.loads((built["deebz"] / "tts" / "Deebz.json").read_text())
    objects = save["ObjectStates"]
    kinds: dict[str, list[str]] = {}
    for obj in objects:
        kinds.setdefault(obj["Name"], []).append(obj["Nickname"])
    assert kinds["Custom_Board"] == ["Gridmap"]
    assert "Teleporter A" in kinds["Infinite_Bag"] and "Blocker" in kinds["Infinite_Bag"]
    assert kinds["Custom_Tile"].count("Unit Red 1") == 2 and "Spawn Point Blue" in kinds["Custom_Tile"]
    decks = {obj["Nickname"]: obj for obj in objects if obj["Name"] == "DeckCustom"}
    assert {"Red Player's Deck", "Blue Player's Deck", "Effect List", "Reference Cards"} <= set(decks)
    red, blue = (next(iter(decks[f"{p} Player's Deck"]["CustomDeck"].values())) for p in ("Red", "Blue"))
    assert red["BackURL"] != blue["BackURL"] and len(decks["Red Player's Deck"]["DeckIDs"]) == 54


# ---------------------------------------------------------------- every rule catches data that breaks it

def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


STD, DEEBZ, SAMS = "data/common/standard-deck", "data/deebz", "data/sams-battle"
BREAKAGES = [
    ("sams-battle", f"{STD}/cards.csv", "7 of Hearts,7,", "7 of Hearts,8,", "standard-deck-complete"),
    ("sams-battle", f"{STD}/cards.csv", "Black Joker,Joker,,black,joker,0\n", "", "standard-deck-jokers"),
    ("deebz", f"{STD}/cards.csv", "Ace of Hearts,A,Hearts,red", "Ace of Hearts,A,Hearts,black", "standard-deck-colors"),
    ("deebz", f"{STD}/cards.csv", "King of Clubs,K,Clubs,black,court", "King of Clubs,K,Clubs,black,number",
     "standard-deck-kinds"),
    ("sams-battle", f"{SAMS}/game.yaml", "options: {jokers: true,", "options: {jokers: false,", "fifty-four-cards"),
    ("sams-battle", f"{SAMS}/game.yaml", "options: {jokers: true,", "options: {jokers: false,", "score-jokers"),
    ("sams-battle", f"{STD}/cards.csv", "Queen of Clubs,Q,Clubs,black,court,12\n", "", "lane-cards"),
    ("sams-battle", f"{SAMS}/game.yaml", "    title: Standard Deck (52 + 2 jokers)\n",
     "    title: Standard Deck (52 + 2 jokers)\n    filter: \"kind != 'court'\"\n", "lane-grid"),
    ("sams-battle", f"{STD}/cards.csv", "5 of Clubs,5,Clubs,black,number,5\n", "", "draw-pile"),
    ("sams-battle", f"{SAMS}/reference.yaml", "- name: Round and Turn Tracker\n  kind: tracker",
     "- name: Round and Turn Tracker\n  kind: battle", "reference-cards"),
    ("deebz", f"{DEEBZ}/effects.csv", "Place Discarders,Jacks,JQ+", "Place Discarders,Jacks,JX+", "combo-ranks"),
    ("deebz", f"{DEEBZ}/effects.csv", "Place Blocker,Jacks,J+", "Place Blocker,Kings,J+", "combo-group"),
    ("deebz", f"{DEEBZ}/effects.csv", "Enlarge,Kings,KK", "Enlarge,Kings,KQ", "effect-list"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Reflector,modifier,Reflector", "Reflector,objective,", "modifier-tokens"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Divisor Clubs,modifier,Divisor,Clubs", "Divisor Clubs,modifier,Divisor,Hearts",
     "suit-modifiers"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Multiplier Hearts,modifier,Multiplier,Hearts,,,,3",
     "Multiplier Hearts,modifier,Multiplier,Hearts,,,,2", "three-of-a-suit"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Teleporter C,modifier,Teleporter,,C,,,2",
     "Teleporter C,modifier,Teleporter,,C,,,1", "teleporter-pairs"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Teleporter D,modifier,Teleporter,,D", "Teleporter D,modifier,Teleporter,,",
     "teleporter-designation"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Unit Red 3,marker,,,,red,3,2", "Unit Red 3,marker,,,,red,3,1", "marker-pairs"),
    ("deebz", f"{DEEBZ}/tokens.csv", "Spawn Point Blue,spawn,,,,blue", "Spawn Point Blue,spawn,,,,red", "spawn-points"),
    ("deebz", f"{DEEBZ}/game.yaml", "filter: \"kind in ['spawn', 'objective']\"", "filter: \"kind in ['spawn']\"",
     "objectives"),
    ("deebz", f"{DEEBZ}/components.csv", "Gridmap,1,18,18", "Gridmap,1,17,18", "square-gridmap"),
    ("deebz", f"{DEEBZ}/effects.csv", "Place {tokens_placed} Discarders", "Place 3 Discarders", "tokens-placed"),
    ("deebz", f"{DEEBZ}/effects.csv", "Place {tokens_placed_with_ace} Multipliers", "Place 2 Multipliers",
     "tokens-placed"),
    ("deebz", f"{DEEBZ}/effects.csv", "gains {temporary_tokens} Temporary Bonus", "gains 2 Temporary Bonus",
     "temporary-tokens"),
    ("sams-battle", f"{SAMS}/reference.yaml", "attacks with **{empty_lane_attack}**", "attacks with **0**",
     "empty-lane-attack"),
    ("sams-battle", f"{SAMS}/reference.yaml", "**After turn {turns}:**", "**After turn 5:**", "turns-per-round"),
    ("deebz", f"{DEEBZ}/reference.yaml", "gain {acquire_bonuses} Temporary", "gain 1 Temporary", "strategy-numbers"),
    ("deebz", f"{DEEBZ}/reference.yaml", "gain {customise_penalties} Penalties", "gain 3 Penalties",
     "strategy-numbers"),
]


@pytest.mark.parametrize("game,file,old,new,rule", BREAKAGES, ids=[b[-1] for b in BREAKAGES])
def test_every_rule_fails_on_data_that_breaks_it(tmp_path: Path, game: str, file: str, old: str, new: str,
                                                  rule: str) -> None:
    root = game_copy(tmp_path, game)  # the unbroken games have no finding (the CLI test above)
    _edit(root / file, old, new)
    fired = [p for p in validate_game(root, game, layout=False) if p.rule == rule]
    assert fired and all(p.severity == "error" for p in fired), rule

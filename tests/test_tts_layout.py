"""The Tabletop Simulator export lays each example game out on the default table: every object inside the play
area, nothing lying on anything else, boards in the middle with the decks in front and the tokens behind, and the
grid boards (the Deebz Gridmap, the Scrapbots play mat) carry snap points at their cells' centres.

Read from the saved object of the session's one build of each example game (`shared_build`).
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import NamedTuple

import pytest
from PIL import Image

import cardgen.outputs.tts.layout as tts_layout
from cardgen.core.errors import CardgenError
from cardgen.load.manifest import load_game
from cardgen.options.tts import SnapGrid, TTSSpec
from cardgen.outputs.stage import StageContext
from cardgen.outputs.tts.stage import TTSStage, export_tts
from cardgen.record.record import BuildRecord
from tests.example_games import REPO, shared_build

GAMES = ["adventure", "battle-builder", "deebz", "sams-battle", "scrapbots"]
# The play area: a square 19 units from the table's centre each way. Saves Tabletop Simulator wrote put the hand
# zones of the default table near x = +-21.5 (issue 35); a hand zone is about 4 units deep, so its inner edge lies
# near 19.5. An object past 19 would be in a player's hand, or off the table.
PLAY_AREA = 19.0
# Sizes at scale 1 in table units, as docs/tts.md gives them from real saves: a card is 2.2 x 3.1, a tile 2 high
# (its width follows its image), a board 16.7 high and WidthScale times that wide.
CARD, TILE, BOARD = (2.2, 3.1), 2.0, 16.7
MM_PER_UNIT = 88.9 / 3.1


class Box(NamedTuple):
    """What an object covers on the table: its nickname, centre and half sizes, in table units."""

    name: str
    x: float
    z: float
    half_width: float
    half_depth: float

    def overlaps(self, other: "Box") -> bool:
        """Whether the two cover some of the same table."""
        return (abs(self.x - other.x) < self.half_width + other.half_width - 1e-6
                and abs(self.z - other.z) < self.half_depth + other.half_depth - 1e-6)


@pytest.fixture
def build(tmp_path_factory, worker_id: str):
    """The session's one build of an example game: its output folder, by the game's name."""
    return lambda game: shared_build(tmp_path_factory, worker_id, game)[0]


def _saved(out_dir: Path) -> dict:
    [path] = (out_dir / "tts").glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _image_aspect(url: str) -> float:
    assert url.startswith("file:///"), url
    with Image.open(url.removeprefix("file://")) as image:
        return image.width / image.height


def _box(obj: dict) -> Box:
    """An object's footprint from its kind, scale and image (a bag covers what it holds)."""
    t = obj["Transform"]
    inner = obj["ContainedObjects"][0] if obj["Name"] == "Infinite_Bag" else obj
    scale = inner["Transform"]["scaleX"]
    if inner["Name"] in ("Card", "DeckCustom"):
        width, depth = CARD[::-1] if inner["SidewaysCard"] else CARD
        width, depth = width * scale, depth * scale
    elif inner["Name"] == "Custom_Board":
        depth = BOARD * scale
        width = depth * inner["CustomImage"]["WidthScale"]
    else:
        depth = TILE * scale
        width = depth * _image_aspect(inner["CustomImage"]["ImageURL"])
    return Box(obj["Nickname"], t["posX"], t["posZ"], width / 2, depth / 2)


def _places(saved: dict) -> list[Box]:
    """One footprint per place on the table: copies of a token stacked on one place count once."""
    boxes = {(round(b.x, 6), round(b.z, 6), b.name): b for b in map(_box, saved["ObjectStates"])}
    return list(boxes.values())


@pytest.mark.parametrize("game", GAMES)
def test_every_object_lies_inside_the_play_area_and_none_on_another(build, game) -> None:
    saved = _saved(build(game))
    boxes = _places(saved)
    assert len(boxes) >= 2
    for box in boxes:
        assert abs(box.x) + box.half_width <= PLAY_AREA, box
        assert abs(box.z) + box.half_depth <= PLAY_AREA, box
        assert saved["ObjectStates"][0]["Transform"]["posY"] > 0
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)


@pytest.mark.parametrize("game", GAMES)
def test_boards_lie_in_the_middle_decks_in_front_tokens_behind(build, game) -> None:
    saved = _saved(build(game))
    kinds: dict[str, list[Box]] = {"board": [], "deck": [], "token": []}
    for obj in saved["ObjectStates"]:
        kind = {"Custom_Board": "board", "DeckCustom": "deck", "Card": "deck"}.get(obj["Name"], "token")
        kinds[kind].append(_box(obj))
    for board in kinds["board"]:  # the table's centre is on the board
        assert abs(board.x) <= board.half_width and abs(board.z) <= board.half_depth, board
    front = min((b.z - b.half_depth for b in kinds["board"]), default=None)
    back = max((b.z + b.half_depth for b in kinds["board"]), default=None)
    decks_end = max(d.z + d.half_depth for d in kinds["deck"])
    for deck in kinds["deck"]:  # in front of the boards, the player's side (-z)
        assert front is None or deck.z + deck.half_depth < front, deck
    for token in kinds["token"]:  # behind the boards, or behind the decks when there is no board
        assert token.z - token.half_depth > (back if back is not None else decks_end), token


def _snap_points(saved: dict, board: str) -> list[tuple[float, float]]:
    [obj] = [o for o in saved["ObjectStates"] if o["Nickname"] == board]
    assert obj["Name"] == "Custom_Board"
    points = obj["AttachedSnapPoints"]
    assert all(p["Position"]["y"] == pytest.approx(0.592) for p in points)  # a real board's (docs/tts.md)
    assert all(set(p) == {"Position"} for p in points)  # as Tabletop Simulator saves a point that does not turn
    return sorted((p["Position"]["x"], p["Position"]["z"]) for p in points)


def _expected(centres_mm: list[tuple[float, float]], height_mm: float) -> list[tuple[float, float]]:
    """Points on a board (mm from its centre, right and down on its image) in its local coordinates: 16.7 units
    to the board's height, the board turned 180 degrees (its image's right is local -x, its top local -z)."""
    per_mm = BOARD / height_mm
    return sorted((-x * per_mm, y * per_mm) for x, y in centres_mm)


def _assert_same_points(found: list[tuple[float, float]], expected: list[tuple[float, float]]) -> None:
    assert len(found) == len(expected)
    for (fx, fz), (ex, ez) in zip(found, expected):
        assert fx == pytest.approx(ex, abs=1e-3) and fz == pytest.approx(ez, abs=1e-3)


def test_the_deebz_gridmap_snaps_pieces_to_the_middle_of_each_square(build) -> None:
    record = BuildRecord.of_build(build("deebz"))
    size = record.decks["gridmap"].size_mm
    # gridmap.svg: 18 x 18 one-inch squares inside an equal rim
    rim = (size.width - 18 * 25.4) / 2
    centres = [(rim + (c + 0.5) * 25.4 - size.width / 2, rim + (r + 0.5) * 25.4 - size.height / 2)
               for r in range(18) for c in range(18)]
    _assert_same_points(_snap_points(_saved(build("deebz")), "Gridmap"), _expected(centres, size.height))


def test_the_scrapbots_mat_snaps_cards_to_its_lanes_decks_and_discards(build) -> None:
    record = BuildRecord.of_build(build("scrapbots"))
    size = record.decks["mat"].size_mm
    # mat.svg: 68 x 94 mm spaces 12 mm past the middle line; the Lanes 8 mm apart and centred, the deck and
    # discard spaces 16 mm outside them; the far half turned 180 degrees.
    slot_w, slot_h, gap = 68, 94, 8
    lanes_x = (size.width - 3 * slot_w - 2 * gap) / 2
    lefts = [lanes_x - slot_w - 2 * gap, *(lanes_x + i * (slot_w + gap) for i in range(3)),
             lanes_x + 3 * slot_w + 4 * gap]
    near = [(left + slot_w / 2 - size.width / 2, 12 + slot_h / 2) for left in lefts]
    centres = near + [(-x, -y) for x, y in near]
    _assert_same_points(_snap_points(_saved(build("scrapbots")), "Play Mat"), _expected(centres, size.height))


def test_snap_points_must_be_a_grid_on_a_board_deck(build, tmp_path) -> None:
    record = BuildRecord.of_build(build("scrapbots"))
    game = load_game(REPO, "scrapbots")
    grid = SnapGrid(columns=3, rows=2, across=76, down=118)
    with pytest.raises(CardgenError, match="tts.snap_points: 'center' is not a board deck"):
        export_tts(game, record, tmp_path, TTSSpec(snap_points={"center": [grid]}))
    wide = SnapGrid(columns=7, rows=2, across=76, down=118)
    with pytest.raises(CardgenError, match=r"tts.snap_points.mat: a grid of 7 x 2 cells .* reaches past the 400 x "
                                           r"300 mm board"):
        export_tts(game, record, tmp_path, TTSSpec(snap_points={"mat": [wide]}))


def test_a_game_larger_than_the_play_area_is_laid_out_with_a_warning(build, tmp_path, monkeypatch) -> None:
    built = build("scrapbots")
    record = BuildRecord.of_build(built)
    game = load_game(REPO, "scrapbots")
    stage = TTSStage.for_game(game)

    def export(out: Path) -> list[str]:
        out.mkdir(parents=True)
        ctx = StageContext(game, record, out, out, wait_for=lambda path: built / path if path else None)
        return [str(p) for p in stage.run(ctx)]

    assert export(tmp_path / "fits" / "scrapbots") == []
    monkeypatch.setattr(tts_layout, "PLAY_AREA", 5.0)  # a table 10 units across: the 14-unit mat does not fit
    [warning] = export(tmp_path / "small" / "scrapbots")
    assert warning.startswith("data/scrapbots/game.yaml: warning: Tabletop Simulator: ")
    assert "object(s) reach past the default table's play area" in warning
    saved = json.loads(next((tmp_path / "small" / "scrapbots" / "tts").glob("*.json")).read_text(encoding="utf-8"))
    assert any(abs(b.x) + b.half_width > 5.0 for b in _places(saved))  # laid out all the same

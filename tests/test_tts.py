"""Tabletop Simulator export, checked on real builds: the Scrapbots example and a small made-up game with a
multi-sheet deck, a lone card, cards with different backs, cut-out and stacked tokens.

Each game is built once per module (module-scoped fixtures); pixels are compared on a few slots only.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import urllib.parse
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner
from PIL import Image, ImageChops, ImageColor, ImageStat

from cardgen.build.build import BuildOptions, build_game
from cardgen.commands.cli import main
from cardgen.core.errors import CardgenError
from cardgen.load.manifest import load_game
from cardgen.options.tts import TTSSpec
from cardgen.outputs.tts.objects import tts_text
from cardgen.outputs.tts.stage import TTSStage, export_tts
from cardgen.record.record import BuildRecord, CardEntry
from tests.test_spliced import unpadded

ROOT = Path(__file__).resolve().parent.parent
HEADER = ["SaveName", "Date", "VersionNumber", "GameMode", "GameType", "GameComplexity", "Tags", "Gravity",
          "PlayArea", "Table", "Sky", "Note", "TabStates", "LuaScript", "LuaScriptState", "XmlUI", "ObjectStates"]
BIG_DECK = 75  # more than one sheet of 70

MINI_YAML = """\
title: "Mini: Test"
dpi: 120
size: poker
fields: {bar: float, damage: int}
decks:
  big:
    source: big.csv
    size: jumbo   # 420 x 600 px trimmed at 120 dpi: ten across exceed 4096 px, so the first sheet is scaled down
    face: face.svg
    back: back.svg
    text: [text]
  solo:
    title: The Solo
    source: solo.csv
    face: face.svg
    back: back.svg
  mixed:
    source: mixed.csv
    face: face.svg
    back: {by: side, templates: {red: back.svg, blue: back2.svg}}
  chips:
    kind: token
    shape: hex
    source: chips.csv
    face: chip.svg
    size: {width: 20mm, height: 20mm, bleed: 1mm}
  cut:
    kind: token
    source: cut.csv
    face: chip.svg
    supply: true
    size: {width: 20mm, height: 20mm, bleed: 0}
  wide:
    source: wide.csv
    size: {width: 88.9mm, height: 63.5mm}   # landscape poker cards
    face: face.svg
    back: back.svg
    text: [damage, effect]
  strip:
    kind: token
    shape: rectangle
    source: strip.csv
    face: chip.svg
    size: {width: 40mm, height: 15mm, bleed: 0}
tts:
  cutout: [cut]
"""
FACE_SVG = """<svg {{ geo.svg_attrs }}>
  <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="{{ card.color }}"/>
  <rect x="{{ geo.width * card.bar }}" y="{{ geo.height * 0.2 }}" width="{{ geo.width * 0.15 }}"
        height="{{ geo.height * 0.6 }}" fill="#ffffff"/>
</svg>"""
BACK_SVG = '<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="%s"/></svg>'
CHIP_SVG = """<svg {{ geo.svg_attrs }}>
  <circle cx="{{ geo.width / 2 }}" cy="{{ geo.height / 2 }}" r="{{ geo.width / 2 }}" fill="#2266aa"/></svg>"""


def _mini_workspace(root: Path) -> None:
    game, templates = root / "data" / "mini", root / "templates" / "mini"
    game.mkdir(parents=True)
    templates.mkdir(parents=True)
    (game / "game.yaml").write_text(MINI_YAML)
    # Every big card gets its own colour and bar position, so that a card in the wrong slot shows.
    rows = [f"Card {i},#{(i * 37) % 256:02x}{(i * 91) % 256:02x}{(i * 53) % 256:02x},{(i % 5) / 6:.3f},"
            f"**Rule** {i} :scrap:" for i in range(BIG_DECK)]
    (game / "big.csv").write_text("name,color,bar,text\n" + "\n".join(rows) + "\n")
    (game / "solo.csv").write_text("name,color,bar,count\nLonely,#884422,0.4,1\n")
    (game / "mixed.csv").write_text("name,color,bar,side\nRed One,#aa0000,0.1,red\nBlue One,#0000aa,0.5,blue\n"
                                    "Red Two,#cc4444,0.7,red\n")
    (game / "chips.csv").write_text("name,count\nChip,3\n")
    (game / "cut.csv").write_text("name\nCut Token\n")
    (game / "wide.csv").write_text(("name,color,bar,damage,effect\nWide One,#227744,0.2,0,**Hit** twice\n"
                                   "Wide Two,#772244,0.6,,Block\n"))
    (game / "strip.csv").write_text("name\nStrip « Épée » ✂\n", encoding="utf-8")
    (templates / "face.svg").write_text(FACE_SVG)
    (templates / "back.svg").write_text(BACK_SVG % "#333333")
    (templates / "back2.svg").write_text(BACK_SVG % "#33cc33")
    (templates / "chip.svg").write_text(CHIP_SVG)


def _build(root: Path, name: str, out_root: Path) -> tuple[Path, BuildRecord, dict]:
    build_game(root, name, BuildOptions(out_root=out_root, jobs=2), None, ["tts"])
    out_dir = out_root / name
    [saved] = (out_dir / "tts").glob("*.json")
    return out_dir, BuildRecord.of_build(out_dir), json.loads(saved.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scrapbots(built_example: Path) -> tuple[Path, BuildRecord, dict]:
    """(output folder, build record, saved object) of the Scrapbots example, from the session's one build."""
    out_dir = built_example / "output" / "scrapbots"
    saved = json.loads((out_dir / "tts" / "Scrapbots.json").read_text(encoding="utf-8"))
    return out_dir, BuildRecord.of_build(out_dir), saved


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> tuple[Path, BuildRecord, dict]:
    """(output folder, build record, saved object) of the made-up game."""
    root = tmp_path_factory.mktemp("mini")
    _mini_workspace(root)
    return _build(root, "mini", root / "output")


def _copy_build(out_dir: Path, tmp_path: Path) -> Path:
    """A private copy of a built game (hard links), for tests that export again."""
    return Path(shutil.copytree(out_dir, tmp_path / out_dir.name, copy_function=os.link))


def _objects(saved: dict) -> dict[str, dict]:
    return {o["Nickname"]: o for o in saved["ObjectStates"]}


def _walk(node: object):
    """Every object of a saved object, nested ones included."""
    if isinstance(node, dict):
        if "GUID" in node:
            yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def _path(url: str) -> Path:
    assert url.startswith("file:///"), url
    return Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))


def _trimmed_card(out_dir: Path, card: CardEntry) -> Image.Image:
    bleed = round(card.bleed_mm / 25.4 * card.dpi)
    image = Image.open(out_dir / card.face).convert("RGB")
    return image.crop((bleed, bleed, image.width - bleed, image.height - bleed))


def _difference(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def _decks(saved: dict) -> list[dict]:
    return [o for o in saved["ObjectStates"] if o["Name"] in ("DeckCustom", "Deck")]


# ---------------------------------------------------------------- structure

def test_saved_object_has_the_header_and_objects(scrapbots) -> None:
    out_dir, record, saved = scrapbots
    assert all(key in saved for key in HEADER)
    assert saved["SaveName"] == "Scrapbots" and saved["ObjectStates"]
    assert (out_dir / "tts" / "Scrapbots.json").is_file()
    with Image.open(out_dir / "tts" / "Scrapbots.png") as thumb:
        assert thumb.size == (256, 256) and thumb.mode == "RGB"


def test_saved_object_is_written_as_json_dumps_writes_it(scrapbots, mini) -> None:
    """The saved object's file is the text of `json.dumps(indent=2, ensure_ascii=False)`, as every JSON file cardgen
    writes (it is written by pydantic's faster writer): indented two spaces, non-ASCII text as it is; with spaces after
    each run of cards (`storage.padding`)."""
    for out_dir, _, saved in (scrapbots, mini):
        [path] = (out_dir / "tts").glob("*.json")
        assert unpadded(path.read_text(encoding="utf-8")) == json.dumps(saved, indent=2, ensure_ascii=False)
    assert "Strip « Épée » ✂" in (mini[0] / "tts" / "Mini-Test.json").read_text(encoding="utf-8")


def test_the_saved_object_is_written_an_object_at_a_time(scrapbots, tmp_path: Path) -> None:
    """At the end of a build, when its memory is at its peak, the saved object's text (~20 MB at 10,000 cards) is
    written in pieces that do not grow with the number of cards, making the same text as written whole."""
    from cardgen.outputs.tts.objects import json_parts, write_saved_object

    saved = scrapbots[2]
    big = json.loads(json.dumps(saved))
    for deck in _decks(big):
        deck["ContainedObjects"] = deck["ContainedObjects"] * 40
        deck["DeckIDs"] = deck["DeckIDs"] * 40
    for each in (saved, big):
        write_saved_object(tmp_path / "saved.json", each)
        text = unpadded((tmp_path / "saved.json").read_text(encoding="utf-8"))
        assert text == json.dumps(each, indent=2, ensure_ascii=False)
    assert max(map(len, json_parts(big))) == max(map(len, json_parts(saved)))
    assert len(list(json_parts(big))) > sum(len(deck["ContainedObjects"]) for deck in _decks(big))


def test_every_deck_is_there_face_down_with_its_cards_and_copies(scrapbots) -> None:
    _, record, saved = scrapbots
    decks = {d["Nickname"]: d for d in _decks(saved)}
    assert set(decks) == {"Starting Decks", "Center Deck", "Wounds"}
    for name, deck in record.decks.items():
        if deck.kind != "card":
            continue
        obj = decks[deck.title]
        cards = record.cards_of(name)
        expected = [(c.name, tts_text(c.text)) for c in cards for _ in range(c.copies)]
        assert [(c["Nickname"], c["Description"]) for c in obj["ContainedObjects"]] == expected
        assert all(c["Name"] == "Card" and c["Hands"] for c in obj["ContainedObjects"])
        assert obj["Transform"]["rotZ"] == 180  # face down
    assert sum(len(d["ContainedObjects"]) for d in decks.values()) == 100
    assert len({d["Transform"]["posX"] for d in decks.values()}) == 3  # side by side


def test_deck_ids_match_contained_cards(scrapbots, mini) -> None:
    for _, _, saved in (scrapbots, mini):
        for deck in _decks(saved):
            assert len(deck["ContainedObjects"]) > 1
            assert deck["DeckIDs"] == [c["CardID"] for c in deck["ContainedObjects"]]


def test_card_ids_point_into_existing_sheet_cells(scrapbots, mini) -> None:
    for _, _, saved in (scrapbots, mini):
        for deck in _decks(saved):
            for card in deck["ContainedObjects"]:
                key, slot = divmod(card["CardID"], 100)
                sheet = deck["CustomDeck"][str(key)]
                assert card["CustomDeck"] == {str(key): sheet}
                assert slot < sheet["NumWidth"] * sheet["NumHeight"]
                # BackIsHidden: the hidden-hand image is the back, so every slot may hold a card.
                assert sheet["BackIsHidden"] is True


def test_sheet_images_have_whole_cells_within_the_size_limit(scrapbots, mini) -> None:
    for out_dir, record, saved in (scrapbots, mini):
        for deck in _decks(saved):
            card = next(c for c in record.cards if c.name == deck["ContainedObjects"][0]["Nickname"])
            trim = _trimmed_card(out_dir, card).size
            for sheet in deck["CustomDeck"].values():
                assert 1 <= sheet["NumWidth"] <= 10 and 1 <= sheet["NumHeight"] <= 7
                with Image.open(_path(sheet["FaceURL"])) as image:
                    assert image.mode == "RGB" and max(image.size) <= 4096
                    cell_w, cell_h = image.width / sheet["NumWidth"], image.height / sheet["NumHeight"]
                assert cell_w.is_integer() and cell_h.is_integer()
                assert cell_w <= trim[0] and abs(cell_w / cell_h - trim[0] / trim[1]) < 0.01


def _slot_image(sheet: dict, slot: int, url_key: str = "FaceURL") -> Image.Image:
    with Image.open(_path(sheet[url_key])) as image:
        w, h = image.width // sheet["NumWidth"], image.height // sheet["NumHeight"]
        x, y = slot % sheet["NumWidth"] * w, slot // sheet["NumWidth"] * h
        return image.convert("RGB").crop((x, y, x + w, y + h))


def _check_slots(out_dir: Path, record: BuildRecord, deck: dict, card_indexes: list[int]) -> None:
    """Slot k of a sheet shows the card whose CardID is key * 100 + k, and not its neighbour."""
    by_name = {c.name: c for c in record.cards}
    for index in card_indexes:
        obj = deck["ContainedObjects"][index]
        key, slot = divmod(obj["CardID"], 100)
        sheet = deck["CustomDeck"][str(key)]
        cell = _slot_image(sheet, slot)
        rendered = _trimmed_card(out_dir, by_name[obj["Nickname"]]).resize(cell.size, Image.LANCZOS)
        # cells are drawn at their size (whole 8 px blocks: Scrapbots' 750 x 1050 cards in 744 x 1040 cells): they
        # differ from the card's pixels resampled at the edges (measured 3.4-4.2, a neighbour 14.6 and more)
        assert _difference(cell, rendered) < 5, (obj["Nickname"], slot)
        other = next(c for c in deck["ContainedObjects"] if c["Nickname"] != obj["Nickname"])
        wrong = _trimmed_card(out_dir, by_name[other["Nickname"]]).resize(cell.size, Image.LANCZOS)
        assert _difference(cell, wrong) > 2 * _difference(cell, rendered)


def test_sheet_slots_show_the_right_cards(scrapbots, mini) -> None:
    out_dir, record, saved = scrapbots
    center = _objects(saved)["Center Deck"]
    _check_slots(out_dir, record, center, [0, 30, len(center["ContainedObjects"]) - 1])
    out_dir, record, saved = mini
    big = _objects(saved)["Big"]
    _check_slots(out_dir, record, big, [0, 69, 70, BIG_DECK - 1])


def test_guids_are_unique_six_hex_digits(scrapbots, mini) -> None:
    for _, _, saved in (scrapbots, mini):
        guids = [o["GUID"] for o in _walk(saved["ObjectStates"])]
        assert len(guids) == len(set(guids)) and all(re.fullmatch(r"[0-9a-f]{6}", g) for g in guids)


def _keys(saved: dict) -> list[int]:
    return [int(k) for d in _decks(saved) for k in d["CustomDeck"]] + [
        o["CardID"] // 100 for o in saved["ObjectStates"] if o["Name"] == "Card"]


def test_keys_never_repeat_within_or_across_games_and_are_stable(scrapbots, mini, tmp_path) -> None:
    keys = _keys(scrapbots[2]) + _keys(mini[2])
    assert len(keys) == len(set(keys))
    _, record, saved = scrapbots
    out_dir = _copy_build(scrapbots[0], tmp_path)
    game = load_game(ROOT, "scrapbots")
    export_tts(game, record, out_dir, TTSStage.for_game(game).config)
    again = json.loads((out_dir / "tts" / "Scrapbots.json").read_text(encoding="utf-8"))
    assert _keys(again) == _keys(saved)
    assert [o["GUID"] for o in _walk(again)] == [o["GUID"] for o in _walk(saved)]


def test_the_export_waits_for_the_backs_last_and_writes_the_same_files(scrapbots, tmp_path) -> None:
    """A build draws the backs after the faces: the export puts in every face sheet (and works out every card's
    text) as its cards are drawn, and the backs once every other image is in, not each deck's back first (which
    left all of it for after the drawing). The files and the saved object are the same."""
    out_dir, record, saved = scrapbots
    copy = _copy_build(out_dir, tmp_path)
    waited: list[str] = []
    game = load_game(ROOT, "scrapbots")
    export_tts(game, record, copy, TTSStage.for_game(game).config, wait=lambda image: waited.append(image))
    backs = {b.image for b in record.backs.values()}
    first_back = next(n for n, image in enumerate(waited) if image in backs)
    assert set(waited[:first_back]) >= {c.face for c in record.cards if c.kind == "card"}
    again = (copy / "tts" / "Scrapbots.json").read_text(encoding="utf-8").replace(str(copy), str(out_dir))
    assert json.loads(again) == saved  # but for the folder its URLs name
    images = {p.name: p.read_bytes() for p in (out_dir / "tts").iterdir() if p.suffix != ".json"}
    assert {p.name: p.read_bytes() for p in (copy / "tts").iterdir() if p.suffix != ".json"} == images


def test_urls_are_absolute_file_urls_to_existing_images(scrapbots, mini) -> None:
    for out_dir, _, saved in (scrapbots, mini):
        urls = [v for o in _walk(saved) for k, v in {**o, **o.get("CustomImage", {})}.items()
                if k in ("ImageURL", "ImageSecondaryURL") and v]
        urls += [s[k] for o in _walk(saved) for s in o.get("CustomDeck", {}).values() for k in ("FaceURL", "BackURL")]
        assert urls
        for url in urls:
            path = _path(url)
            assert path.is_file() and path.parent == out_dir / "tts"
            assert re.search(r"-[0-9a-f]{12}\.(jpg|png)$", path.name)  # content hash in the name


def test_base_url_replaces_file_urls(scrapbots, tmp_path) -> None:
    out_dir = _copy_build(scrapbots[0], tmp_path)
    export_tts(load_game(ROOT, "scrapbots"), scrapbots[1], out_dir, TTSSpec(base_url="https://example.org/sb/"))
    text = (out_dir / "tts" / "Scrapbots.json").read_text(encoding="utf-8")
    assert "file://" not in text and "https://example.org/sb/scrapbots-center-1-" in text


# ---------------------------------------------------------------- sheets, backs, lone cards

def test_a_large_deck_spreads_over_two_sheets(mini) -> None:
    big = _objects(mini[2])["Big"]
    sheets = list(big["CustomDeck"].values())
    assert len(big["ContainedObjects"]) == BIG_DECK and len(sheets) == 2
    assert (sheets[0]["NumWidth"], sheets[0]["NumHeight"]) == (10, 7)
    with Image.open(_path(sheets[0]["FaceURL"])) as image:
        # 420 x 600 px cards in cells of whole 8 px JPEG blocks: 408 wide, and 584 (582.9 rounded) high
        assert image.size == (10 * 408, 7 * 584)
    assert sheets[1]["NumWidth"] * sheets[1]["NumHeight"] == 5
    assert big["ContainedObjects"][3]["Description"] == "[b]Rule[/b] 3 [scrap]"
    assert sheets[0]["BackURL"] == sheets[1]["BackURL"]  # one back image per deck


def test_file_names_come_from_the_title(mini) -> None:
    assert sorted(p.name for p in (mini[0] / "tts").glob("Mini*")) == ["Mini-Test.json", "Mini-Test.png"]


def test_a_one_card_deck_is_a_lone_card(mini) -> None:
    solo = _objects(mini[2])["Lonely"]
    assert solo["Name"] == "Card" and solo["Transform"]["rotZ"] == 180
    key, slot = divmod(solo["CardID"], 100)
    assert slot == 0 and list(solo["CustomDeck"]) == [str(key)]
    assert not any(o["Name"] in ("DeckCustom", "Deck") and len(o["ContainedObjects"]) < 2
                   for o in mini[2]["ObjectStates"])


def test_different_backs_make_a_back_sheet_on_the_same_grid(mini) -> None:
    out_dir, record, saved = mini
    mixed = _objects(saved)["Mixed"]
    [sheet] = mixed["CustomDeck"].values()
    assert sheet["UniqueBack"] is True
    with Image.open(_path(sheet["FaceURL"])) as face, Image.open(_path(sheet["BackURL"])) as back:
        assert face.size == back.size
    green = (0x33, 0xcc, 0x33)
    for card in mixed["ContainedObjects"]:
        colour = _slot_image(sheet, card["CardID"] % 100, "BackURL").resize((1, 1)).getpixel((0, 0))
        assert (max(abs(a - b) for a, b in zip(colour, green)) < 8) == (card["Nickname"] == "Blue One")
    big = next(iter(_objects(saved)["Big"]["CustomDeck"].values()))
    assert big["UniqueBack"] is False


# ---------------------------------------------------------------- tokens and boards

def test_damage_counters_are_an_endless_bag_of_round_tiles(scrapbots) -> None:
    bag = _objects(scrapbots[2])["Damage Counter"]
    assert bag["Name"] == "Infinite_Bag"
    [tile] = bag["ContainedObjects"]
    assert tile["Name"] == "Custom_Tile" and tile["CustomImage"]["CustomTile"]["Type"] == 2  # circle
    with Image.open(_path(tile["CustomImage"]["ImageURL"])) as image:
        assert image.mode == "RGBA" and image.width == image.height
        assert image.getpixel((0, 0))[3] == 0  # transparent outside the disc


def test_the_play_mat_is_a_board_with_its_image(scrapbots) -> None:
    board = _objects(scrapbots[2])["Play Mat"]
    assert board["Name"] == "Custom_Board"
    with Image.open(_path(board["CustomImage"]["ImageURL"])) as image:
        assert image.size == (2362, 1772)  # 400 x 300 mm at the board's own 150 dpi, no bleed


# Sizes at scale 1, in table units, as docs/tts.md gives them from saves Tabletop Simulator wrote: a card's
# long side, a tile's (or token's) height, a board's height (its width is WidthScale times that). A card at
# scale 1 stands for a poker card, 88.9 mm long.
DOCUMENTED_UNITS = {"card": 3.1, "tile": 2.0, "board": 16.7}
MM_PER_UNIT = 88.9 / 3.1


def _on_table_mm(obj: dict) -> tuple[float, float]:
    """An object's (width, height) on the table in mm, from its scale and the documented sizes."""
    scale = obj["Transform"]["scaleX"]
    assert obj["Transform"]["scaleZ"] == scale
    if obj["Name"] in ("Card", "DeckCustom"):
        return scale * DOCUMENTED_UNITS["card"] * MM_PER_UNIT, 0.0  # long side only: the sheet gives the rest
    aspect = obj["CustomImage"]["WidthScale"] if obj["Name"] == "Custom_Board" else None
    height = scale * DOCUMENTED_UNITS["board" if aspect else "tile"] * MM_PER_UNIT
    return (height * aspect if aspect else 0.0), height


def _designed_mm(obj: dict, record: BuildRecord) -> dict:
    """The size game.yaml gives the deck an object comes from."""
    if obj["Name"] == "DeckCustom":
        return next(d for d in record.decks.values() if d.title == obj["Nickname"]).size_mm.model_dump()
    card = next(c for c in record.cards if c.id == obj["GMNotes"] or c.name == obj["Nickname"])
    return card.size_mm.model_dump()


def test_every_object_has_its_designed_size_on_the_table(scrapbots, mini) -> None:
    checked = set()
    for _, record, saved in (scrapbots, mini):
        for obj in _walk(saved["ObjectStates"]):
            if obj["Name"] in ("Infinite_Bag",):
                continue
            size = _designed_mm(obj, record)
            width, height = _on_table_mm(obj)
            if obj["Name"] in ("Card", "DeckCustom"):
                assert width == pytest.approx(max(size["width"], size["height"]), rel=0.002), obj["Nickname"]
                assert obj["SidewaysCard"] == (size["width"] > size["height"])
            else:
                assert height == pytest.approx(size["height"], rel=0.002), obj["Nickname"]
                if obj["Name"] == "Custom_Board":
                    assert width == pytest.approx(size["width"], rel=0.002)
            checked.add(obj["Name"])
    assert checked == {"Card", "DeckCustom", "Custom_Tile", "Custom_Token", "Custom_Board"}


def test_scrapbots_sizes_are_the_ones_the_docs_state(scrapbots) -> None:
    objects = _objects(scrapbots[2])
    token = objects["Damage Counter"]["ContainedObjects"][0]
    found = {"poker card": objects["Center Deck"]["Transform"]["scaleX"], "22 mm token": token["Transform"]["scaleX"],
             "mat": objects["Play Mat"]["Transform"]["scaleX"]}
    assert found == {"poker card": 1.0, "22 mm token": 0.3836, "mat": 0.6264}
    assert objects["Play Mat"]["CustomImage"]["WidthScale"] == pytest.approx(4 / 3)
    docs = (ROOT / "docs" / "tts.md").read_text()
    assert all(f"| {value} |" in docs for value in ("1.0", "0.3836", "0.6264"))


def test_landscape_cards_stay_at_scale_one_sideways(mini) -> None:
    wide = _objects(mini[2])["Wide"]
    assert wide["SidewaysCard"] is True and wide["Transform"]["scaleX"] == 1.0
    assert all(card["SidewaysCard"] for card in wide["ContainedObjects"])
    big = _objects(mini[2])["Big"]  # portrait jumbo cards: their long side over a poker card's
    assert big["SidewaysCard"] is False and big["Transform"]["scaleX"] > 1


def test_keys_change_when_a_decks_pictures_change(mini, tmp_path) -> None:
    root = Path(shutil.copytree(mini[0].parent.parent, tmp_path / "ws", copy_function=os.link, symlinks=True))
    before = {o["Nickname"]: sorted(o["CustomDeck"]) for o in mini[2]["ObjectStates"] if "CustomDeck" in o}
    solo = root / "data" / "mini" / "solo.csv"
    solo.unlink()  # a link to the fixture's file: replace it, do not write through it
    solo.write_text("name,color,bar,count\nLonely,#228844,0.4,1\n")
    _, _, saved = _build(root, "mini", root / "output")
    after = {o["Nickname"]: sorted(o["CustomDeck"]) for o in saved["ObjectStates"] if "CustomDeck" in o}
    assert after["Lonely"] != before["Lonely"]  # new picture, new key: no table mixes the two
    assert {k: v for k, v in after.items() if k != "Lonely"} == {k: v for k, v in before.items() if k != "Lonely"}


def test_file_urls_escape_only_what_would_break_them(tmp_path) -> None:
    from cardgen.outputs.tts.urls import file_url

    image = tmp_path / "My Games" / "50% #1" / "x.png"
    url = file_url(image)
    assert url == "file://" + str(tmp_path) + "/My Games/50%25 %231/x.png"  # spaces stay, as TTS writes them
    assert _path(url) == image


def test_install_finds_a_documents_folder_moved_to_onedrive(tmp_path, monkeypatch) -> None:
    from cardgen.outputs.tts import install as tts_install

    monkeypatch.setattr(tts_install.sys, "platform", "win32")
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "home"))
    monkeypatch.setenv("OneDrive", str(tmp_path / "OneDrive"))
    moved = tmp_path / "OneDrive" / "Documents" / "My Games" / "Tabletop Simulator"
    (moved / "Saves").mkdir(parents=True)
    assert tts_install.default_tts_dir() == moved
    monkeypatch.delenv("OneDrive")
    usual = tmp_path / "home" / "Documents" / "My Games" / "Tabletop Simulator"
    assert tts_install.default_tts_dir() == usual


def test_tokens_cut_out_or_stacked(mini) -> None:
    objects = mini[2]["ObjectStates"]
    chips = [o for o in objects if o["Nickname"] == "Chip"]
    assert len(chips) == 3 and all(o["Name"] == "Custom_Tile" for o in chips)
    assert chips[0]["CustomImage"]["CustomTile"]["Type"] == 1  # hex
    assert len({o["Transform"]["posY"] for o in chips}) == 3  # a stack
    bag = next(o for o in objects if o["Nickname"] == "Cut Token")
    assert bag["Name"] == "Infinite_Bag" and bag["ContainedObjects"][0]["Name"] == "Custom_Token"


def test_cutout_must_name_a_token_deck(mini, tmp_path) -> None:
    out_dir, record, _ = mini
    game = load_game(out_dir.parent.parent, "mini")
    with pytest.raises(CardgenError, match="tts.cutout: 'big' is not a token deck"):
        export_tts(game, record, tmp_path, TTSSpec(cutout=["big"]))


def test_manifest_tts_section_is_checked(tmp_path) -> None:
    _mini_workspace(tmp_path)
    manifest = tmp_path / "data" / "mini" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("  cutout: [cut]", "  cutuot: [cut]\n  jpeg_quality: 20"))
    with pytest.raises(CardgenError) as caught:
        load_game(tmp_path, "mini")
    messages = [p.message for p in caught.value.problems]
    assert "tts.cutuot: unknown key 'cutuot'; did you mean 'cutout'?" in messages
    assert any(m.startswith("tts.jpeg_quality:") for m in messages)


def test_descriptions_of_several_text_columns_name_each_column(mini) -> None:
    """A deck whose `text:` has several columns: each filled one on its own line after its name (a 0 is a value,
    an empty cell is left out), not the bare values joined."""
    _, _, saved = mini
    cards = {c["Nickname"]: c["Description"] for c in _objects(saved)["Wide"]["ContainedObjects"]}
    assert cards == {"Wide One": "[b]Damage:[/b] 0\n[b]Effect:[/b] [b]Hit[/b] twice",
                     "Wide Two": "[b]Effect:[/b] Block"}


def test_bbcode_descriptions() -> None:
    assert tts_text("**Activate:** gain 1 :energy:.\\n*Flavour*") == "[b]Activate:[/b] gain 1 [energy].\n[i]Flavour[/i]"


# ---------------------------------------------------------------- command line

def test_tts_command_exports_and_installs(tiny_game, tmp_path) -> None:
    tts_home = tmp_path / "Tabletop Simulator"
    old_images = tts_home / "Saves" / "Saved Objects" / "cardgen" / "tiny"  # where installs used to put them
    old_images.mkdir(parents=True)
    (old_images / "tiny-main-1-000000000000.jpg").write_bytes(b"old")
    (old_images / "mine.txt").write_text("not ours")
    images = tts_home / "cardgen" / "tiny"
    images.mkdir(parents=True)
    (images / "tiny-main-1-111111111111.jpg").write_bytes(b"older export")
    (images / "tiny-notes.jpg").write_bytes(b"the designer's own file")
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "tts", "tiny", "--format", "png", "--install",
                                       "--tts-dir", str(tts_home)])
    assert result.exit_code == 0, result.output
    target = tts_home / "Saves" / "Saved Objects" / "cardgen"
    saved = json.loads((target / "Tiny.json").read_text(encoding="utf-8"))
    assert (target / "Tiny.png").is_file()
    sheet = next(iter(_objects(saved)["Main"]["CustomDeck"].values()))
    assert _path(sheet["FaceURL"]).parent == images and sheet["FaceURL"].endswith(".png")
    assert "/Tabletop Simulator/" in sheet["FaceURL"]  # a plain path, as Tabletop Simulator writes local files
    # Nothing but the saved object and its thumbnail under Saved Objects: no image folder in its menu.
    assert sorted(p.name for p in target.iterdir()) == ["Tiny.json", "Tiny.png", "tiny"]
    assert [p.name for p in old_images.iterdir()] == ["mine.txt"]
    assert not (images / "tiny-main-1-111111111111.jpg").exists() and (images / "tiny-notes.jpg").exists()
    assert all(_path(url).is_file() for o in _walk(saved) for s in o.get("CustomDeck", {}).values()
               for url in (s["FaceURL"], s["BackURL"]))


def test_install_without_tabletop_simulator_is_an_error(scrapbots, tmp_path) -> None:
    result = CliRunner().invoke(main, ["--root", str(ROOT), "tts", "scrapbots", "--out", str(scrapbots[0].parent),
                                       "--install", "--tts-dir", str(tmp_path / "nothing")])
    assert result.exit_code == 1 and "no Tabletop Simulator data folder" in result.output


# ---------------------------------------------------------------- images made in the render workers

def _images(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".png", ".jpg")}


def test_images_made_by_the_workers_are_the_ones_the_export_makes(mini, tmp_path) -> None:
    """The mini build drew its cards in a pool that made cells and sheets; an export into an empty cache
    makes every image itself, every cell from its card's file, and must write the very same files."""
    out_dir, record, _ = mini
    root = out_dir.parent.parent
    fresh = Path(shutil.copytree(out_dir, tmp_path / "out" / "mini", copy_function=os.link,
                                 ignore=shutil.ignore_patterns("tts")))
    options = TTSStage.for_game(load_game(root, "mini")).config
    export_tts(load_game(root, "mini"), record, fresh, options)
    made, built = _images(fresh / "tts"), _images(out_dir / "tts")
    assert set(made) == set(built) and len(made) > 10
    assert [name for name in made if made[name] != built[name]] == []


def test_each_sheet_is_made_by_the_card_work_that_completes_it(mini, tmp_path) -> None:
    """The export's work on each card, pickled as a render worker gets it and done card by card (last card first):
    a sheet is made once the last of its cards has its cell, by that card's work, not before, and the images the
    work made are the build's (an export that cannot draw a cell finds every one made). After the build, whose
    caches hold every cell and image, there is no work."""
    import pickle

    from cardgen.outputs.tts.stage import card_work
    from cardgen.raster.render import DrawnCard

    out_dir, record, _ = mini
    root, out_root = out_dir.parent.parent, tmp_path / "out"
    options = TTSStage.for_game(load_game(root, "mini")).config
    assert card_work("mini", record, options, out_dir.parent) == {}  # the build's caches hold it all
    work = card_work("mini", record, options, out_root)
    assert set(work) >= {c.hash for c in record.cards}  # every face (a sheet cell, a token or board image)
    files = {**{c.hash: c.face for c in record.cards}, **{b.hash: b.image for b in record.backs.values()}}
    sheets: dict[bytes, tuple] = {}  # each sheet once: (its work, the keys of the cards whose work carries it)
    for key, item in work.items():
        for sheet in item.sheets:
            sheets.setdefault(sheet.recipe, (sheet, set()))[1].add(key)
    assert len(sheets) >= 4
    done: set[str] = set()
    for key in reversed(list(work)):
        card = DrawnCard(out_dir / files[key])
        pickle.loads(pickle.dumps(work[key]))(card)
        done.add(key)
        assert {sheet.recipe: sheet.image().cached(out_root) for sheet, _ in sheets.values()} == \
            {sheet.recipe: keys <= done for sheet, keys in sheets.values()}
    fresh = Path(shutil.copytree(out_dir, out_root / "mini", copy_function=os.link,
                                 ignore=shutil.ignore_patterns("tts")))
    export_tts(load_game(root, "mini"), record, fresh, options)  # no drawings: every cell is there
    assert _images(fresh / "tts") == _images(out_dir / "tts")


def test_a_watch_takes_the_sheets_it_found_cached_unlooked_at_and_notices_one_gone_behind_its_back(
        mini, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that builds again, the card work finds the export's images in the outputs cache by looking at
    each once; then, while the kernel says nothing touched them (`folderwatch.entry_trust`), without looking; an
    image deleted behind its back is looked at again, and made again by the card work."""
    from cardgen.core import folderwatch, storage
    from cardgen.outputs.tts import work as work_module
    from cardgen.outputs.tts.stage import card_work

    out_dir, record, _ = mini
    out_root = Path(shutil.copytree(out_dir.parent, tmp_path / "out", copy_function=os.link))
    options = TTSStage.for_game(load_game(out_dir.parent.parent, "mini")).config
    monkeypatch.setattr(folderwatch, "_WATCHES", {})
    storage.keep_for_next_builds()
    verified: dict[str, bool] = {}
    verify = work_module.verify

    def looked_at(path: Path) -> bool:
        verified[path.name] = verify(path)
        return verified[path.name]

    monkeypatch.setattr(work_module, "verify", looked_at)
    assert card_work("mini", record, options, out_root) == {}
    cached = sorted(name for name, found in verified.items() if found)
    assert len(cached) >= 4  # each sheet and other image the cache holds, looked at
    card_work("mini", record, options, out_root)  # (those sealed again for the copy's change times: looked at anew)
    verified.clear()
    assert card_work("mini", record, options, out_root) == {}
    assert not verified.keys() & set(cached)  # nothing touched them: taken unlooked at
    # A token's image (a PNG: made from its one card image by the card work; a sheet whose cells are all cached is
    # made by the export itself, not by card work)
    name = next(name for name in cached if name.endswith(".png"))
    gone = next((out_root / ".cache" / "outputs").rglob(name))
    gone.unlink()
    verified.clear()
    work = card_work("mini", record, options, out_root)
    assert verified.get(name) is False and not verified.keys() & (set(cached) - {name})
    assert any(item.sheets or item.images for item in work.values())  # made again by the work on its cards


def test_the_card_work_is_planned_without_hashing_the_saved_object(mini, tmp_path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's card work needs the export's images only: it is planned without `mark_for_push` (a hash of every
    object's JSON), which the export itself still does (each object's Memo)."""
    from cardgen.outputs.tts import exporter
    from cardgen.outputs.tts.stage import card_work

    out_dir, record, saved = mini
    options = TTSStage.for_game(load_game(out_dir.parent.parent, "mini")).config

    def refused(objects: list, game: str) -> None:
        raise AssertionError("the card work hashed the saved object")

    monkeypatch.setattr(exporter, "mark_for_push", refused)
    assert set(card_work("mini", record, options, tmp_path / "out")) >= {c.hash for c in record.cards}
    assert all(obj["Memo"] for obj in saved["ObjectStates"])


def test_the_card_work_is_planned_without_the_cards_objects(mini, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The card work plans the decks' sheets only, not each card's objects (its guids, description and JSON: ~half
    of that planning at 1,000 cards), and finds the same work."""
    from cardgen.outputs.tts import decks
    from cardgen.outputs.tts.stage import card_work

    out_dir, record, _ = mini
    options = TTSStage.for_game(load_game(out_dir.parent.parent, "mini")).config
    planned = card_work("mini", record, options, tmp_path / "out")

    def refused(*args: object) -> list:
        raise AssertionError("the card work made a card's objects")

    monkeypatch.setattr(decks, "_card_objects", refused)
    again = card_work("mini", record, options, tmp_path / "out")
    assert set(again) == set(planned) >= {c.hash for c in record.cards}
    shown = [re.sub(r" at 0x[0-9a-f]+", "", repr(item)) for item in again.values()]  # (a cache's address)
    assert shown == [re.sub(r" at 0x[0-9a-f]+", "", repr(item)) for item in planned.values()]


def test_the_thumbnail_is_put_together_from_faces_the_card_work_made(mini, tmp_path) -> None:
    """The first face of up to three decks is shrunk for the saved object's thumbnail by its card's work in the
    render workers, while the card is in memory: the export then puts the thumbnail together without reading one
    card image (the copy below has none), and it is the picture the build made."""
    import pickle

    from cardgen.outputs.tts.stage import card_work, saved_object_path
    from cardgen.raster.render import DrawnCard

    out_dir, record, _ = mini
    root, out_root = out_dir.parent.parent, tmp_path / "out"
    options = TTSStage.for_game(load_game(root, "mini")).config
    work = card_work("mini", record, options, out_root)
    files = {**{c.hash: c.face for c in record.cards}, **{b.hash: b.image for b in record.backs.values()}}
    assert len({face.source.hash for item in work.values() for face in item.faces}) == 3
    for key, item in work.items():
        pickle.loads(pickle.dumps(item))(DrawnCard(out_dir / files[key]))
    fresh = Path(shutil.copytree(out_dir, out_root / "mini", ignore=shutil.ignore_patterns("tts")))
    for path in files.values():
        (fresh / path).unlink()
    export_tts(load_game(root, "mini"), record, fresh, options)
    thumbnail = saved_object_path(out_dir, record).with_suffix(".png").name
    assert (fresh / "tts" / thumbnail).read_bytes() == (out_dir / "tts" / thumbnail).read_bytes()
    assert _images(fresh / "tts") == _images(out_dir / "tts")


class _SheetWork(NamedTuple):
    """The mini game's card work for the TTS export, with its cards' files."""

    out_dir: Path
    out_root: Path
    options: TTSSpec
    work: dict
    files: dict[str, str]  # each image's path in the build, by hash
    last: str  # a card with cells and sheets: the last one drawn

    def card(self, key: str):  # type: ignore[no-untyped-def]
        """The drawn card of an image key (its file)."""
        from cardgen.raster.render import DrawnCard

        return DrawnCard(self.out_dir / self.files[key])


def _sheet_work(mini, tmp_path: Path) -> _SheetWork:  # type: ignore[no-untyped-def]
    from cardgen.outputs.tts.stage import card_work

    out_dir, record, _ = mini
    root, out_root = out_dir.parent.parent, tmp_path / "out"
    options = TTSStage.for_game(load_game(root, "mini")).config
    work = card_work("mini", record, options, out_root)
    files = {**{c.hash: c.face for c in record.cards}, **{b.hash: b.image for b in record.backs.values()}}
    last = next(key for key, item in work.items() if item.sheets and item.cells)
    return _SheetWork(out_dir, out_root, options, work, files, last)


def test_the_card_completing_a_sheet_joins_its_cells_tiles_without_decoding_one(mini, tmp_path, monkeypatch) -> None:
    """The work of the card whose cell completes a sheet makes the sheet from the stored cells' JPEG tiles: no cell
    is decoded, each cell's pixels are the sheet's there, exactly, and the sheet is the file the export makes."""
    import pickle

    import numpy as np

    from cardgen.outputs.tts.pictures import Cell

    out_dir, record, _ = mini
    root = out_dir.parent.parent
    sheets = _sheet_work(mini, tmp_path)
    out_root, options, work = sheets.out_root, sheets.options, sheets.work

    def never_decoded(*args: object) -> None:
        raise AssertionError("a cell was decoded")

    monkeypatch.setattr(Cell, "load", never_decoded)
    made = []
    for key in [*(k for k in work if k != sheets.last), sheets.last]:
        item = pickle.loads(pickle.dumps(work[key]))
        ready = [sheet.image() for sheet in item.sheets if not sheet.image().cached(out_root)]
        item(sheets.card(key))
        made += [image for image in ready if image.cached(out_root)]
    assert len(made) >= 4 and all(isinstance(image.picture.slots[0], Cell) for image in made)
    for image in made:
        picture = image.picture
        with Image.open(image.make(out_root, sheets.card)) as sheet:
            pixels = np.asarray(sheet.convert("RGB"))
        for slot, cell in enumerate(picture.slots):
            width, height = cell.size
            x, y = slot % picture.columns * width, slot // picture.columns * height
            own = np.asarray(Image.open(io.BytesIO(cell.stored(out_root, sheets.card).read_bytes())))
            assert (pixels[y:y + height, x:x + width] == own).all(), slot
    monkeypatch.undo()
    fresh = Path(shutil.copytree(out_dir, out_root / "mini", copy_function=os.link,
                                 ignore=shutil.ignore_patterns("tts")))
    export_tts(load_game(root, "mini"), record, fresh, options)  # no drawings: every cell is there
    assert _images(fresh / "tts") == _images(out_dir / "tts")


def test_a_joined_sheet_shows_plain_slots_in_their_colour_and_empty_ones_black(tmp_path) -> None:
    """Plain slots (the backs of a deck without one) are joined like cells, and the grid's slots without a card are
    black, as on a sheet pasted together."""
    from cardgen.outputs.tts.pictures import PLAIN_BACK, Plain, SheetPicture
    from cardgen.raster.render import DrawnCard

    size = (64, 88)
    picture = SheetPicture(3 * size[0], 2 * size[1], 3, (Plain(size), Plain(size, "#ff0000"), Plain(size),
                                                         Plain(size, "#00ff00")))

    def no_card(source: object) -> DrawnCard:
        raise AssertionError("a plain slot needs no card")

    joined = picture.joined(tmp_path, no_card, 90)
    assert joined is not None
    sheet = Image.open(io.BytesIO(joined)).convert("RGB")
    assert sheet.size == (picture.width, picture.height)
    centres = [(x * size[0] + size[0] // 2, y * size[1] + size[1] // 2) for y in range(2) for x in range(3)]
    expected = [PLAIN_BACK, "#ff0000", PLAIN_BACK, "#00ff00", "#000000", "#000000"]
    for centre, colour in zip(centres, expected):
        assert max(abs(a - b) for a, b in zip(sheet.getpixel(centre), ImageColor.getrgb(colour))) <= 3, centre


def test_a_cell_that_is_not_a_tile_makes_its_sheet_from_decoded_cells(mini, tmp_path) -> None:
    """A stored cell that cannot be joined (a JPEG without restarts, here) does not stop the sheet: it is made from
    the decoded cells and encoded, and shows each cell where it belongs."""
    from cardgen.outputs.tts.pictures import Cell, SheetPicture

    out_dir, record, _ = mini
    sheets = _sheet_work(mini, tmp_path)
    out_root, work = sheets.out_root, sheets.work
    for key, item in work.items():
        item(sheets.card(key))
    image = next(i for item in work.values() for s in item.sheets if len((i := s.image()).picture.slots) == 70)
    picture = image.picture
    assert isinstance(picture, SheetPicture)
    first = picture.slots[0]
    assert isinstance(first, Cell)
    assert picture.joined(out_root, sheets.card, image.quality) is not None
    plain = first.load(out_root, sheets.card)
    first.cache(out_root).write(first.key, lambda temp: plain.save(temp, format="JPEG", quality=95))
    assert picture.joined(out_root, sheets.card, image.quality) is None
    sheet = Image.open(io.BytesIO(image.encoded(out_root, sheets.card))).convert("RGB")
    width, height = first.size
    assert sheet.size == (picture.width, picture.height)
    assert _difference(sheet.crop((0, 0, width, height)), plain) < 2
    assert _difference(sheet.crop((width, 0, 2 * width, height)), picture.slots[1].load(out_root, sheets.card)) < 2


def test_one_card_edit_remakes_its_cell_and_sheet_only_and_matches_a_cold_build(tmp_path) -> None:
    from cardgen.outputs.pdf import png_stream

    root = tmp_path / "ws"
    _mini_workspace(root)
    out = root / "output"

    def build(out_root: Path) -> Path:
        build_game(root, "mini", BuildOptions(out_root=out_root, jobs=2), None, ["tts", "print"])
        return out_root / "mini"

    def cached(kind: str) -> set[str]:
        return {p.name for p in (out / ".cache" / kind).rglob("*.*") if p.suffix != ".seal"}  # entries, not their seals

    before, cells, outputs = _images(build(out) / "tts"), cached("tts-cells"), cached("outputs")
    pages = _pdf_pages(out / "mini" / "print")
    csv = root / "data" / "mini" / "big.csv"
    csv.write_text(re.sub(r"Card 72,#\w+,", "Card 72,#010203,", csv.read_text()))  # on the second sheet
    after = _images(build(out) / "tts")
    assert len(cached("tts-cells") - cells) == 1  # its cell, nothing else
    assert len(cached("outputs") - outputs) == 1  # the sheet holding it
    changed = sorted(set(after) - set(before))
    assert len(changed) == 1 and changed[0].startswith("mini-big-2-")
    new_pages = _pdf_pages(out / "mini" / "print")
    [changed_page] = [n for n, (old, new) in enumerate(zip(pages, new_pages)) if old != new]
    [card] = [c for c in BuildRecord.of_build(out / "mini").cards if c.name == "Card 72"]
    assert png_stream(out / "mini" / card.face)[2] in new_pages[changed_page][1]  # type: ignore[index]
    cold = build(tmp_path / "cold")
    assert _images(cold / "tts") == after
    assert _pdf_pages(cold / "print") == new_pages


def _pdf_pages(folder: Path) -> list[tuple[bytes, tuple[bytes, ...]]]:
    """Each page of a build's print PDF as (content stream, the stream data of the images it draws, in the order it
    draws them). The images' names in the stream are numbered in that order: a print updated by an edit keeps the
    old image's name for the new image (a revision of the same object), a cold build names it by its content."""
    import pypdf

    [path] = folder.glob("*.pdf")
    pages = []
    for page in pypdf.PdfReader(path).pages:
        xobjects = page["/Resources"].get("/XObject", {})
        content = page.get_contents().get_data()
        names = list(dict.fromkeys(re.findall(rb"/(\S+) Do", content)))
        for number, name in enumerate(names):
            content = content.replace(b"/" + name + b" Do", b"/image%d Do" % number)
        pages.append((content, tuple(xobjects["/" + n.decode()].get_object()._data for n in names)))
    return pages



def test_sheet_cells_are_the_cards_pixels_resampled(scrapbots, tmp_path) -> None:
    """Cells are resampled from each card's pixels (drawing them again from the card's vectors cost more CPU): every
    Scrapbots card's cell is the card, bleed cut off, scaled down (within 6/255 of LANCZOS on average; measured
    1.5-2.6), in RGB, the same pixels whether the card is in memory (drawn now) or read from its file."""
    from cardgen.outputs.tts.pictures import Source
    from cardgen.raster.render import DrawnCard

    out_dir, record, _ = scrapbots
    cards = [card for card in record.cards if record.decks[card.deck].kind == "card"]
    assert len(cards) > 15
    for card in cards:
        source = Source(card.hash, card.face, record.decks[card.deck].bleed_px)
        cell = source.cell(DrawnCard(out_dir / card.face), (409, 573))
        with Image.open(out_dir / card.face) as stored:
            in_memory = DrawnCard(tmp_path / "no-such-file.png", stored.convert("RGB"))
        assert source.cell(in_memory, (409, 573)).tobytes() == cell.tobytes()
        lanczos = _trimmed_card(out_dir, card).resize((409, 573), Image.Resampling.LANCZOS)
        assert cell.mode == "RGB" and cell.size == (409, 573)
        assert sum(ImageStat.Stat(ImageChops.difference(cell, lanczos)).mean) / 3 <= 6.0, card.face


def test_the_export_runs_while_the_cards_are_drawn_and_waits_for_what_each_image_shows(
        tiny_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers wait until the export asks for a card file (it runs beside the drawing, and each sheet waits for
    the cards it shows); its images are those of an export written after the drawing (one process)."""
    from cardgen.build.plan import CardFiles
    from cardgen.raster.render import Drawing
    from tests.conftest import hold_drawing

    out = tiny_game / "output"
    seen_go = hold_drawing(monkeypatch, out)
    wait = CardFiles.wait

    def wait_and_let_draw(self, path=None):  # type: ignore[no-untyped-def]
        (out / "go").touch()
        return wait(self, path)

    monkeypatch.setattr(CardFiles, "wait", wait_and_let_draw)
    draw, build_process, drawn_here = Drawing.draw, os.getpid(), []

    def draw_noting_where(self, path):  # type: ignore[no-untyped-def]
        if os.getpid() == build_process:  # not in a render worker (a forked process)
            drawn_here.append(self.svg)
        return draw(self, path)

    monkeypatch.setattr(Drawing, "draw", draw_noting_where)
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, ["tts"])
    assert seen_go.read_text() == "True" and drawn_here == []  # every cell was made by the workers
    build_game(tiny_game, "tiny", BuildOptions(tmp_path / "after", jobs=1), None, ["tts"])
    beside, after = out / "tiny" / "tts", tmp_path / "after" / "tiny" / "tts"
    images = sorted(p.name for p in beside.iterdir() if p.suffix != ".json")
    assert len(images) >= 3 and images == sorted(p.name for p in after.iterdir() if p.suffix != ".json")
    assert all((beside / name).read_bytes() == (after / name).read_bytes() for name in images)


def test_an_objects_memo_leaves_out_where_it_lies_and_where_its_images_were_written_but_nothing_else() -> None:
    """`mark_for_push`: a deck moved (its Transform and its cards'), or exported into another folder (its file:///
    addresses), keeps its Memo; a card's text, an image's name or a nested value changed gives another."""
    import copy

    from cardgen.outputs.tts.objects import mark_for_push

    def deck(folder: str = "/out/a", x: float = 0.0, text: str = "Fire", image: str = "f1.jpg") -> dict:
        card = {"Name": "Card", "Transform": {"posX": x}, "Description": text, "CardID": 100}
        return {"Name": "Deck", "GUID": "abc123", "Transform": {"posX": x, "rotY": 180.0},
                "CustomDeck": {"1": {"FaceURL": f"file://{folder}/{image}", "BackURL": f"file://{folder}/b.jpg"}},
                "ContainedObjects": [card, copy.deepcopy(card)]}

    def memo(obj: dict) -> str:
        mark_for_push([obj], "tiny")
        return obj["Memo"]

    first = memo(deck())
    assert memo(deck(x=5.0)) == memo(deck(folder="/elsewhere/é x")) == first
    again = deck()
    again["Memo"] = "stale"
    assert memo(again) == first
    assert len({first, memo(deck(text="Ice")), memo(deck(image="f2.jpg"))}) == 3
    nested = deck()
    nested["ContainedObjects"][1]["Transform"] = {"posX": 1.0}
    nested["ContainedObjects"][1]["CustomDeck"] = {"1": {"FaceURL": "https://cdn/f1.jpg"}}
    assert memo(nested) != first


def test_the_memo_takes_out_a_file_address_up_to_its_last_slash_as_a_character_by_character_reading_does() -> None:
    """The folder of a `file://` address in an object's JSON is taken out up to the last `/` before the string's
    closing quote, escapes (a quote, a backslash, a slash) read as one character each: the pattern that matches a run
    of plain characters at a time (`objects._FOLDER_OF_FILE`) takes out what the one reading each character as an
    alternation did, on addresses and on any text made of their pieces."""
    import itertools
    import json
    import re

    from cardgen.outputs.tts import objects

    reference = re.compile(r'"file://(?:[^"\\]|\\.)*/')
    folders = ["/out/a", '/my "games"/b', "/back\\slash/c", "/é x/d", "", "/a\\"]
    texts = [json.dumps({"FaceURL": f"file://{folder}/f.jpg", "Name": f"x/{folder}"}) for folder in folders]
    pieces = ['"', "\\", "/", "a", '"file://', '\\"', "\\n", "\n", "é"]
    texts += ["".join(parts) for size in range(5) for parts in itertools.product(pieces, repeat=size)]
    assert [objects._FOLDER_OF_FILE.sub('"', text) for text in texts] == [reference.sub('"', text) for text in texts]
    assert objects._FOLDER_OF_FILE.sub('"', texts[1]) == '{"FaceURL": "f.jpg", "Name": "x//my \\"games\\"/b"}'


def test_an_objects_memo_hashes_its_whole_text_by_blocks_though_its_cards_texts_are_kept(monkeypatch) -> None:
    """The Memo's text is put together from each contained object's own text (kept between builds by a watch:
    `objects.kept_text`), placed where json.dumps puts the list: the same text as the whole object's, file:///
    folders taken out, in a process that builds again or not, and for a deck whose text holds the list's mark; the
    Memo, the hash of that text with each block of MEMO_BLOCK objects' texts replaced by their own digest (the last
    build's for the same objects: `storage.derived`; its objects tagged), as made anew, the objects changed or
    not, another for each change and the first again when the change is undone; so for a change of the deck's
    DeckIDs (written apart: `_numbers_text`)."""
    import copy
    import hashlib
    import json

    from cardgen.core import storage
    from cardgen.outputs.tts import objects

    def whole(obj: dict) -> str:
        return objects._FOLDER_OF_FILE.sub('"', json.dumps(objects._placeless(obj), sort_keys=True))

    card = {"Name": "Card", "Transform": {"posX": 1.0}, "Description": "Fire «é»", "CardID": 100, "Tags": ["t"],
            "CustomDeck": {"1": {"FaceURL": "file:///out/a/f1.jpg", "BackURL": "file:///out/a/b.jpg"}}}
    deck = {"Name": "DeckCustom", "GUID": "abc123", "Transform": {"posX": 0.0}, "Nickname": "Z deck",
            "CustomDeck": {"1": {"FaceURL": "file:///out/a/f1.jpg"}}, "Memo": "old",
            "ContainedObjects": [card, copy.deepcopy(card), {**card, "Description": "Ice"}],
            "DeckIDs": [10_000_100 + n for n in range(20)]}  # (written apart from the deck's text: `_numbers_text`)
    assert objects._memo_text(deck, {}) == whole(deck)
    storage.keep_for_next_builds()  # (for this test only: see conftest's `builds_once`)
    used: dict = {}
    assert objects._memo_text(deck, used) == whole(deck) and len(used) == 3
    for mark in (objects._CONTAINED, objects._NUMBERS.format("DeckIDs")):
        marked = {**deck, "Nickname": mark}
        assert objects._memo_text(marked, {}) == whole(marked)
    monkeypatch.setattr(objects, "MEMO_BLOCK", 2)

    def by_blocks(obj: dict) -> str:
        texts = [whole(inner) for inner in obj["ContainedObjects"]]
        head, tail = whole(obj).split("[" + ", ".join(texts) + "]")
        digests = [hashlib.sha256(", ".join(texts[i:i + 2]).encode()).digest() for i in range(0, len(texts), 2)]
        return hashlib.sha256(head.encode() + b"[" + b", ".join(digests) + b"]" + tail.encode()).hexdigest()[:16]

    memos = []
    for change in ("", "Frost", "", "Snow", "Fire «é»"):
        if change:
            deck["ContainedObjects"][1] = {**card, "Description": change}  # (the second of a block)
        objects.mark_for_push([deck], "tiny")
        assert deck["Memo"] == by_blocks(deck), change
        assert all(inner["Tags"] == ["cardgen:tiny"] for inner in deck["ContainedObjects"])
        memos.append(deck["Memo"])
    assert memos[0] == memos[-1] and memos[1] == memos[2] and len(set(memos)) == 3
    for number in (10_000_999, True, 2.5, int("10000105")):  # (json.dumps writes a bool or float its own way; the
        deck["DeckIDs"][5] = number  # first number again, another int object)
        objects.mark_for_push([deck], "tiny")
        assert deck["Memo"] == by_blocks(deck), number
        memos.append(deck["Memo"])
    assert memos[-1] == memos[0] and len(set(memos)) == 6


def test_a_boards_jpeg_is_flattened_from_the_card_as_from_its_trimmed_copy(tmp_path) -> None:
    """A transparent token's or board's JPEG is pasted on white straight from the card's pixels (`Component.on_white`,
    no trimmed copy made first): the same file as flattening the trimmed image (`Component.make`), the bleed cut off,
    transparent parts white."""
    from cardgen.outputs.tts.pictures import Component, ExportImage, Source, encode
    from cardgen.raster.render import DrawnCard

    card = Image.linear_gradient("L").resize((300, 200)).convert("RGBA")
    card.putalpha(Image.linear_gradient("L").rotate(90).resize((300, 200)))  # every alpha from 0 to 255
    card.paste((200, 30, 60, 0), (0, 0, 40, 40))  # fully transparent, coloured: white in the JPEG
    component = Component(Source("h", "board.png", 7))

    def drawn(source: Source) -> DrawnCard:
        return DrawnCard(tmp_path / "board.png", card)

    made = ExportImage(component, False, 92, ("k",)).encoded(tmp_path, drawn)
    assert made == encode(component.make(tmp_path, drawn), False, 92)
    with Image.open(io.BytesIO(made)) as jpeg:
        assert jpeg.size == (286, 186) and jpeg.mode == "RGB"
        assert min(jpeg.getpixel((5, 5))) >= 250


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_a_cover_face_is_the_trimmed_card_shrunk_in_rgba(tmp_path, mode) -> None:
    """The thumbnail's face of a card (opaque, or a token's with transparency) is the card trimmed, made RGBA and
    shrunk into the cover box: shrinking an opaque card first (cheaper) gives the same pixels."""
    from cardgen.outputs.tts.pictures import COVER_FACE_PX, CoverFace, Source
    from cardgen.raster.render import DrawnCard

    size = (400, 560)
    card = Image.merge("RGB", [Image.linear_gradient("L").resize(size), Image.radial_gradient("L").resize(size),
                               Image.linear_gradient("L").rotate(90).resize(size)])
    if mode == "RGBA":
        card.putalpha(Image.radial_gradient("L").rotate(45).resize(size))
    cover = CoverFace(Source("h", "card.png", 12))
    cover.store(tmp_path, DrawnCard(tmp_path / "card.png", card))
    expected = card.crop((12, 12, 388, 548)).convert("RGBA")
    expected.thumbnail(COVER_FACE_PX, Image.Resampling.LANCZOS)
    with Image.open(cover.cache(tmp_path).path(cover.key)) as stored:
        assert stored.mode == "RGBA" and stored.size == expected.size
        assert stored.tobytes() == expected.tobytes()


def test_the_thumbnail_is_made_before_the_export_waits_for_the_backs(mini, tmp_path, monkeypatch) -> None:
    """The backs are drawn last: the thumbnail (faces only) is made before the export waits for them, while they are
    drawn, not after the last card (the tail of a cold build)."""
    from cardgen.outputs.tts import stage

    out_dir, record, _ = mini
    root = out_dir.parent.parent
    fresh = Path(shutil.copytree(out_dir, tmp_path / "out" / "mini", ignore=shutil.ignore_patterns("tts")))
    backs = {back.image for back in record.backs.values()}
    waited: list[str] = []
    made_after: list[int] = []

    def thumbnail(export: object) -> Image.Image:
        made_after.append(len(waited))
        return real(export)

    real = stage.thumbnail
    monkeypatch.setattr(stage, "thumbnail", thumbnail)
    stage.export_tts(load_game(root, "mini"), record, fresh, TTSStage.for_game(load_game(root, "mini")).config,
                     wait=lambda image: waited.append(image))
    assert backs and made_after and set(waited) & backs
    assert not set(waited[:made_after[0]]) & backs  # no back waited for before the thumbnail


def test_an_exports_image_is_the_last_exports_for_the_same_inputs_and_picture_only(mini) -> None:
    """In a process that builds again, `Exporter.save_cached` gives an image of the same inputs and picture (by
    identity, as a kept sheet plan's) the last export's key, name and `ExportImage`; another picture or stem of the
    same inputs gets an image of its own, equal inputs in another list the same name."""
    from cardgen.core import storage
    from cardgen.outputs.tts.exporter import Exporter
    from cardgen.outputs.tts.pictures import Component, Source
    from cardgen.outputs.tts.work import Recipes

    out_dir, record, _ = mini
    options = TTSStage.for_game(load_game(out_dir.parent.parent, "mini")).config
    storage.keep_for_next_builds()  # (for this test only: see conftest's `builds_once`)
    inputs, picture, other = ["a", "b"], Component(Source("h", "x.png", 0)), Component(Source("i", "y.png", 0))

    def saved(*asked: tuple[Component, str, list[str]]) -> list[tuple[str, object]]:
        """The URL and image of each asked for in a new export, which is then kept for the next."""
        recipes = Recipes()
        exporter = Exporter("mini", record, out_dir, out_dir, options, lambda name: name, recipes)
        urls = [exporter.save_cached(*each) for each in asked]
        exporter.image_keys.keep()
        return list(zip(urls, recipes.images.values()))

    (first, image), = saved((picture, "s", inputs))
    again, another, stem, copied = saved((picture, "s", inputs), (other, "s", inputs), (picture, "t", inputs),
                                         (picture, "s", list(inputs)))
    assert again == (first, image)
    assert another[1].picture is other and stem[0] != first and copied[0] == first and copied[1] is not image


def test_a_sheet_is_joined_from_the_cells_its_process_made_not_from_their_files(mini, tmp_path, monkeypatch) -> None:
    """A process (a render worker) joins a sheet from the JPEG cells it made itself as it made them
    (`pictures._MADE`), not read back from the cell cache; each sheet is the one joined from the stored cells."""
    from collections import Counter

    from cardgen.core.storage import Cache
    from cardgen.outputs.tts import pictures

    sheets = _sheet_work(mini, tmp_path)
    out_root, work = sheets.out_root, sheets.work
    pictures._MADE.clear()
    read: list[Path] = []
    read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or read_bytes(self))
    for key, item in work.items():
        item(sheets.card(key))
    monkeypatch.undo()
    images = {image.key: image for item in work.values() for image in map(_sheet_image, item.sheets)}
    assert len(images) >= 4 and all(image.cached(out_root) for image in images.values())
    shown = Counter(slot.key for image in images.values() for slot in set(image.picture.slots)
                    if isinstance(slot, pictures.Cell))  # a cell shown by two sheets is read back by the second
    assert [path for path in read if pictures.CELL_CACHE in path.parts and shown[path.stem] == 1] == []
    pictures._MADE.clear()
    for image in images.values():  # joined again, each cell read from its file
        joined = image.picture.joined(out_root, sheets.card, image.quality)
        assert Cache(out_root, "outputs", image.suffix).path(image.key).read_bytes() == joined


def _sheet_image(sheet):  # type: ignore[no-untyped-def]
    return sheet.image()

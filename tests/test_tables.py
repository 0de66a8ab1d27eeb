"""Exports to other virtual tables (issue 35, "Other tables"): a Tabletop Playground package whose card templates
the published JSON Schema accepts, a playingcards.io room file read back as its importers read it, and Tabletopia's
folders of one-size images. Each is built through the CLI and every file it writes is read back."""
from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from PIL import Image

from cardgen.load.manifest import load_game
from cardgen.options.tables import PcioSpec, PlaygroundSpec, TabletopiaSpec
from cardgen.outputs.pcio import PcioStage
from cardgen.outputs.playground import PlaygroundStage
from cardgen.outputs.stage import StageContext
from cardgen.outputs.tabletopia import TabletopiaStage
from cardgen.record.record import BuildRecord
from tests.conftest import REPO, run_cli, write_game
from tests.example_games import game_copy, shared_build

SCHEMA = json.loads((Path(__file__).parent / "reference" / "tabletop-playground-schema.json").read_text("utf-8"))
Draft7Validator.check_schema(SCHEMA)
CARD_TEMPLATE = Draft7Validator({"$ref": "#/definitions/CardTemplate", "definitions": SCHEMA["definitions"]})
TABLES = "playground: {build: true, dpi: 100}\npcio: {build: true}\ntabletopia: {build: true}\n"
GAMES = ["scrapbots", "battle-builder", "deebz", "adventure", "sams-battle"]


def _schema_errors(template: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in CARD_TEMPLATE.iter_errors(template)]


def _templates(package: Path) -> dict[str, dict[str, Any]]:
    """Every card template of a package, by file name, each checked against the schema."""
    templates = {p.name: json.loads(p.read_text("utf-8")) for p in sorted((package / "Templates").glob("*.json"))}
    for name, template in templates.items():
        assert _schema_errors(template) == [], name
    return templates


def _check_package(package: Path, record: BuildRecord, dpi: int, limit: int = 4096) -> None:
    """Every template valid, its textures there at its grid's size, every card with a copy on the table once per
    copy, sizes in cm."""
    on_table: dict[str, int] = {}
    for template in _templates(package).values():
        front = Image.open(package / "Textures" / template["FrontTexture"])
        columns, rows = template["NumHorizontal"], template["NumVertical"]
        assert front.width % columns == 0 and front.height % rows == 0
        cell = (front.width // columns, front.height // rows)
        assert len(template["CardNames"]) <= columns * rows and max(template["Indices"]) < len(template["CardNames"])
        assert template["HiddenIndex"] == (-3 if "BackTexture" in template else -1)  # hidden in hand: the back
        if "BackTexture" in template:
            back = Image.open(package / "Textures" / template["BackTexture"])
            assert back.size == (cell if template["BackIndex"] == -2 else front.size)
        for slot, card_id in template["CardMetadata"].items():
            card = next(c for c in record.cards if c.id == card_id and c.name == template["CardNames"][slot])
            assert template["Indices"].count(int(slot)) == card.copies
            size_cm = (card.size_mm.width / 10, card.size_mm.height / 10)
            assert (template["Width"], template["Height"]) == pytest.approx(size_cm)
            on_table[f"{card.deck}/{card.id}"] = card.copies
            deck = record.decks[card.deck]
            scale = min(dpi, deck.dpi) / 25.4
            expected = (round(deck.size_mm.width * scale), round(deck.size_mm.height * scale))
            assert cell == expected if max(expected) <= limit else max(cell) <= limit  # shrunk to fit: a board
            assert max(front.size) <= limit
    assert on_table == {f"{c.deck}/{c.id}": c.copies for c in record.cards if c.copies}


def _read_room(path: Path) -> tuple[list[dict[str, Any]], zipfile.ZipFile]:
    """The widgets of a .pcio room and the ZIP, checked as virtualtabletop.io's importer reads them."""
    room = zipfile.ZipFile(path)
    widgets = json.loads(room.read("widgets.json"))
    by_id = {w["id"]: w for w in widgets}
    assert len(by_id) == len(widgets)  # ids are unique
    referenced = set()
    for deck in (w for w in widgets if w["type"] == "cardDeck"):
        assert by_id[deck["parent"]]["type"] == "cardPile"
        values = [o["value"] for face in ("faceTemplate", "backTemplate") for o in deck[face]["objects"]
                  if o["valueType"] == "static"]
        values += [v for fields in deck["cardTypes"].values() for k, v in fields.items() if k != "label"]
        for value in values:
            assert value.startswith("package://userassets/"), value
            referenced.add(value.removeprefix("package://"))
        for face in ("faceTemplate", "backTemplate"):
            for obj in deck[face]["objects"]:  # a dynamic value names a field every card type has
                assert obj["valueType"] == "static" or all(obj["value"] in f for f in deck["cardTypes"].values())
    for card in (w for w in widgets if w["type"] == "card"):
        assert card["cardType"] in by_id[card["deck"]]["cardTypes"] and by_id[card["parent"]]["type"] == "cardPile"
    assets = {name for name in room.namelist() if name.startswith("userassets/")}
    assert assets == referenced  # every image named is there, every image there is named
    for name in assets:
        assert room.getinfo(name).file_size < 2 * 1024 * 1024  # the importer's bound
        Image.open(io.BytesIO(room.read(name))).verify()
    return widgets, room


def test_scrapbots_on_three_tables_every_file_read_back(tmp_path: Path) -> None:
    root = game_copy(tmp_path, "scrapbots")
    with (root / "data" / "scrapbots" / "game.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write(TABLES)
    run_cli(root, "build", "scrapbots")
    out = root / "output" / "scrapbots"
    record = BuildRecord.read(out / "build.json")
    _check_package(out / "playground" / "scrapbots", record, 100)
    center = json.loads((out / "playground" / "scrapbots" / "Templates" / "center.cards.json").read_text("utf-8"))
    assert (center["Width"], center["Height"], center["BackIndex"]) == (6.35, 8.89, -2)  # a poker card, one back
    # the texture's first card is Drone's face cut at the trim line: its middle row matches the card image's
    texture = Image.open(out / "playground" / "scrapbots" / "Textures" / "center.faces.png").convert("RGB")
    drone = next(c for c in record.cards if c.name == "Drone")
    image = Image.open(out / drone.face).convert("RGB")
    bleed = drone.bleed_mm / 25.4 * drone.dpi
    for fraction in (0.1, 0.5, 0.9):
        x = fraction * 250
        theirs = image.getpixel((round(bleed + x * 3), round(image.height / 2)))
        ours = texture.getpixel((round(x), 175))
        assert max(abs(a - b) for a, b in zip(theirs, ours)) < 40, (fraction, theirs, ours)

    widgets, _ = _read_room(out / "pcio" / "scrapbots.pcio")
    assert [w["type"] for w in widgets].count("hand") == 1
    for name in record.decks:
        deck = next(w for w in widgets if w["id"] == f"{name}/deck")
        assert set(deck["cardTypes"]) == {c.id for c in record.cards_of(name) if c.copies}
        cards = [w for w in widgets if w["type"] == "card" and w["deck"] == deck["id"]]
        assert len(cards) == sum(c.copies for c in record.cards_of(name))
    center_deck = next(w for w in widgets if w["id"] == "center/deck")
    assert (center_deck["cardWidth"], center_deck["cardHeight"]) == (114, 160)  # a poker card in room pixels
    face = Image.open(io.BytesIO(zipfile.ZipFile(out / "pcio" / "scrapbots.pcio").read(f"userassets/{drone.face}")))
    assert face.size == (375, 525)  # 150 DPI, no bleed

    rows = list(csv.DictReader((out / "tabletopia" / "components.csv").open(encoding="utf-8")))
    assert sorted(r["component"] for r in rows) == sorted(c.name for c in record.cards if c.copies)
    for deck in {r["deck"] for r in rows}:
        files = sorted((out / "tabletopia" / deck).rglob("*.png"))
        sizes = {Image.open(f).size for f in files}
        size_mm = record.decks[deck].size_mm
        assert sizes == {(round(size_mm.width * 10), round(size_mm.height * 10))}  # 10 px per mm, one size a stack
    for row in rows:
        assert row["front"] != row["back"] and (out / "tabletopia" / row["front"]).is_file()
        assert not row["back"] or (out / "tabletopia" / row["back"]).is_file()
        assert int(row["copies"]) == next(c.copies for c in record.cards if c.name == row["component"])
    assert {r["back"] for r in rows if r["deck"] == "center"} == {"center/backs/back.png"}  # one back file for the deck


FACE = """\
<svg {{ geo.svg_attrs }}>
  <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#f4ecd8"/>
  {{ text_line(card.name, "10%", "10%", "80%", pt(16)) }}
</svg>
"""
NAMED_BACK = """\
<svg {{ geo.svg_attrs }}>
  <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#2f4858"/>
  {{ text_line(card.name | upper, "10%", "45%", "80%", pt(18), fill="#ffffff", align="center") }}
</svg>
"""


def _many(root: Path, extra: str) -> None:
    rows = "".join(f"Card {n},{0 if n == 7 else 1 + n % 3}\n" for n in range(20))
    manifest = f"title: Many\nfont: Roboto\ndecks:\n  main:\n    source: cards.csv\n    face: face.svg\n" \
               f"    back: back.svg\n{extra}"
    write_game(root, "many", manifest, {"cards.csv": "name,count\n" + rows}, {"face.svg": FACE, "back.svg": NAMED_BACK})


def test_a_deck_over_one_texture_is_split_and_its_own_backs_follow_it(workspace: Path) -> None:
    _many(workspace, "playground: {build: true, dpi: 100, texture_size: 1024}\npcio: {build: true}\n"
                     "tabletopia: {build: true}\n")
    run_cli(workspace, "build", "many")
    out = workspace / "output" / "many"
    record = BuildRecord.read(out / "build.json")
    package = out / "playground" / "many"
    templates = _templates(package)
    # 19 cards with copies (card 7 has none), 250 x 350 px at 100 DPI: 4 x 2 fit in 1024 px, so 8 + 8 + 3
    assert sorted(templates) == ["main.cards-1.json", "main.cards-2.json", "main.cards-3.json"]
    assert [len(t["CardNames"]) for t in templates.values()] == [8, 8, 3]
    assert [t["Name"] for t in templates.values()] == ["Main (1/3)", "Main (2/3)", "Main (3/3)"]
    assert "Card 7" not in {n for t in templates.values() for n in t["CardNames"].values()}
    _check_package(package, record, 100, limit=1024)
    for template in templates.values():
        assert template["BackIndex"] == -3  # the backs texture has each card's back at the face's place
        backs = Image.open(package / "Textures" / template["BackTexture"]).convert("RGB")
        faces = Image.open(package / "Textures" / template["FrontTexture"]).convert("RGB")
        assert backs.size == faces.size == (template["NumHorizontal"] * 250, template["NumVertical"] * 350)
        for slot in range(len(template["CardNames"])):
            x, y = (slot % template["NumHorizontal"]) * 250 + 5, (slot // template["NumHorizontal"]) * 350 + 5
            assert backs.getpixel((x, y)) == (0x2f, 0x48, 0x58) and faces.getpixel((x, y)) == (0xf4, 0xec, 0xd8)
    assert len({t["GUID"] for t in templates.values()}) == 3

    widgets, room = _read_room(out / "pcio" / "many.pcio")
    deck = next(w for w in widgets if w["type"] == "cardDeck")
    assert deck["backTemplate"]["objects"][0] == {**deck["backTemplate"]["objects"][0], "valueType": "dynamic",
                                                  "value": "back"}
    assert all(fields["back"].startswith("package://userassets/backs/") for fields in deck["cardTypes"].values())

    files = sorted(p.relative_to(out / "tabletopia" / "main").as_posix()
                   for p in (out / "tabletopia" / "main").rglob("*.png"))
    assert files == sorted(f"{side}/card-{n}.png" for n in range(20) if n != 7 for side in ("faces", "backs"))


def test_tabletopia_images_stay_within_4000_px_and_a_large_room_is_a_warning(workspace: Path, monkeypatch) -> None:
    manifest = "title: Big\ndpi: 72\nfont: Roboto\ndecks:\n  map:\n    kind: board\n" \
               "    size: {width: 250mm, height: 200mm}\n    source: cards.csv\n    face: face.svg\n"
    write_game(workspace, "big", manifest, {"cards.csv": "name\nMap\n"}, {"face.svg": FACE})
    run_cli(workspace, "build", "big")
    result = run_cli(workspace, "tabletopia", "big", "--px-per-mm", "20")
    assert Image.open(workspace / "output" / "big" / "tabletopia" / "map" / "faces" / "map.png").size == (4000, 3200)
    assert "its cards at 20 px per mm would be 5000 x 4000 px; Tabletopia takes at most 4000 x 4000" in result.output
    assert "--px-per-mm: Input should be less than or equal to 20" in \
        run_cli(workspace, "tabletopia", "big", "--px-per-mm", "50", expect=1).output
    import cardgen.outputs.pcio as pcio

    monkeypatch.setattr(pcio, "MAX_WIDGETS", 3)  # hand, pile, deck and the one card: four
    assert "the playingcards.io room has 4 widgets" in run_cli(workspace, "pcio", "big").output
    widgets, _ = _read_room(workspace / "output" / "big" / "pcio" / "big.pcio")
    assert [w["type"] for w in widgets] == ["hand", "cardPile", "cardDeck", "card"]


@pytest.mark.parametrize("game", GAMES)
def test_every_example_game_exports_what_the_tables_read(game: str, tmp_path_factory, worker_id: str,
                                                         tmp_path: Path) -> None:
    built, _ = shared_build(tmp_path_factory, worker_id, game)
    record = BuildRecord.read(built / "build.json")
    loaded = load_game(REPO, game)
    out = tmp_path / game  # written beside the shared build, never into it; images read from it
    ctx = StageContext(loaded, record, out, out, wait_for=lambda path: built / path if path else None)
    PlaygroundStage(PlaygroundSpec(dpi=40)).run(ctx)
    _check_package(out / "playground" / game, record, 40)
    PcioStage(PcioSpec(dpi=30)).run(ctx)
    _read_room(out / "pcio" / f"{game}.pcio")
    TabletopiaStage(TabletopiaSpec(px_per_mm=2)).run(ctx)
    rows = list(csv.DictReader((out / "tabletopia" / "components.csv").open(encoding="utf-8")))
    assert sum(int(r["copies"]) for r in rows) == sum(c.copies for c in record.cards)
    for row in rows:
        assert all(Image.open(out / "tabletopia" / row[side]).size == (int(row["width_px"]), int(row["height_px"]))
                   for side in ("front", "back") if row[side])


def test_names_that_run_into_each_other_stay_apart(workspace: Path) -> None:
    # deck `a` card `b-1` and deck `a-b` card `1`; a card named `back` beside the deck's back
    manifest = "title: Names\nfont: Roboto\ndecks:\n  a:\n    source: a.csv\n    face: face.svg\n    back: back.svg\n" \
               "  a-b:\n    source: ab.csv\n    face: face.svg\n    back: back.svg\n" + TABLES
    write_game(workspace, "names", manifest, {"a.csv": "name\nB 1\nBack\n", "ab.csv": "name\n1\n"},
               {"face.svg": FACE, "back.svg": NAMED_BACK.replace("card.name | upper", "'X'")})
    run_cli(workspace, "build", "names")
    out = workspace / "output" / "names"
    widgets, _ = _read_room(out / "pcio" / "names.pcio")  # ids unique
    assert sum(w["type"] == "card" for w in widgets) == 3
    tabletopia = sorted(p.relative_to(out / "tabletopia").as_posix() for p in (out / "tabletopia").rglob("*.png"))
    assert tabletopia == ["a-b/backs/back.png", "a-b/faces/1.png", "a/backs/back.png", "a/faces/b-1.png",
                          "a/faces/back.png"]
    _check_package(out / "playground" / "names", BuildRecord.read(out / "build.json"), 100)
    assert len(list((out / "playground" / "names" / "Textures").iterdir())) == 4  # two decks' faces and backs

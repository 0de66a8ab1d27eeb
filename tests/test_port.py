"""Issue 32's port: two small games shaped like a Squib game (YAML lists, Inkscape SVG art as icon and image,
landscape cards, French text) and a nanDeck game (an XLSX, a back per card printing its name, 70 x 99 mm cards
3 x 3 on A4 with zero margin), made from `cardgen init` in an empty folder and built by the installed CLI; the
card pixels, the print PDF's pages, the Tabletop Simulator save and the trimmed PNGs are checked."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pdfplumber
import pytest
from openpyxl import Workbook
from PIL import Image

from tests.test_browser import CHROMIUM, _dom

CARDGEN = Path(sys.executable).parent / "cardgen"
CORPUS = Path(__file__).resolve().parent / "svg_corpus"
MM = 72 / 25.4  # PDF points per millimetre
ORANGE = (224, 122, 0)  # the shield's fill in inkscape-layers.svg (#e07a00)
BROWN = (90, 45, 0)  # the "Loot!" text of inkscape-text.svg (#5a2d00)
WEAPONS = ["Axe", "Bow", "Club", "Dagger", "Epee", "Flail", "Glaive", "Halberd", "Mace", "Pike", "Quarterstaff",
           "Rapier"]


def _cardgen(root: Path, *args: str) -> str:
    """Run the installed `cardgen` in `root`; fail with its output unless it succeeds."""
    result = subprocess.run([str(CARDGEN), *args], cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"cardgen {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def _edit(path: Path, old: str, new: str) -> None:
    """Replace `old` (which must be there) by `new` in a scaffolded file, as a designer's editor would."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


SQUIB_HEROES = """\
- name: Chevalier Éclairé
  cost: 3
  type: Héros
  icon: ecu
  text: "Pare **2 dégâts** :ecu:. Déjà prêt."
  flavor: "« Où est l'épée ? »"
  count: 2
- name: Sorcière des Forêts
  cost: 2
  type: Héros
  image: bouclier.svg
  text: "Pioche une carte ; gagne 1 élan."
"""
SQUIB_MONSTERS = """\
- name: Gargouille Ébréchée
  cost: 4
  type: Monstre
  image: blason.svg
  text: "Ça mord : perd **1 vie**."
- name: Dragon à Crête
  cost: 5
  type: Monstre
  icon: ecu
  text: "Brûle tout. Même l'été."
"""


def _squib_game(root: Path) -> None:
    """Landscape cards from two YAML lists; the Inkscape shield as icons/ecu.svg and as an image, Inkscape text
    as another image."""
    _cardgen(root, "init", "squib", "--size", "poker landscape", "--paper", "a4", "--decks", "heroes,monsters")
    data = root / "data" / "squib"
    for deck, rows in (("heroes", SQUIB_HEROES), ("monsters", SQUIB_MONSTERS)):
        (data / f"{deck}.csv").unlink()
        (data / f"{deck}.yaml").write_text(rows, encoding="utf-8")
        _edit(data / "game.yaml", f"source: {deck}.csv", f"source: {deck}.yaml")
    (root / "icons").mkdir()
    shutil.copy(CORPUS / "inkscape-layers.svg", root / "icons" / "ecu.svg")
    shutil.copy(CORPUS / "inkscape-layers.svg", data / "bouclier.svg")
    shutil.copy(CORPUS / "inkscape-text.svg", data / "blason.svg")


def _nandeck_game(root: Path) -> None:
    """70 x 99 mm cards from an XLSX sheet, a back printing each card's name, 3 x 3 on A4 with no margin."""
    _cardgen(root, "init", "armory", "--size", "70x99mm", "--paper", "a4")
    data = root / "data" / "armory"
    (data / "cards.csv").unlink()
    book = Workbook()
    sheet = book.active
    sheet.title = "Weapons"
    sheet.append(["name", "cost", "type", "icon", "text"])
    for number, name in enumerate(WEAPONS, start=1):
        sheet.append([name, number % 4 + 1, "Weapon", "crossed-swords", f"Deal **{number}** damage."])
    book.save(data / "cards.xlsx")
    _edit(data / "game.yaml", "source: cards.csv", "source: {file: cards.xlsx, sheet: Weapons}")
    with (data / "game.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write("  grid: 3x3\n  margin: 0\ntrimmed: {build: true}\n")
    (root / "templates" / "armory" / "back.svg").write_text(
        '{% extends "cardgen/back.svg" %}\n{% set back_title = card.name %}\n', encoding="utf-8")


@pytest.fixture(scope="module")
def ported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Both games made in one empty folder and built by the installed CLI; the armory build's output."""
    root = tmp_path_factory.mktemp("port")
    _squib_game(root)
    _nandeck_game(root)
    _cardgen(root, "build", "squib", "-j", "1")
    _cardgen(root, "trimmed", "squib", "--dpi", "150")
    return root, _cardgen(root, "build", "armory", "-j", "1")


def _pixels(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


def _share(pixels: np.ndarray, colour: tuple[int, int, int], tolerance: int = 40) -> float:
    """The share of pixels within `tolerance` of `colour` on every channel."""
    return float((np.abs(pixels - np.array(colour)).max(axis=2) <= tolerance).mean())


def _art(pixels: np.ndarray) -> np.ndarray:
    """The art box of cardgen/card.svg (below the title bar, above the type line)."""
    height = pixels.shape[0]
    return pixels[int(height * 0.2):int(height * 0.5)]


def test_squib_cards_draw_the_inkscape_art_as_icon_and_as_image(ported: tuple[Path, str]) -> None:
    cards = ported[0] / "output" / "squib" / "cards"
    files = {name: cards / name for name in ("heroes/chevalier-eclaire.png", "heroes/sorciere-des-forets.png",
                                             "monsters/gargouille-ebrechee.png", "monsters/dragon-a-crete.png")}
    for path in files.values():
        assert Image.open(path).size == (1125, 825)  # poker landscape with bleed at 300 DPI
    icon = _art(_pixels(files["heroes/chevalier-eclaire.png"]))
    image = _art(_pixels(files["heroes/sorciere-des-forets.png"]))
    text = _art(_pixels(files["monsters/gargouille-ebrechee.png"]))
    assert 0.02 < _share(icon, ORANGE) < _share(image, ORANGE)  # the shield, small as icon, covering as image
    assert _share(text, BROWN) > 0.02  # Inkscape's text drawn in its (bundled) font
    rules = _pixels(files["heroes/chevalier-eclaire.png"])[int(825 * 0.6):int(825 * 0.85)]
    assert _share(rules, ORANGE) > 0.0005  # the inline :ecu: in the rules text


def test_squib_pdf_tts_and_trimmed(ported: tuple[Path, str]) -> None:
    out = ported[0] / "output" / "squib"
    with pdfplumber.open(out / "print" / "squib-a4.pdf") as pdf:
        # each deck on its own pages, fronts then backs: 3 heroes, 2 monsters
        assert [len(page.images) for page in pdf.pages] == [3, 3, 2, 2]
        assert all((round(page.width / MM), round(page.height / MM)) == (297, 210) for page in pdf.pages)
    save = json.loads((out / "tts" / "Squib.json").read_text(encoding="utf-8"))
    decks = {deck["Nickname"]: deck for deck in save["ObjectStates"]}
    heroes = decks["Heroes"]
    assert [card["Nickname"] for card in heroes["ContainedObjects"]] == ["Chevalier Éclairé"] * 2 + [
        "Sorcière des Forêts"]
    assert heroes["SidewaysCard"] is True  # landscape cards lie sideways in the hand
    assert all(not deck["UniqueBack"] for deck in heroes["CustomDeck"].values())
    trimmed = sorted(p.relative_to(out / "trimmed").as_posix() for p in (out / "trimmed").rglob("*.png"))
    assert trimmed == ["backs/back.png", "cards/heroes/chevalier-eclaire.png", "cards/heroes/sorciere-des-forets.png",
                       "cards/monsters/dragon-a-crete.png", "cards/monsters/gargouille-ebrechee.png"]
    assert {Image.open(out / "trimmed" / name).size for name in trimmed} == {(525, 375)}  # 88.9 x 63.5 mm, 150 DPI


def test_armory_backs_print_each_card_name(ported: tuple[Path, str]) -> None:
    out = ported[0] / "output" / "armory"
    faces = sorted(p.stem for p in (out / "cards" / "main").glob("*.png"))
    assert faces == sorted(name.lower() for name in WEAPONS)
    backs = {name: _pixels(out / "backs" / "main" / f"{name}.png") for name in faces}
    assert backs["axe"].shape == (1244, 902, 3)  # 70 x 99 mm with 1/8 in bleed at 300 DPI
    differ = np.abs(backs["axe"] - backs["quarterstaff"]).max(axis=2) > 64
    rows = np.nonzero(differ.any(axis=1))[0]
    assert rows.size and rows.min() > 1244 * 0.6  # only the name under the emblem differs
    assert not (out / "backs" / "back.png").exists()


def _placements(path: Path) -> list[list[tuple[int, int]]]:
    """Per page of a PDF, where its card images sit (points from the top-left corner)."""
    with pdfplumber.open(path) as pdf:
        return [sorted((round(im["x0"]), round(im["top"])) for im in page.images) for page in pdf.pages]


SCALE = 4  # px per mm at which a PDF page and a trimmed card are compared


def _slots(page: Image.Image) -> list[np.ndarray]:
    """The nine 70 x 99 mm slots of an A4 page, row by row, each 2 mm in from its cut lines."""
    grey = page.convert("L").resize((210 * SCALE, 297 * SCALE), Image.Resampling.BOX)
    inset = 2 * SCALE
    return [np.asarray(grey.crop((col * 70 * SCALE + inset, row * 99 * SCALE + inset,
                                  (col + 1) * 70 * SCALE - inset, (row + 1) * 99 * SCALE - inset)), dtype=np.int16)
            for row in range(3) for col in range(3)]


def _nearest(slot: np.ndarray, folder: Path) -> str:
    """The trimmed card of `folder` that a slot looks most like (mean grey difference, at the same scale)."""
    inset = 2 * SCALE

    def difference(path: Path) -> float:
        picture = Image.open(path).convert("L").resize((70 * SCALE, 99 * SCALE), Image.Resampling.BOX)
        cut = picture.crop((inset, inset, 70 * SCALE - inset, 99 * SCALE - inset))
        return float(np.abs(slot - np.asarray(cut, dtype=np.int16)).mean())

    return min(sorted(folder.glob("*.png")), key=difference).stem


def test_armory_prints_nine_a_page_at_zero_margin_with_mirrored_backs(ported: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    root, output = ported
    pdf_file = root / "output" / "armory" / "print" / "armory-a4.pdf"
    with pdfplumber.open(pdf_file) as pdf:
        assert [len(page.images) for page in pdf.pages] == [9, 9, 3, 3]
        first = pdf.pages[0]
        assert (round(first.width / MM), round(first.height / MM)) == (210, 297)
        trims = sorted((round(im["x0"] / MM + 3.175, 1), round(im["top"] / MM + 3.175, 1)) for im in first.images)
        assert trims == [(x, y) for x in (0.0, 70.0, 140.0) for y in (0.0, 99.0, 198.0)]  # touching, no margin
    placements = _placements(pdf_file)
    assert placements[1] == placements[0] and placements[3] == placements[2]  # a back in every front's slot
    assert "cards come to 0.0 mm from the edge of the a4 paper" in output
    _cardgen(root, "print", "armory", "--layout", "70x99-3x3-a4", "--out", str(tmp_path / "laid"))
    assert _placements(next((tmp_path / "laid").glob("*.pdf"))) == _placements(pdf_file)  # the bundled layout
    subprocess.run(["pdftoppm", "-r", "100", "-png", "-f", "1", "-l", "2", str(pdf_file), str(tmp_path / "page")],
                   check=True, timeout=120)
    fronts, backs = (_slots(Image.open(tmp_path / f"page-{n}.png")) for n in (1, 2))
    trimmed = root / "output" / "armory" / "trimmed"
    assert Image.open(trimmed / "cards" / "main" / "axe.png").size == (827, 1169)  # 70 x 99 mm at 300 DPI
    ids = [name.lower() for name in WEAPONS[:9]]
    assert [_nearest(slot, trimmed / "cards" / "main") for slot in fronts] == ids
    # long-edge duplex: each card's own back behind it, so the columns of the back page are mirrored
    mirrored = [ids[row * 3 + col] for row in range(3) for col in (2, 1, 0)]
    assert [_nearest(slot, trimmed / "backs" / "main") for slot in backs] == mirrored


def test_armory_tabletop_save_has_a_back_per_card(ported: tuple[Path, str]) -> None:
    tts = ported[0] / "output" / "armory" / "tts"
    save = json.loads((tts / "Armory.json").read_text(encoding="utf-8"))
    deck = save["ObjectStates"][0]
    sheets = list(deck["CustomDeck"].values())
    assert len(sheets) == 1 and sheets[0]["UniqueBack"] is True
    assert sheets[0]["BackURL"] != sheets[0]["FaceURL"]
    back_sheet = Image.open(tts / Path(sheets[0]["BackURL"]).name)
    face_sheet = Image.open(tts / Path(sheets[0]["FaceURL"]).name)
    assert back_sheet.size == face_sheet.size  # a back cell behind every face cell
    assert [card["Nickname"] for card in deck["ContainedObjects"]] == WEAPONS
    assert deck["Transform"]["scaleZ"] == pytest.approx(99 / 88.9, abs=0.01)  # 99 mm tall against a poker card


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
@pytest.mark.parametrize("game, images", [("squib", 4 + 2), ("armory", 12 + 12)])
def test_gallery_loads_every_face_and_back_in_a_browser(ported: tuple[Path, str], tmp_path: Path, game: str,
                                                        images: int) -> None:
    page = _dom((ported[0] / "output" / game / "index.html").as_uri(), tmp_path)
    # squib: 4 faces and its shared back shown in each deck; armory: 12 faces, each with its own back
    assert (page.body.get("data-images-loaded"), page.body.get("data-images-broken")) == (str(images), "")

"""A game in several languages (`languages:`, `cardgen build GAME --lang fr`): each language's cards, PDF and
Tabletop Simulator save, and the findings of a translation at the cell that holds it."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from PIL import Image
from pypdf import PdfReader

from tests.conftest import (
    REPO,
    SIMPLE_BACK,
    SIMPLE_FACE,
    cardgen_running,
    cardgen_serving,
    http_get,
    run_cli,
    wait_for,
    write_game,
)

MANIFEST = """\
    title: Tiny
    font: Roboto Mono
    icons: {scrap: hexagonal-nut}
    languages:
      default: en
      others: [fr]
      glossary:
        Scrap: {fr: Ferraille}
    decks:
      main:
        title: Main Deck
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
    rules:
      - id: alpha-first
        message: "The first card is Alpha (rulebook)"
        where: "power == 1"
        check: "name == 'Alpha'"
"""

CARDS = """\
    name,power,text,name_fr,text_fr
    Alpha,1,Gain 1 Scrap.,Alpha français,Gagnez 1 Ferraille.
    Golem,2,Smash.,Golem,Smash.
    Beta,3,Discard a card.,Bêta,
    Gamma,4,Lose 1 Scrap.,Gamma,Perdez 1 débris.
"""

SHEET_MANIFEST = MANIFEST.replace("      glossary:", "      translations: translations.csv\n      glossary:")

SHEET = """\
    id,column,en,fr
    main,title,Main Deck,Paquet principal
    alpha,name,Alpha,Alpha français
    alpha,text,Gain 1 Scrap.,Gagnez 1 Ferraille.
    beta,name,Beta,Bêta
    gamma,text,Lose 2 Scrap.,Perdez 1 débris.
    golem,text,Smash.,{long}
    delta,name,Delta,Delta
"""

LONG = " ".join(["Écrasez"] * 200)


def _findings(root: Path, *args: str, expect: int = 0) -> list[dict]:
    result = run_cli(root, "validate", "tiny", "--format", "json", *args, expect=expect)
    return json.loads(result.output)["games"]["tiny"]["findings"]


def _at(findings: list[dict], rule: str) -> list[tuple]:
    return [(f["file"], f["row"], f["column"], f["severity"]) for f in findings if f["rule"] == rule]


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


@pytest.fixture
def columns_game(workspace: Path) -> Path:
    """A game translated in name_fr and text_fr columns beside the English ones."""
    write_game(workspace, "tiny", MANIFEST, {"cards.csv": CARDS}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    return workspace


def test_french_build_has_its_own_cards_pdf_and_tts_save(columns_game: Path) -> None:
    run_cli(columns_game, "build", "tiny", "-j", "1")
    run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1")
    english, french = columns_game / "output" / "tiny", columns_game / "output" / "fr" / "tiny"
    alpha_en, alpha_fr = _pixels(english / "cards/main/alpha.png"), _pixels(french / "cards/main/alpha.png")
    assert np.abs(alpha_en - alpha_fr).max() > 100  # other words drawn
    assert np.abs(_pixels(english / "cards/main/golem.png") - _pixels(french / "cards/main/golem.png")).max() <= 2
    record = json.loads((french / "build.json").read_text(encoding="utf-8"))
    names = {card["id"]: card["name"] for card in record["cards"]}
    assert names["alpha"] == "Alpha français" and names["beta"] == "Bêta"
    save = json.loads(next((french / "tts").glob("*.json")).read_text(encoding="utf-8"))
    nicknames = json.dumps(save, ensure_ascii=False)
    assert '"Nickname": "Alpha français"' in nicknames and '"Nickname": "Bêta"' in nicknames
    assert '"Nickname": "Beta"' not in nicknames
    assert len(PdfReader(next((french / "print").glob("*.pdf"))).pages) >= 1
    english_save = next((english / "tts").glob("*.json")).read_text(encoding="utf-8")
    assert '"Nickname": "Beta"' in english_save  # the English build is its own, untouched


def test_french_build_is_current_until_a_translation_changes(columns_game: Path) -> None:
    run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1")
    assert "up to date" in run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1").output
    cards = columns_game / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text(encoding="utf-8").replace("Bêta,", "Bêta bis,"), encoding="utf-8")
    output = run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1").output
    assert "1 drawn" in output and "beta" in output


def test_findings_of_translation_columns_at_their_cell(columns_game: Path) -> None:
    findings = _findings(columns_game, "--lang", "fr", "--no-layout")
    assert _at(findings, "missing-translation") == [("data/tiny/cards.csv", 4, "text", "warning")]
    assert _at(findings, "glossary") == [("data/tiny/cards.csv", 5, "text_fr", "warning")]
    assert not [f for f in findings if f["rule"] in ("alpha-first", "unknown-column")]  # rules read the English
    assert not _findings(columns_game, "--no-layout")  # the English game has none of them


def test_findings_of_a_translation_sheet_at_its_row(workspace: Path) -> None:
    write_game(workspace, "tiny", SHEET_MANIFEST,
               {"cards.csv": CARDS.replace(",name_fr,text_fr", "").replace(",Alpha français,Gagnez 1 Ferraille.", "")
                .replace(",Golem,Smash.", "").replace(",Bêta,", "").replace(",Gamma,Perdez 1 débris.", ""),
                "translations.csv": SHEET.format(long=LONG)},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    findings = _findings(workspace, "--lang", "fr", expect=1)
    sheet = "data/tiny/translations.csv"
    assert sorted(_at(findings, "missing-translation")) == [("data/tiny/cards.csv", 3, "name", "warning"),
                                                            ("data/tiny/cards.csv", 4, "text", "warning"),
                                                            ("data/tiny/cards.csv", 5, "name", "warning")]
    assert _at(findings, "glossary") == [(sheet, 6, "fr", "warning")]
    assert _at(findings, "unknown-translation") == [(sheet, 8, "id", "warning")]
    assert _at(findings, "stale-translation") == [(sheet, 6, "en", "warning")]  # the card says 1 now, not 2
    assert _at(findings, "text-overflow") == [(sheet, 7, "fr", "error")]
    run_cli(workspace, "build", "tiny", "--lang", "fr", "--force", "-j", "1", expect=1)
    pdf = PdfReader(next((workspace / "output" / "fr" / "tiny" / "print").glob("*.pdf")))
    assert "Paquet principal" in pdf.pages[0].extract_text()  # the deck's title, translated


TITLED_BACK = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_line(deck.title ~ " " ~ game.lang, 80, 80, 660, 60, min_size=20) }}
    </svg>
"""


@pytest.fixture
def sheet_game(workspace: Path) -> Path:
    """A game translated in a sheet, whose back prints its deck's title and language."""
    write_game(workspace, "tiny", SHEET_MANIFEST, {"cards.csv": CARDS, "translations.csv": SHEET.format(long="Smash.")},
               {"face.svg": SIMPLE_FACE, "back.svg": TITLED_BACK})
    return workspace


def test_a_deck_title_translated_in_the_sheet_redraws_the_back(sheet_game: Path) -> None:
    run_cli(sheet_game, "build", "tiny", "-j", "1")
    run_cli(sheet_game, "build", "tiny", "--lang", "fr", "-j", "1", expect=0)
    back = sheet_game / "output" / "fr" / "tiny" / "backs" / "back.png"
    before = _pixels(back)
    assert np.abs(_pixels(sheet_game / "output" / "tiny" / "backs" / "back.png") - before).max() > 100
    sheet = sheet_game / "data" / "tiny" / "translations.csv"
    sheet.write_text(sheet.read_text(encoding="utf-8").replace("Paquet principal", "Pioche"), encoding="utf-8")
    run_cli(sheet_game, "build", "tiny", "--lang", "fr", "-j", "1")
    assert np.abs(_pixels(back) - before).max() > 100  # the SVG cache's key holds the translated title


def test_a_render_helper_draws_in_the_language_of_the_check(sheet_game: Path) -> None:
    import cardgen.validate.layout as layout
    from cardgen.svg.context import BuildContext

    inputs = BuildContext.load(sheet_game, "tiny", lang="fr").renderer.inputs
    [(rendered, _)] = layout.render_share(sheet_game, "tiny", inputs, [("back.svg", "main", None)], "fr") or []
    assert rendered is not None and ">principal<" in rendered.svg and ">fr<" in rendered.svg


def _cards(build: Path, key: str) -> dict[str, str]:
    """A value of each card of a build (its name, its image's content hash), by card id."""
    return {card["id"]: card[key] for card in json.loads((build / "build.json").read_text("utf-8"))["cards"]}


def test_print_in_french_draws_the_french_cards(sheet_game: Path) -> None:
    """`print --lang fr` builds the French cards into output/fr/ and prints them there: the PDF's images are named
    by their content hash, the French build's, not the English (alpha's name differs)."""
    run_cli(sheet_game, "build", "tiny", "-j", "1")
    english = _cards(sheet_game / "output" / "tiny", "hash")
    run_cli(sheet_game, "print", "tiny", "--lang", "fr")  # the build's own PDF
    run_cli(sheet_game, "print", "tiny", "--lang", "fr", "--paper", "a4")  # one written by the command
    french = sheet_game / "output" / "fr" / "tiny"
    assert _cards(french, "hash")["alpha"] != english["alpha"]
    pdfs = sorted((french / "print").glob("*.pdf"))
    assert [pdf.name for pdf in pdfs] == ["tiny-a4.pdf", "tiny-letter.pdf"]
    for pdf in pdfs:
        page = PdfReader(pdf).pages[0]
        images = {name.rsplit(".", 1)[1] for name in page["/Resources"]["/XObject"]}
        assert images == set(_cards(french, "hash").values()), pdf.name
        assert "Paquet principal" in page.extract_text()  # the deck's title, translated
    assert not list((sheet_game / "output" / "tiny" / "print").glob("*a4*"))  # the English PDFs as they were


def test_print_in_french_changed_since_a_french_snapshot_prints_only_the_card_edited_in_french(
        columns_game: Path) -> None:
    """`snapshot --lang fr` records the French build apart from the English snapshots; after a French cell is
    edited, `changes --lang fr` names only that card and `print --lang fr --changed-since` prints only it."""
    run_cli(columns_game, "build", "tiny", "-j", "1")
    unbuilt = run_cli(columns_game, "snapshot", "tiny", "v1", "--lang", "fr", expect=1).output
    assert "run `cardgen build tiny --lang fr` first" in unbuilt  # not the English build's command
    run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1")
    run_cli(columns_game, "snapshot", "tiny", "v1")
    run_cli(columns_game, "snapshot", "tiny", "v1", "--lang", "fr")
    snapshots = columns_game / "data" / "tiny" / "snapshots"
    french = json.loads((snapshots / "fr" / "v1.json").read_text(encoding="utf-8"))["cards"]
    assert {c["id"]: c["name"] for c in french}["alpha"] == "Alpha français"  # the French build's record
    english = json.loads((snapshots / "v1.json").read_text(encoding="utf-8"))["cards"]
    assert {c["id"]: c["name"] for c in english}["alpha"] == "Alpha"
    csv = columns_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text(encoding="utf-8").replace("Perdez 1 débris.", "Perdez 1 Ferraille."),
                   encoding="utf-8")
    run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1")
    listed = run_cli(columns_game, "changes", "tiny", "--since", "v1", "--lang", "fr").output
    assert listed.splitlines() == ["tiny (fr) since 'v1': 0 added, 1 changed, 0 removed",
                                   "  ~ gamma: text Perdez 1 débris. -> Perdez 1 Ferraille.; "
                                   "text_fr Perdez 1 débris. -> Perdez 1 Ferraille."]  # the printed text, its cell
    assert "0 changed" in run_cli(columns_game, "changes", "tiny", "--since", "v1").output  # English: as it was
    printed = run_cli(columns_game, "print", "tiny", "--lang", "fr", "--changed-since", "v1").output
    pdf = columns_game / "output" / "fr" / "tiny" / "print" / "tiny-letter-changed-since-v1.pdf"
    assert "~ gamma: text" in printed and str(pdf) in printed
    reader = PdfReader(pdf)
    gamma = _cards(columns_game / "output" / "fr" / "tiny", "hash")["gamma"]
    assert [len(page.images) for page in reader.pages] == [1, 1]  # the changed card's page and its back page
    front = reader.pages[0]
    assert {name.rsplit(".", 1)[1] for name in front["/Resources"]["/XObject"]} == {gamma}  # the French image
    assert front.get_contents().get_data().decode("latin-1").count(" Do") == 1  # drawn once: its one copy
    missing = run_cli(columns_game, "changes", "tiny", "--since", "v0", "--lang", "fr", expect=1).output
    assert "no snapshot 'v0' of tiny in fr; snapshots in fr: v1" in missing


def test_tts_in_french_writes_the_french_save(columns_game: Path) -> None:
    """`tts --lang fr` exports the French build; with options of its own (PNG sheets) it draws the French cards'
    sheet cells again."""
    run_cli(columns_game, "tts", "tiny", "--lang", "fr", "--format", "png")
    tts = columns_game / "output" / "fr" / "tiny" / "tts"
    nicknames = (tts / "Tiny.json").read_text(encoding="utf-8")
    assert '"Nickname": "Alpha français"' in nicknames and '"Nickname": "Bêta"' in nicknames
    assert '"Nickname": "Beta"' not in nicknames
    assert {p.suffix for p in tts.glob("tiny-*")} == {".png"}
    assert not (columns_game / "output" / "tiny").exists()  # nothing built in English


def test_tts_install_in_french_installs_beside_the_english_game(columns_game: Path, tmp_path: Path) -> None:
    """`tts --install` and `tts --lang fr --install` into one Tabletop Simulator folder: each language its own saved
    object ("Tiny (fr)" in the Saved Objects menu) and images, the English one left as it was, either way round."""
    tts_home = tmp_path / "Tabletop Simulator"
    (tts_home / "Saves").mkdir(parents=True)
    run_cli(columns_game, "tts", "tiny", "--install", "--tts-dir", str(tts_home))
    saved_objects = tts_home / "Saves" / "Saved Objects" / "cardgen"
    english = (saved_objects / "Tiny.json").read_text(encoding="utf-8")
    for _ in range(2):  # installing the French again keeps both
        run_cli(columns_game, "tts", "tiny", "--lang", "fr", "--install", "--tts-dir", str(tts_home))
    assert sorted(p.name for p in saved_objects.iterdir()) == ["Tiny (fr).json", "Tiny (fr).png", "Tiny.json",
                                                               "Tiny.png"]
    assert (saved_objects / "Tiny.json").read_text(encoding="utf-8") == english
    french = json.loads((saved_objects / "Tiny (fr).json").read_text(encoding="utf-8"))
    names = json.dumps(french, ensure_ascii=False)
    assert '"Nickname": "Alpha français"' in names and '"Nickname": "Alpha"' not in names
    assert '"Nickname": "Alpha"' in english
    for saved, images in ((json.loads(english), tts_home / "cardgen" / "tiny"),
                          (french, tts_home / "cardgen" / "fr" / "tiny")):
        urls = re.findall(r'"(?:FaceURL|BackURL)": "file://(/[^"]+)"', json.dumps(saved))
        assert urls and all(Path(unquote(url)).parent == images and Path(unquote(url)).is_file() for url in urls)
    run_cli(columns_game, "tts", "tiny", "--install", "--tts-dir", str(tts_home))  # and the English again
    assert sorted(p.name for p in saved_objects.iterdir())[:2] == ["Tiny (fr).json", "Tiny (fr).png"]
    assert all((tts_home / "cardgen" / "fr" / "tiny" / name).is_file() for name in
               (Path(unquote(url)).name for url in re.findall(r'"FaceURL": "file://(/[^"]+)"', json.dumps(french))))


def test_watch_in_french_rebuilds_the_french_output_on_a_save(columns_game: Path) -> None:
    french = columns_game / "output" / "fr" / "tiny"
    with cardgen_running(columns_game, "watch", "tiny", "--lang", "fr", "-j", "1"):
        wait_for((french / "build.json").is_file, "the first French build")
        assert _cards(french, "name")["beta"] == "Bêta"
        cards = columns_game / "data" / "tiny" / "cards.csv"
        cards.write_text(cards.read_text(encoding="utf-8").replace("Bêta,", "Bêta bis,"), encoding="utf-8")
        wait_for(lambda: _cards(french, "name")["beta"] == "Bêta bis", "the French rebuild after the save")
    assert not (columns_game / "output" / "tiny").exists()  # nothing built in English


def test_serve_in_french_serves_the_french_gallery(columns_game: Path) -> None:
    with cardgen_serving(columns_game, "tiny", "--lang", "fr", "-j", "1") as port:
        wait_for(lambda: b"data-built" in http_get(port, "/index.html")[1], "the French gallery")
        page = http_get(port, "/index.html")[1].decode()
    assert 'alt="Alpha français"' in page and 'alt="Bêta"' in page
    assert (columns_game / "output" / "fr" / "tiny" / "index.html").is_file()
    assert not (columns_game / "output" / "tiny").exists()  # nothing built in English


def test_a_language_the_game_does_not_declare(columns_game: Path) -> None:
    output = run_cli(columns_game, "build", "tiny", "--lang", "de", expect=1).output
    assert "data/tiny/game.yaml: error: the game has no language 'de' (it has en, fr)" in output
    assert "Traceback" not in output


def test_scrapbots_in_french_is_complete_and_fits() -> None:
    findings = json.loads(run_cli(REPO, "validate", "scrapbots", "--lang", "fr", "--format", "json").output)
    kinds = {"missing-translation", "glossary", "unknown-translation", "text-overflow", "missing-glyph"}
    assert [f for f in findings["games"]["scrapbots"]["findings"] if f["rule"] in kinds] == []


def test_a_yaml_translation_sheet_with_a_record_missing_a_key(workspace: Path) -> None:
    manifest = SHEET_MANIFEST.replace("translations.csv", "translations.yaml")
    write_game(workspace, "tiny", manifest, {"cards.csv": "name,power,text\nAlpha,1,Gain 1 Scrap.\n",
                                             "translations.yaml": """\
        - {id: main, column: title, fr: Paquet principal}
        - {id: alpha, column: name, fr: Alpha français}
        - {id: alpha, fr: Gagnez 1 Ferraille.}
    """}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    findings = _findings(workspace, "--lang", "fr", "--no-layout")
    assert _at(findings, "missing-translation") == [("data/tiny/cards.csv", 2, "text", "warning")]


def test_the_language_folder_is_cardgens_own(columns_game: Path) -> None:
    mine = columns_game / "output" / "fr"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("my own notes")
    output = run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1", expect=1).output
    assert "was not made by cardgen" in output and (mine / "notes.txt").read_text() == "my own notes"
    (mine / "notes.txt").unlink()
    mine.rmdir()
    run_cli(columns_game, "build", "tiny", "--lang", "fr", "-j", "1")
    run_cli(columns_game, "clean", "--outputs")
    assert not mine.exists()  # removed with every built game


def test_a_translation_sheet_prints_the_games_values(workspace: Path) -> None:
    manifest = SHEET_MANIFEST.replace("    decks:", "    values: {scrap_gain: 1}\n    decks:")
    sheet = SHEET.format(long="Smash.").replace("Gagnez 1 Ferraille.", "Gagnez {scrap_gain} Ferraille.") \
        .replace("beta,name,Beta,Bêta", "beta,name,Beta,Bêta {nope}")
    write_game(workspace, "tiny", manifest, {"cards.csv": CARDS, "translations.csv": sheet},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    findings = _findings(workspace, "--lang", "fr", expect=1)
    assert _at(findings, "unknown-value") == [("data/tiny/translations.csv", 5, "fr", "error")]
    run_cli(workspace, "build", "tiny", "--lang", "fr", "--force", "-j", "1", expect=1)
    record = json.loads((workspace / "output" / "fr" / "tiny" / "build.json").read_text(encoding="utf-8"))
    alpha = next(card for card in record["cards"] if card["id"] == "alpha")
    assert "Gagnez 1 Ferraille." in json.dumps(alpha, ensure_ascii=False)  # the value, not {scrap_gain}


def test_a_list_column_is_translated_as_the_text_it_was_written_as_then_split(workspace: Path) -> None:
    # Scrapbots' lane_names: 'Left Lane;Right Lane' in the sheet's en column, its French in the fr column
    manifest = SHEET_MANIFEST.replace("        text: [text]", "        text: [text]\n        fields: {lanes: list}") \
        .replace("      glossary:", "      columns: [lanes]\n      glossary:")
    lanes = "{% for lane in card.lanes or [] %}<text>[{{ lane }}]</text>{% endfor %}"
    face = SIMPLE_FACE.replace("    </svg>", f"      {lanes}\n    </svg>")
    cards = "\n".join(line + (",lanes" if "name" in line else ",Left;Right" if "Alpha" in line else ",")
                      for line in CARDS.splitlines())
    sheet = SHEET.format(long="Smash.") + "    alpha,lanes,Left;Right,Gauche ; Droite\n"
    write_game(workspace, "tiny", manifest, {"cards.csv": cards, "translations.csv": sheet},
               {"face.svg": face, "back.svg": SIMPLE_BACK})
    run_cli(workspace, "build", "tiny", "--lang", "fr", "--svg", "-j", "1")
    svg = (workspace / "output" / "fr" / "tiny" / "cards" / "main" / "alpha.svg").read_text(encoding="utf-8")
    assert re.findall(r"<text>\[([^]]*)\]</text>", svg) == ["Gauche", "Droite"]
    cards_file = workspace / "data" / "tiny" / "cards.csv"
    cards_file.write_text(cards_file.read_text(encoding="utf-8").replace("Left;Right", "Left;Centre;Right"),
                          encoding="utf-8")
    stale = _at(_findings(workspace, "--lang", "fr"), "stale-translation")
    assert ("data/tiny/translations.csv", 9, "en", "warning") in stale  # the list's text, as the sheet has it

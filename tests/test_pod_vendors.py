"""Print-on-demand vendors (docs/print.md): `cardgen pod GAME --vendor NAME` writes the files each vendor's profile
asks for, read back here: image pixel sizes and bleed (Pillow), quantities (manifest.json, quantities.csv), PDF
pages, their order and boxes, CMYK images, the OutputIntent and PDF/X keys and the total ink (pypdf), a workspace's
own vendor file, and the findings naming a card a vendor would refuse."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from pypdf import PdfReader

from cardgen.options.vendors import BUNDLED_PROFILES
from cardgen.outputs.press import Profile, to_cmyk, total_ink
from cardgen.record.record import BuildRecord
from tests.conftest import run_cli, sample_game
from tests.example_games import REPO

PT_PER_MM = 72 / 25.4
GHOSTSCRIPT = shutil.which("gs")

MANIFEST = """\
    title: Sample
    version: 1
    dpi: 300
    size: poker
    bleed: 0.125in
    font: Roboto Mono
    {top}
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
      {deck}
"""
# A red card with a blue circle in the middle: the bleed shows red, the centre blue.
FACE = ('<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#dd0000"/>'
        '<circle cx="{{ geo.width / 2 }}" cy="{{ geo.height / 2 }}" r="{{ geo.width / 4 }}" fill="#0000dd"/></svg>\n')
CARDS = "name,count\nAlpha,2\nBeta,1\n"


def game(tmp_path: Path, top: str = "", deck: str = "") -> Path:
    """A workspace with the game `s`: a poker deck `main` of Alpha (2 copies) and Beta (1), drawn at 300 DPI."""
    return sample_game(tmp_path, MANIFEST.format(top=top, deck=deck), {"cards.csv": CARDS}, FACE)


def rgb(image: Image.Image, x: int, y: int) -> tuple[int, ...]:
    """A pixel as RGB (CMYK naively converted: enough to tell red, blue and the dark back apart)."""
    return image.convert("RGB").getpixel((x, y))  # type: ignore[return-value]


def near(color: tuple[int, ...], expected: tuple[int, int, int], tolerance: int = 60) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(color, expected))


def rows(folder: Path) -> list[dict]:
    """The export's manifest.json rows, checked to be the same as quantities.csv's."""
    listed = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    with open(folder / "quantities.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [{k: str(v if v is not None else "") for k, v in row.items()} for row in listed] == table
    return listed


def page_image(reader: PdfReader, number: int) -> Image.Image:
    """The one image of a page (1-based), as the PDF holds it."""
    images = reader.pages[number - 1].images
    assert len(images) == 1
    return images[0].image


def test_the_game_crafter_gets_one_png_per_unique_card_and_a_quantity(tmp_path: Path) -> None:
    """docs/print.md: The Game Crafter: 825 x 1125 px per unique card (not per copy), the back, quantities."""
    root = game(tmp_path)
    run_cli(root, "pod", "s", "--vendor", "thegamecrafter")
    folder = root / "output" / "s" / "pod" / "thegamecrafter"
    assert sorted(p.name for p in (folder / "main").iterdir()) == ["001-alpha.png", "002-beta.png", "back.png"]
    for name in ("001-alpha.png", "002-beta.png", "back.png"):
        with Image.open(folder / "main" / name) as image:
            assert image.size == (825, 1125)
            assert near(rgb(image, 412, 562), (0x33, 0x44, 0x55) if name == "back.png" else (0, 0, 221))
            if name != "back.png":
                assert near(rgb(image, 20, 20), (221, 0, 0))  # the bleed is the card's own red
    assert [(r["file"], r["back"], r["id"], r["quantity"]) for r in rows(folder)] == [
        ("main/001-alpha.png", "main/back.png", "alpha", 2), ("main/002-beta.png", "main/back.png", "beta", 1)]


def test_makeplayingcards_has_36_px_of_bleed(tmp_path: Path) -> None:
    """docs/print.md: MakePlayingCards: 36 px bleed at 300 DPI, a poker card is 822 x 1122 px."""
    root = game(tmp_path)
    run_cli(root, "pod", "s", "--vendor", "makeplayingcards")
    folder = root / "output" / "s" / "pod" / "makeplayingcards"
    with Image.open(folder / "main" / "001-alpha.png") as image:
        assert image.size == (822, 1122)
        # The drawing is 825 px wide with its bleed: the circle (206 px in radius) stays centred after the cut.
        assert near(rgb(image, 411 - 196, 561), (0, 0, 221)) and near(rgb(image, 411 + 196, 561), (0, 0, 221))
        assert near(rgb(image, 411 - 216, 561), (221, 0, 0)) and near(rgb(image, 411 + 216, 561), (221, 0, 0))
    assert [r["quantity"] for r in rows(folder)] == [2, 1]


def test_drivethrucards_is_a_cmyk_pdf_x_with_the_back_before_each_front(tmp_path: Path) -> None:
    """docs/print.md: DriveThruCards: one PDF per deck, a page per card side, back then front for every copy, 1/8 in
    bleed (TrimBox inside the BleedBox), CMYK images, at most 240% ink, PDF/X-1a:2003 with its OutputIntent."""
    root = game(tmp_path)
    run_cli(root, "pod", "s", "--vendor", "drivethrucards")
    folder = root / "output" / "s" / "pod" / "drivethrucards"
    reader = PdfReader(folder / "main.pdf")
    assert len(reader.pages) == 6  # Alpha twice and Beta: back and front each
    for number, page in enumerate(reader.pages, 1):
        assert [round(float(v), 2) for v in page.mediabox] == [0, 0, 198, 270]  # 2.75 x 3.75 in
        assert [round(float(v), 2) for v in page.bleedbox] == [0, 0, 198, 270]
        assert [round(float(v), 2) for v in page.trimbox] == [9, 9, 189, 261]  # 1/8 in = 9 pt inside
        image = page_image(reader, number)
        assert image.mode == "CMYK" and image.size == (825, 1125)
        assert total_ink(image) <= 240.5
        expected = (0x33, 0x44, 0x55) if number % 2 else (0, 0, 221)  # odd pages: the back
        assert near(rgb(image, 412, 562), expected), number
        xobject = next(iter(page["/Resources"]["/XObject"].values())).get_object()
        assert xobject["/ColorSpace"] == "/DeviceCMYK" and "/SMask" not in xobject
    assert reader.metadata is not None and reader.metadata["/GTS_PDFXVersion"] == "PDF/X-1a:2003"
    assert reader.metadata["/Trapped"] == "/False" and reader.trailer["/ID"]
    intent = reader.trailer["/Root"]["/OutputIntents"][0].get_object()
    assert intent["/S"] == "/GTS_PDFX" and intent["/OutputConditionIdentifier"] == "FOGRA39"
    profile = intent["/DestOutputProfile"].get_object()
    assert profile["/N"] == 4
    assert profile.get_data() == (BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc").read_bytes()
    assert [(r["id"], r["back_page"], r["front_page"]) for r in rows(folder)] == [
        ("alpha", 1, 2), ("alpha", 3, 4), ("beta", 5, 6)]


def test_mb_print_makes_one_pdf_per_card_format_front_then_back(tmp_path: Path) -> None:
    """docs/print.md: MB Print: 3 mm bleed, one PDF per card format named by it (both poker decks in one), pages
    alternating front then back."""
    root = game(tmp_path, deck="more: {source: more.csv, face: face.svg, back: back.svg}\n"
                               "      small: {source: small.csv, face: face.svg, size: {width: 41mm, height: 63mm}}")
    (root / "data" / "s" / "more.csv").write_text("name,count\nGamma,1\n", encoding="utf-8")
    (root / "data" / "s" / "small.csv").write_text("name,count\nDelta,1\n", encoding="utf-8")
    run_cli(root, "pod", "s", "--vendor", "mbprint")
    folder = root / "output" / "s" / "pod" / "mbprint"
    assert sorted(p.name for p in folder.glob("*.pdf")) == ["41x63.pdf", "63.5x89.pdf"]
    poker = PdfReader(folder / "63.5x89.pdf")
    assert len(poker.pages) == 8  # Alpha twice, Beta, Gamma: front and back each
    width, height = (63.5 + 6) * PT_PER_MM, (88.9 + 6) * PT_PER_MM
    for number, page in enumerate(poker.pages, 1):
        assert abs(float(page.mediabox.width) - width) < 0.1 and abs(float(page.mediabox.height) - height) < 0.1
        assert abs(float(page.trimbox.left) - 3 * PT_PER_MM) < 0.01
        expected = (0, 0, 221) if number % 2 else (0x33, 0x44, 0x55)  # odd pages: the front
        assert near(rgb(page_image(poker, number), 410, 560), expected), number
    small = PdfReader(folder / "41x63.pdf")
    assert len(small.pages) == 1  # no back: the front alone
    assert abs(float(small.pages[0].trimbox.width) - 41 * PT_PER_MM) < 0.1
    profile = poker.trailer["/Root"]["/OutputIntents"][0].get_object()["/DestOutputProfile"].get_object()
    assert profile.get_data() == (BUNDLED_PROFILES / "cardgen-fogra39-tac300.icc").read_bytes()


def test_the_designers_own_profile_is_the_conversion_and_the_output_intent(tmp_path: Path) -> None:
    """docs/print.md: `pod: profile:` names the workspace's CMYK ICC profile: the cards are converted through it and
    it is the PDF's OutputIntent, for every CMYK vendor."""
    root = game(tmp_path, top="pod: {vendor: drivethrucards, profile: profiles/press.icc}")  # one: no list
    (root / "profiles").mkdir()
    shutil.copyfile(BUNDLED_PROFILES / "cardgen-fogra39-tac300.icc", root / "profiles" / "press.icc")
    run_cli(root, "build", "s", "-j", "1")
    reader = PdfReader(root / "output" / "s" / "pod" / "drivethrucards" / "main.pdf")
    profile = reader.trailer["/Root"]["/OutputIntents"][0].get_object()["/DestOutputProfile"].get_object()
    assert profile.get_data() == (root / "profiles" / "press.icc").read_bytes()
    # Converted through it, not through the vendor's 240% profile (which puts less ink into the back).
    back = json.loads((root / "output" / "s" / "build.json").read_text(encoding="utf-8"))["cards"][0]["back"]
    with Image.open(root / "output" / "s" / back) as image:
        ours, vendors = (to_cmyk(image, Profile.read(path)) for path in (root / "profiles" / "press.icc",
                                                             BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc"))
    page = page_image(reader, 1)
    assert ImageChops.difference(page, ours).getbbox() is None
    assert ImageChops.difference(page, vendors).getbbox() is not None
    # A new profile is a new build (the profile is one of the game's settings), and the PDF is made with it.
    shutil.copyfile(BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc", root / "profiles" / "press.icc")
    assert "up to date" not in run_cli(root, "build", "s", "-j", "1").output
    reader = PdfReader(root / "output" / "s" / "pod" / "drivethrucards" / "main.pdf")
    assert ImageChops.difference(page_image(reader, 1), vendors).getbbox() is None



@pytest.mark.skipif(GHOSTSCRIPT is None, reason="Ghostscript's gs is not installed (Debian: ghostscript)")
@pytest.mark.parametrize("vendor, file, limit", [("drivethrucards", "main.pdf", 240), ("mbprint", "63.5x89.pdf", 300)])
def test_ghostscript_prints_the_press_pdfs_in_their_own_cmyk_within_the_ink_limit(tmp_path: Path, vendor: str,
                                                                                  file: str, limit: int) -> None:
    """docs/print.md: Ghostscript, a real PDF interpreter, reads each PDF/X without a complaint and renders every
    page to CMYK pixels equal to the page's image (so the press gets the file's CMYK, not a conversion of its own),
    none over the vendor's ink limit; a black square takes the front near it."""
    face = FACE.replace("</svg>", '<rect width="20mm" height="20mm" fill="#000000"/></svg>')
    root = sample_game(tmp_path, MANIFEST.format(top="", deck=""), {"cards.csv": CARDS}, face)
    run_cli(root, "pod", "s", "--vendor", vendor)
    pdf = root / "output" / "s" / "pod" / vendor / file
    assert GHOSTSCRIPT is not None
    rendered = subprocess.run([GHOSTSCRIPT, "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=tiff32nc", "-r300",
                               f"-sOutputFile={tmp_path / 'page%d.tif'}", str(pdf)],
                              capture_output=True, text=True, timeout=300, check=False)
    assert (rendered.returncode, rendered.stdout, rendered.stderr) == (0, "", "")  # no error, no repair
    reader = PdfReader(pdf)
    assert sorted(p.name for p in tmp_path.glob("page*.tif")) == sorted(f"page{n}.tif" for n in range(1, 7))
    inks = []
    for number in range(1, 7):
        embedded = page_image(reader, number)
        with Image.open(tmp_path / f"page{number}.tif") as page:  # 300 DPI: a pixel of the page per image pixel
            assert page.mode == embedded.mode == "CMYK" and page.size == embedded.size
            assert ImageChops.difference(page, embedded).getbbox() is None, number
            inks.append(total_ink(page))
    assert max(inks) <= limit + 0.5 and max(inks) >= 150

def test_mb_prints_black_is_its_rich_black(tmp_path: Path) -> None:
    """docs/print.md: MB Print's black is its rich black C30 M30 Y0 K100, not the profile's four-ink black; other
    colours go through the profile."""
    face = FACE.replace("</svg>", '<rect width="20mm" height="20mm" fill="#000000"/></svg>')
    root = sample_game(tmp_path, MANIFEST.format(top="", deck=""), {"cards.csv": CARDS}, face)
    run_cli(root, "pod", "s", "--vendor", "mbprint", "--vendor", "drivethrucards")
    mb = page_image(PdfReader(root / "output" / "s" / "pod" / "mbprint" / "63.5x89.pdf"), 1)
    assert mb.getpixel((100, 100)) == (76, 76, 0, 255)  # 30% of 255 rounds to 76
    assert near(mb.getpixel((412, 562)), page_image(PdfReader(root / "output" / "s" / "pod" / "drivethrucards" /
                                                                 "main.pdf"), 2).getpixel((412, 562)), 30)
    dtc = page_image(PdfReader(root / "output" / "s" / "pod" / "drivethrucards" / "main.pdf"), 2)
    assert sum(dtc.getpixel((100, 100))) > 255 * 2  # DriveThruCards has no rich black: the profile's black


WORKSPACE_VENDOR = """\
name: Corner Shop
dpi: 300
bleed: 2mm
sizes:
  poker: {width: 63.5mm, height: 88.9mm}
format: jpeg
files: per-copy
naming: "{deck}-{id}-{copy}"
"""


def test_a_workspace_vendor_file_is_a_new_vendor(tmp_path: Path) -> None:
    """docs/print.md: a workspace's vendors/NAME.yaml is a vendor: its bleed, format, files per copy and naming."""
    root = game(tmp_path, top="pod: {vendor: [cornershop, thegamecrafter]}")
    (root / "vendors").mkdir()
    (root / "vendors" / "cornershop.yaml").write_text(WORKSPACE_VENDOR, encoding="utf-8")
    run_cli(root, "build", "s", "-j", "1")  # the manifest's pod: section turns the export on
    folder = root / "output" / "s" / "pod" / "cornershop"
    assert sorted(p.name for p in folder.glob("*.jpg")) == ["main-alpha-1.jpg", "main-alpha-2.jpg",
                                                            "main-beta-1.jpg"]
    with Image.open(folder / "main-alpha-1.jpg") as image:
        assert image.format == "JPEG" and image.size == (797, 1097)  # (63.5 + 4) x (88.9 + 4) mm at 300 DPI
    assert [r["quantity"] for r in rows(folder)] == [1, 1, 1]
    assert (root / "output" / "s" / "pod" / "thegamecrafter" / "main" / "001-alpha.png").is_file()


def test_ink_above_a_vendors_limit_is_a_finding_naming_the_card(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/print.md: a card whose total ink is over the vendor's limit is a warning naming the card and its row,
    also when the PDF is the cached one."""
    root = game(tmp_path)
    (root / "vendors").mkdir()
    (root / "vendors" / "thin.yaml").write_text(
        "name: Thin Ink\nbleed: 3mm\nsizes: {poker: {width: 63.5mm, height: 88.9mm}}\nformat: pdf\ncolour: cmyk\n"
        "profile: cardgen-fogra39-tac300.icc\nink_limit: 150\norder: fronts\n", encoding="utf-8")
    result = run_cli(root, "pod", "s", "--vendor", "thin")
    assert "data/s/cards.csv:2: warning: card 'alpha': " in result.output
    assert "data/s/cards.csv:3: warning: card 'beta': " in result.output
    assert "ink where Thin Ink allows 150%" in result.output
    pdf = root / "output" / "s" / "pod" / "thin" / "main.pdf"
    assert len(PdfReader(pdf).pages) == 3  # fronts only
    # Again: the PDF and its findings come from the cache, nothing is converted.
    made = pdf.read_bytes()
    monkeypatch.setattr("cardgen.outputs.pod.to_cmyk", lambda *args: pytest.fail("converted again"))
    again = run_cli(root, "pod", "s", "--vendor", "thin")
    assert "data/s/cards.csv:2: warning: card 'alpha': " in again.output and pdf.read_bytes() == made


def test_a_size_the_vendor_does_not_print_and_a_low_dpi_are_findings(tmp_path: Path) -> None:
    """docs/print.md: a deck of a size the vendor does not print is left out with a warning naming its card; a card
    drawn below the vendor's DPI is a warning naming it."""
    root = game(tmp_path, top="sizes: {soft: {preset: poker, dpi: 150}}",
                deck="tokens: {source: more.csv, face: face.svg, size: {width: 20mm, height: 20mm}}\n"
                     "      soft: {source: soft.csv, face: face.svg, size: soft}")
    (root / "data" / "s" / "more.csv").write_text("name,count\nGamma,1\n", encoding="utf-8")
    (root / "data" / "s" / "soft.csv").write_text("name,count\nDelta,1\n", encoding="utf-8")
    result = run_cli(root, "pod", "s", "--vendor", "thegamecrafter")
    assert ("data/s/more.csv:2: warning: card 'gamma': 20 x 20 mm is a size The Game Crafter does not print "
            "(poker: 63.5 x 88.9 mm); the deck 'tokens' is left out of pod/thegamecrafter") in result.output
    assert ("data/s/soft.csv:2: warning: card 'delta': drawn at 150 DPI, below the 300 DPI The Game Crafter "
            "asks for") in result.output
    folder = root / "output" / "s" / "pod" / "thegamecrafter"
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["main", "soft"]
    with Image.open(folder / "soft" / "001-delta.png") as image:
        assert image.size == (825, 1125)  # enlarged to the vendor's size all the same


def test_text_in_a_vendors_unsafe_band_is_a_finding_naming_the_card(tmp_path: Path) -> None:
    """docs/print.md: text laid out within the vendor's safe zone of the trim is a warning naming the card and
    the text; text inside it is not."""
    face = FACE.replace("</svg>", '{{ text_line(card.name, "20mm", card.top, "25mm", "9pt") }}</svg>')
    root = sample_game(tmp_path, MANIFEST.format(top="", deck=""),
                       {"cards.csv": "name,count,top\nAlpha,1,7mm\nBeta,1,30mm\n"}, face)
    result = run_cli(root, "pod", "s", "--vendor", "thegamecrafter", "--vendor", "mbprint")
    # Alpha's top is 7 mm from the image's edge: past The Game Crafter's 1/8 in (3.175 + 3.175 mm), not MB Print's
    # 4 mm (3.175 + 4 mm).
    assert ("data/s/cards.csv:2: warning: card 'alpha': text 'Alpha' is laid out within 4 mm of the trim, where "
            "MB Print may cut") in result.output
    assert "The Game Crafter may cut" not in result.output and "card 'beta'" not in result.output


def test_text_under_a_vendors_smallest_size_is_a_finding_naming_the_card(tmp_path: Path) -> None:
    """docs/print.md: text laid out smaller than the vendor's min_text_pt (6 pt unless its file says otherwise) is a
    warning naming the card, the text and its size, also text a text_box shrank to fit; a vendor file's own
    min_text_pt is used instead."""
    face = FACE.replace("</svg>", '{{ text_line(card.name, "20mm", "30mm", "25mm", card.size) }}'
                                  '{{ text_box(card.rules, "12mm", "50mm", "25mm", "12mm", "9pt", min_size="4pt") }}'
                                  '</svg>')
    long = "a rule far too long for its small box " * 2
    root = sample_game(tmp_path, MANIFEST.format(top="", deck=""), {"cards.csv": (
        f"name,count,size,rules\nAlpha,1,5pt,short\nBeta,1,6pt,short\nGamma,1,9pt,{long}\n")}, face)
    (root / "vendors").mkdir()
    (root / "vendors" / "fine.yaml").write_text(
        "name: Fine Print\nbleed: 0.125in\nmin_text_pt: 4.5\nsizes: {poker: {width: 2.5in, height: 3.5in}}\n"
        "format: png\n", encoding="utf-8")
    result = run_cli(root, "pod", "s", "--vendor", "thegamecrafter", "--vendor", "fine")
    warned = [line for line in result.output.splitlines() if "prints legibly" in line]
    assert warned == [  # one per deck: Alpha's 5 pt name, and Gamma's rules shrunk below 6 pt
        "data/s/cards.csv:2: warning: card 'alpha' (and 1 more card of the deck): text 'Alpha' (5.0 pt) is smaller "
        "than the 6 pt The Game Crafter prints legibly; give it a larger size or min_size, or shorten it so that it "
        "need not shrink"]
    assert "Fine Print" not in result.output  # 4.5 pt: Alpha's 5 pt and the shrunk rules are large enough
    shrunk = BuildRecord.read(root / "output" / "s" / "build.json").cards[2].boxes[1]
    assert shrunk.overflow is False and 4.5 * 300 / 72 <= shrunk.size < 6 * 300 / 72  # Gamma's: between the two


@pytest.mark.parametrize("args, expected", [
    (("--vendor", "nope"), "error: no vendor 'nope'; the vendors are bad, drivethrucards, makeplayingcards, "
                           "mbprint, notcmyk, thegamecrafter (write your own as vendors/nope.yaml)"),
    (("--vendor", "bad"), "vendors/bad.yaml:3: error: sizes: poker: trim + bleed at 300 DPI is 825 x 1125 px, "
                          "not 800 x 1125"),
    (("--profile", "cards.txt", "--vendor", "drivethrucards"), "pod.profile: 'cards.txt' is not an ICC profile"),
    (("--profile", "../outside.icc",), "pod.profile: no file '../outside.icc' in the workspace"),
    (("--vendor", "notcmyk"), "vendors/notcmyk.yaml: error: profile: 'cards.txt' is not an ICC profile"),
])
def test_a_wrong_vendor_or_profile_is_one_line_naming_it(tmp_path: Path, args: tuple[str, ...],
                                                       expected: str) -> None:
    """docs/print.md: an unknown vendor, a vendor file that is wrong, a file that is no ICC profile: one line each,
    nothing written."""
    root = game(tmp_path)
    (root / "vendors").mkdir()
    (root / "vendors" / "bad.yaml").write_text(
        "name: Bad\nbleed: 0.125in\nsizes:\n  poker: {width: 2.5in, height: 3.5in, pixels: [800, 1125]}\n"
        "format: png\n", encoding="utf-8")
    (root / "cards.txt").write_text("not a profile", encoding="utf-8")
    (root / "vendors" / "notcmyk.yaml").write_text(
        "name: Not CMYK\nbleed: 3mm\nsizes: {poker: {width: 63.5mm, height: 88.9mm}}\nformat: pdf\ncolour: cmyk\n"
        "profile: cards.txt\n", encoding="utf-8")
    shutil.copyfile(BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc", root.parent / "outside.icc")  # a real one
    result = run_cli(root, "pod", "s", *args, expect=1)
    assert expected in result.output and "Traceback" not in result.output
    assert not (root / "output").exists()  # checked before the build


def test_the_old_print_pod_switch_still_writes_the_game_crafter_files(tmp_path: Path) -> None:
    """docs/print.md: `print: {pod: true}` (before vendors) is a `pod:` section with its default vendor."""
    root = game(tmp_path, top="print: {pod: true}")
    run_cli(root, "build", "s", "-j", "1")
    assert sorted(p.name for p in (root / "output" / "s" / "pod").iterdir() if not p.name.startswith(".")) == \
        ["thegamecrafter"]


def test_vendors_is_a_source_folder_no_output_goes_into(tmp_path: Path) -> None:
    """README Safety: `--out vendors` (a folder of the workspace's own files) is refused before anything is written."""
    root = game(tmp_path)
    (root / "vendors").mkdir()
    result = run_cli(root, "build", "s", "--out", str(root / "vendors"), expect=1)
    assert "Traceback" not in result.output and list((root / "vendors").iterdir()) == []


@pytest.fixture(scope="module")
def scrapbots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example game scrapbots, built once for the module's tests."""
    root = tmp_path_factory.mktemp("scrapbots") / "ws"
    for folder in ("templates", "data/scrapbots"):
        shutil.copytree(REPO / folder, root / folder)
    run_cli(root, "build", "scrapbots")
    return root


@pytest.mark.parametrize("vendor, file, pages_or_size", [
    ("thegamecrafter", "center/001-drone.png", (825, 1125)),
    ("makeplayingcards", "center/001-drone.png", (822, 1122)),
    ("drivethrucards", "center.pdf", 2 * 64),  # the center deck's 64 cards, back and front
    ("mbprint", "63.5x89.pdf", 2 * 100),  # every poker card of the three decks
])
def test_scrapbots_for_each_vendor(scrapbots: Path, vendor: str, file: str, pages_or_size: object) -> None:
    """README: `cardgen pod scrapbots --vendor NAME` works for every bundled vendor."""
    result = run_cli(scrapbots, "pod", "scrapbots", "--vendor", vendor)
    assert "the deck 'damage' is left out" in result.output  # its 22 mm counters are no vendor's card
    path = scrapbots / "output" / "scrapbots" / "pod" / vendor / file
    if isinstance(pages_or_size, int):
        assert len(PdfReader(path).pages) == pages_or_size
    else:
        with Image.open(path) as image:
            assert image.size == pages_or_size


def test_a_profile_saved_after_the_game_loaded_is_never_used_by_that_build(tmp_path: Path, monkeypatch) -> None:
    """The designer's profile saved (another one) once the game is loaded, before the export reads it: the export
    refuses it (`pod._as_loaded`: the build is keyed by the profile its load found; one read again, converted with and
    keyed by another, would be kept as made of the first), and the next build uses the new profile."""
    import cardgen.outputs.pod

    root = game(tmp_path, top="pod: {vendor: drivethrucards, profile: profiles/press.icc}")
    (root / "profiles").mkdir()
    press = root / "profiles" / "press.icc"
    shutil.copyfile(BUNDLED_PROFILES / "cardgen-fogra39-tac300.icc", press)
    write = cardgen.outputs.pod.write_pod

    def saved_then_written(*args: object) -> object:
        shutil.copyfile(BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc", press)
        return write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cardgen.outputs.pod, "write_pod", saved_then_written)
    result = run_cli(root, "build", "s", "-j", "1", expect=1)
    assert "the ICC profile changed while the build used it" in result.output
    monkeypatch.setattr(cardgen.outputs.pod, "write_pod", write)
    run_cli(root, "build", "s", "-j", "1")
    reader = PdfReader(root / "output" / "s" / "pod" / "drivethrucards" / "main.pdf")
    profile = reader.trailer["/Root"]["/OutputIntents"][0].get_object()["/DestOutputProfile"].get_object()
    assert profile.get_data() == press.read_bytes()

"""The print-and-play PDF of the Scrapbots example, read back with pypdf and pdfplumber."""
from __future__ import annotations

import hashlib
import math
import os
import shutil
from collections import Counter
from pathlib import Path

import pdfplumber
import pypdf
import pytest
from click.testing import CliRunner
from PIL import Image

from cardgen.commands.cli import main
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.imposition import Rect
from cardgen.outputs.pdf import write_print_pdf
from cardgen.record.record import BuildRecord, CardEntry
from tests.conftest import hold_drawing

ROOT = Path(__file__).resolve().parents[1]
PT = 72 / 25.4  # points per mm
LETTER_PT = (612, 792)


@pytest.fixture(scope="module")
def built(built_example: Path) -> Path:
    """The example game's output folder (card PNGs, build.json and the print PDF), from the session's one build."""
    return built_example / "output" / "scrapbots"


@pytest.fixture(scope="module")
def record(built) -> BuildRecord:
    return BuildRecord.read(built / "build.json")


@pytest.fixture(scope="module")
def names(built, record) -> dict[str, str]:
    """Pixel hash -> card id (or 'back'), to tell which card an embedded image is."""
    by_pixels = {_pixels(Image.open(built / c.face)): c.id for c in record.cards}
    for back in record.backs.values():
        by_pixels[_pixels(Image.open(built / back.image))] = "back"
    return by_pixels


@pytest.fixture(scope="module")
def all_letter_pages(built, names) -> list[list[tuple[str, Rect]]]:
    """The images of the PDF the build wrote, page by page."""
    return placed_images(built / "print" / "scrapbots-letter.pdf", names)


@pytest.fixture(scope="module")
def letter_pages(all_letter_pages, record) -> list[list[tuple[str, Rect]]]:
    """The pages of playing cards (fronts and backs); tokens and the board come after them."""
    return all_letter_pages[:2 * _deck_pages(record.cards, 9)]


@pytest.fixture(scope="module")
def few(record) -> list[CardEntry]:
    """A subset of the cards (the two smaller decks: 16 + 20 copies), to keep PDF writing fast."""
    return [c for c in record.cards if c.deck in ("starting", "wounds")]


def _pixels(image: Image.Image) -> str:
    return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


def placed_images(path: Path, names: dict[str, str]) -> list[list[tuple[str, Rect]]]:
    """Per page: (card id or 'back', image rectangle in mm) of every image drawn."""
    reader = pypdf.PdfReader(path)
    which: dict[str, str] = {}
    pages = []
    with pdfplumber.open(path) as pdf:
        for number, page in enumerate(pdf.pages):
            for image in reader.pages[number].images:
                key = image.name.rsplit(".", 1)[0]  # pypdf adds the extension it decodes to
                if key not in which:
                    which[key] = names[_pixels(image.image)]
            pages.append([(which[im["name"]], Rect(im["x0"] / PT, im["y0"] / PT, im["width"] / PT,
                                                             im["height"] / PT)) for im in page.images])
    return pages


def _copies(cards: list[CardEntry]) -> dict[str, int]:
    return {c.id: c.copies for c in cards if c.kind == "card"}


def _deck_pages(cards: list[CardEntry], per_page: int) -> int:
    """Pages of playing cards (tokens and boards are imposed after them, without backs)."""
    decks: Counter[str] = Counter()
    for c in cards:
        if c.kind == "card":
            decks[c.deck] += c.copies
    return sum(math.ceil(n / per_page) for n in decks.values())


def assert_duplex_pairs(paths: list[Path], names: dict[str, str]) -> int:
    """Every file has an even page count; page 2k is the back of page 2k-1, as its footer says and its
    images show: the backs of the front's pieces at their mirrored places, or nothing (a blank back).
    Returns the number of blank back pages."""
    blank = 0
    for path in paths:
        reader = pypdf.PdfReader(path)
        assert len(reader.pages) % 2 == 0, f"{path.name}: {len(reader.pages)} pages"
        pages = placed_images(path, names)
        for k in range(0, len(pages), 2):
            front_text, back_text = (reader.pages[k + i].extract_text() for i in (0, 1))
            assert "· back" not in front_text and "· back" in back_text, (path.name, k + 1)
            width = float(reader.pages[k].mediabox.width) / PT
            front_rects = sorted((round(width - r.right, 1), round(r.y, 1)) for _, r in pages[k])
            if not pages[k + 1]:
                assert "blank" in back_text
                blank += 1
                continue
            assert all(name == "back" for name, _ in pages[k + 1])
            back_rects = sorted((round(r.x, 1), round(r.y, 1)) for _, r in pages[k + 1])
            assert back_rects == front_rects, (path.name, k + 2)
    return blank


def test_duplex_pdf_pairs_every_front_with_its_back_tokens_and_mat_tiles_included(built, record, names):
    path = built / "print" / "scrapbots-letter.pdf"
    # 100 cards on 13 sheets, then the damage tokens and the play mat in 4 tiles, none of which has a back.
    assert assert_duplex_pairs([path], names) == 1 + 4
    assert len(pypdf.PdfReader(path).pages) == 2 * (_deck_pages(record.cards, 9) + 1 + 4)


def test_parts_of_a_long_print_never_split_a_front_from_its_back(built, record, names, few, tmp_path, monkeypatch):
    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 4)
    tokens = record.cards_of("damage")
    result = write_print_pdf(record, built, PrintSpec(), tmp_path / "parts.pdf", cards=tokens + few)
    assert len(result.files) == 3
    assert assert_duplex_pairs(result.files, names) == 1  # the token sheet's blank back


def test_build_writes_a_long_edge_letter_pdf_with_every_copy(built, record, letter_pages):
    reader = pypdf.PdfReader(built / "print" / "scrapbots-letter.pdf")
    assert len(reader.pages) > 2 * _deck_pages(record.cards, 9)  # then the damage tokens and the tiled play mat
    card_pages = reader.pages[:len(letter_pages)]
    assert all(tuple(p.mediabox[2:]) == LETTER_PT for p in card_pages)
    assert all(sorted(p.mediabox[2:]) == sorted(LETTER_PT) for p in reader.pages)  # the mat's tiles: landscape
    pages = letter_pages
    fronts = Counter(name for page in pages[::2] for name, _ in page)
    assert fronts == Counter(_copies(record.cards))
    assert all(name == "back" for page in pages[1::2] for name, _ in page)
    assert [len(p) for p in pages[::2]] == [len(p) for p in pages[1::2]]


def test_cards_sit_on_a_grid_inside_the_margins_without_overlap(record, letter_pages):
    bleed = record.decks["starting"].bleed_mm
    pages = letter_pages
    paper = Rect(0, 0, 215.9, 279.4)
    for page in pages:
        trims = [rect.grow(-bleed) for _, rect in page]  # touching: the bleed is clipped away
        for i, trim in enumerate(trims):
            assert paper.grow(-6.35 + 0.01).contains(trim)
            assert trim.w == pytest.approx(63.5, abs=0.01) and trim.h == pytest.approx(88.9, abs=0.01)
            assert not any(trim.overlaps(other, tol=0.01) for other in trims[i + 1:])
        columns = sorted({round(t.x, 2) for t in trims})
        assert all(b - a == pytest.approx(63.5, abs=0.01) for a, b in zip(columns, columns[1:]))
    full = pages[0]
    assert len(full) == 9
    assert min(r.x for _, r in full) + bleed == pytest.approx((215.9 - 3 * 63.5) / 2, abs=0.01)


def _back_check(path: Path, names: dict, mirror, offset: tuple[float, float]) -> None:
    pages = placed_images(path, names)
    for front, back in zip(pages[::2], pages[1::2]):
        expected = _corners(mirror(rect).shift(*offset) for _, rect in front)
        assert _corners(r for _, r in back) == pytest.approx(expected, abs=0.02)


def _corners(rects) -> list[float]:
    """Lower-left corners in a stable order, flattened for pytest.approx."""
    return [v for r in sorted(rects, key=lambda r: (round(r.x), round(r.y))) for v in (r.x, r.y)]


def test_long_edge_backs_are_mirrored_and_shifted_by_the_offset(built, record, names, few, tmp_path):
    options = PrintSpec(back_offset=(1.5, -0.8))
    path = write_print_pdf(record, built, options, tmp_path / "offset.pdf", cards=few).files[0]
    _back_check(path, names, lambda r: Rect(215.9 - r.right, r.y, r.w, r.h), (1.5, -0.8))


def test_short_edge_backs_reverse_the_rows(built, record, names, few, tmp_path):
    path = write_print_pdf(record, built, PrintSpec(duplex="short-edge"), tmp_path / "short.pdf", cards=few).files[0]
    _back_check(path, names, lambda r: Rect(r.x, 279.4 - r.top, r.w, r.h), (0.0, 0.0))


def test_crop_marks_lie_outside_every_card_and_3mm_from_the_edge(built, record, letter_pages):
    # The grey lines are the cut lines along the trims that cut_lines: auto adds on Letter, where the black crop
    # marks cannot stay out of the printer's band (before, the default drew no cut lines: every line was a mark).
    bleed = record.decks["starting"].bleed_mm
    with pdfplumber.open(built / "print" / "scrapbots-letter.pdf") as pdf:
        for page, images in zip(pdf.pages, letter_pages):
            cards = [rect.grow(-bleed) for _, rect in images]
            lines = [(tuple(line["stroking_color"]) == (0, 0, 0),
                      Rect(line["x0"] / PT, line["y0"] / PT, line["width"] / PT, line["height"] / PT))
                     for line in page.lines]
            marks, cuts = [box for black, box in lines if black], [box for black, box in lines if not black]
            assert marks and cuts
            for box in marks:
                assert not any(box.overlaps(card.grow(0.5)) for card in cards)
                assert Rect(0, 0, 215.9, 279.4).grow(-3 + 0.01).contains(box)
            for card in cards:  # a cut line along each side of each card
                sides = [Rect(card.x, card.y, 0, card.h), Rect(card.right, card.y, 0, card.h),
                         Rect(card.x, card.y, card.w, 0), Rect(card.x, card.top, card.w, 0)]
                assert all(any(_same_box(side, cut) for cut in cuts) for side in sides), card


def _same_box(a: Rect, b: Rect) -> bool:
    return all(abs(u - v) < 0.05 for u, v in zip((a.x, a.y, a.w, a.h), (b.x, b.y, b.w, b.h)))


def test_each_distinct_image_is_embedded_once_without_ascii85(built, record):
    path = built / "print" / "scrapbots-letter.pdf"
    reader = pypdf.PdfReader(path)
    objects = {ref.idnum for page in reader.pages for ref in page["/Resources"].get("/XObject", {}).values()}
    assert len(objects) == len(record.cards) + len(record.backs)  # 17 faces + 1 back for 100 copies
    assert b"ASCII85Decode" not in path.read_bytes()
    assert path.stat().st_size < 30e6


def test_every_page_has_a_footer(built, record):
    reader = pypdf.PdfReader(built / "print" / "scrapbots-letter.pdf")
    total = len(reader.pages)
    for number in (1, 2, total):
        text = reader.pages[number - 1].extract_text()
        assert "Scrapbots v0.3" in text and f"page {number} of {total}" in text
        assert record.built_at[:10] in text
    assert "Starting Decks" in reader.pages[0].extract_text()
    assert "Wounds" in reader.pages[2 * _deck_pages(record.cards, 9) - 1].extract_text()
    assert "Play Mat" in reader.pages[-2].extract_text() and "tile 4 of 4" in reader.pages[-2].extract_text()
    assert "Play Mat" in reader.pages[-1].extract_text() and "back (blank" in reader.pages[-1].extract_text()


def test_duplex_none_gap_spacing_writes_a_separate_backs_pdf(built, record, names, few, tmp_path):
    options = PrintSpec(duplex="none", spacing="gap", paper="a4")
    result = write_print_pdf(record, built, options, tmp_path / "gap.pdf", cards=few)
    fronts, backs = result.files
    assert backs.name == "gap-backs.pdf"
    front_pages, back_pages = placed_images(fronts, names), placed_images(backs, names)
    assert len(front_pages) == len(back_pages) == _deck_pages(few, 6)  # 3 x 2 on landscape A4
    for page in front_pages:
        rects = [r for _, r in page]  # gap: whole images, each with its bleed, apart
        assert not any(a.overlaps(b) for i, a in enumerate(rects) for b in rects[i + 1:])
    assert all(name == "back" for page in back_pages for name, _ in page)


def test_a_subset_of_cards(built, record, names, tmp_path):
    wounds = [c for c in record.cards if c.deck == "wounds"]
    path = write_print_pdf(record, built, PrintSpec(), tmp_path / "subset.pdf", cards=wounds).files[0]
    pages = placed_images(path, names)
    assert Counter(n for page in pages[::2] for n, _ in page) == Counter(_copies(wounds))


def test_jpeg_images_option(built, record, names, tmp_path):
    cards = [c for c in record.cards if c.deck == "wounds"]
    path = write_print_pdf(record, built, PrintSpec(images="jpeg"), tmp_path / "jpg.pdf", cards=cards).files[0]
    assert b"DCTDecode" in path.read_bytes()
    reader = pypdf.PdfReader(path)
    assert sum(len(p.images) for p in reader.pages) == 2 * math.ceil(cards[0].copies / 9)


def test_fold_and_glue_pages(built, record, names, few, tmp_path):
    path = write_print_pdf(record, built, PrintSpec(duplex="fold"), tmp_path / "fold.pdf", cards=few).files[0]
    pages = placed_images(path, names)
    assert len(pages) == _deck_pages(few, 4)
    for page in pages:
        faces = [r for n, r in page if n != "back"]
        backs = [r for n, r in page if n == "back"]
        assert len(faces) == len(backs)
        assert _corners(Rect(279.4 - r.right, r.y, r.w, r.h) for r in faces) == pytest.approx(_corners(backs), abs=0.02)


def _workspace(tmp_path: Path, built: Path) -> Path:
    """A workspace holding the Scrapbots data and its built output, for CLI runs."""
    root = tmp_path / "ws"
    root.mkdir()
    for part in ("data", "templates"):  # the repository's fonts/ and icons/ are cardgen's bundled set
        # A copy, not a link: a game folder that leads outside the project is refused.
        shutil.copytree(ROOT / part, root / part)
    shutil.copytree(built, root / "output" / "scrapbots")
    return root


def test_print_command_flags(tiny_game, tmp_path):
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "print", "tiny", "--paper", "a4", "--duplex",
                                       "short-edge", "--back-offset", "0.5,-0.5", "--no-marks", "--out",
                                       str(tmp_path / "pdf")])
    assert result.exit_code == 0, result.output
    made = tmp_path / "pdf" / "tiny-a4-short-edge-offset0.5x-0.5-no-marks.pdf"  # named after what differs
    reader = pypdf.PdfReader(made)
    assert tuple(round(float(v)) for v in reader.pages[0].mediabox[2:]) == (595, 842)
    with pdfplumber.open(made) as pdf:
        assert not pdf.pages[0].lines


def test_print_command_errors_name_the_flag(built, tmp_path):
    root = _workspace(tmp_path, built)
    result = CliRunner().invoke(main, ["--root", str(root), "print", "scrapbots", "--back-offset", "3"])
    assert result.exit_code == 1
    assert "--back-offset" in result.output and "Traceback" not in result.output


def test_calibration_sheet(tmp_path):
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "calibrate", "--paper", "a4"])
    assert result.exit_code == 0, result.output
    reader = pypdf.PdfReader(tmp_path / "output" / "calibration-a4-long-edge.pdf")
    assert len(reader.pages) == 2
    assert tuple(round(float(v)) for v in reader.pages[0].mediabox[2:]) == (595, 842)
    assert "FRONT" in reader.pages[0].extract_text() and "back_offset" in reader.pages[1].extract_text()


def test_print_section_of_the_manifest_is_checked(tmp_path):
    from cardgen.core.errors import CardgenError
    from cardgen.load.manifest import load_game

    shutil.copytree(ROOT / "data" / "scrapbots", tmp_path / "data" / "scrapbots")
    manifest = tmp_path / "data" / "scrapbots" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("duplex: long-edge", "duplex: sideways"))
    with pytest.raises(CardgenError) as caught:
        load_game(tmp_path, "scrapbots")
    (problem,) = caught.value.problems
    assert problem.message.startswith("print.duplex:") and "long-edge" in problem.message
    assert problem.row == next(n for n, line in enumerate(manifest.read_text().splitlines(), 1) if "sideways" in line)


def test_tokens_keep_their_transparency_and_get_their_back_design(tmp_path):
    (tmp_path / "cards" / "tokens").mkdir(parents=True)
    for name, colour in (("t", (200, 40, 40, 255)), ("b", (40, 40, 200, 255))):
        token = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
        token.paste(colour, (50, 50, 250, 250))
        token.save(tmp_path / "cards" / "tokens" / f"{name}.png")
    size = {"size_mm": {"width": 25.4, "height": 25.4}, "bleed_mm": 0, "dpi": 300,
            "pixels": {"width": 300, "height": 300}}
    card = {"id": "t", "name": "T", "deck": "tokens", "kind": "token", "copies": 30, "face": "cards/tokens/t.png",
            "back": "cards/tokens/b.png", "source": {"file": "t.csv", "row": 2}, "hash": "t" * 32, **size}
    record = BuildRecord.model_validate({
        "cardgen": "test", "built_at": "2026-01-01T00:00:00", "game": {"name": "t", "title": "T", "version": "1"},
        "decks": {"tokens": {"title": "Tokens", "kind": "token", **size}}, "cards": [card],
        "backs": {"b": {"image": "cards/tokens/b.png", "deck": "tokens", "template": "b.svg", "hash": "b" * 32}},
        "stats": {"cards": 1, "copies": 30}})
    path = write_print_pdf(record, tmp_path, PrintSpec(), tmp_path / "tokens.pdf").files[0]
    reader = pypdf.PdfReader(path)
    assert len(reader.pages) == 2  # 30 one-inch tokens fit one Letter page; their backs the next
    for page, colour in zip(reader.pages, ((200, 40, 40), (40, 40, 200))):
        (image,) = page["/Resources"]["/XObject"].values()
        assert "/SMask" in image.get_object()
        (shown,) = page.images
        assert shown.image.convert("RGB").getpixel((150, 150)) == colour


def test_long_prints_are_split_into_files_numbered_across_them(built, record, few, tmp_path, monkeypatch):
    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 4)
    result = write_print_pdf(record, built, PrintSpec(), tmp_path / "long.pdf", cards=few)
    assert [p.name for p in result.files] == ["long-part1of3.pdf", "long-part2of3.pdf", "long-part3of3.pdf"]
    readers = [pypdf.PdfReader(p) for p in result.files]
    assert [len(r.pages) for r in readers] == [4, 4, 2]  # 16 + 20 copies: 2 + 3 front pages, each with its back
    assert "page 5 of 10" in readers[1].pages[0].extract_text()
    assert all(len(page.images) for r in readers for page in r.pages)


class _Helpers:
    """A build's render workers as the print stage gets them (forked now), noting what each file was handed with."""

    def __init__(self, waited: list[str]) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
        self.waited, self.handed = waited, []

    def submit(self, fn, path, volume, *args):  # type: ignore[no-untyped-def]
        images = {slot.image for page in volume.pages for slot in page.slots}
        self.handed.append((path.name, images <= set(self.waited)))
        return self.pool.submit(fn, path, volume, *args)


def test_helpers_write_the_files_of_a_long_print_each_once_its_images_are_drawn(built, record, few, tmp_path,
                                                                                 monkeypatch):
    """With a build's render workers, each file of a long print is handed to them once every image on its pages is
    drawn, and they write the file the build's own process writes (reportlab's invariant mode: no dates)."""
    from reportlab import rl_config

    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(rl_config, "invariant", 1)
    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 4)
    here = write_print_pdf(record, built, PrintSpec(), tmp_path / "here.pdf", cards=few).files
    waited: list[str] = []
    helpers = _Helpers(waited)
    try:
        helped = write_print_pdf(record, built, PrintSpec(), tmp_path / "helped.pdf", cards=few,
                                 wait=lambda image: waited.append(image), helpers=helpers).files  # type: ignore[func-returns-value]
    finally:
        helpers.pool.shutdown()
    assert helpers.handed == [(f"helped-part{n}of3.pdf", True) for n in (1, 2, 3)]
    assert [p.read_bytes() for p in helped] == [p.read_bytes() for p in here]
    assert [len(pypdf.PdfReader(p, strict=True).pages) for p in helped] == [4, 4, 2]


def test_an_error_writing_a_file_in_a_helper_stops_the_print(built, record, few, tmp_path, monkeypatch):
    from concurrent.futures import Future

    import cardgen.outputs.pdf as pdf_module

    class Failing:
        def submit(self, fn, *args):  # type: ignore[no-untyped-def]
            future: Future = Future()
            future.set_exception(OSError(28, "No space left on device"))
            return future

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 4)
    with pytest.raises(OSError, match="No space left"):
        write_print_pdf(record, built, PrintSpec(), tmp_path / "full.pdf", cards=few, helpers=Failing())


def test_card_images_are_embedded_as_their_own_png_data(built, record) -> None:
    """Each RGB card's image stream is its PNG's IDAT data, with parameters every reader applies."""
    from cardgen.outputs.pdf import png_stream

    images = {c.id: built / c.face for c in record.cards if c.kind == "card"}
    images.update({name: built / back.image for name, back in record.backs.items()})
    idat = {png_stream(path)[2]: name for name, path in images.items()}  # type: ignore[index]
    reader = pypdf.PdfReader(built / "print" / "scrapbots-letter.pdf")
    seen = set()
    for page in reader.pages:
        for obj in page["/Resources"].get("/XObject", {}).values():
            image = obj.get_object()
            if image.get("/DecodeParms") is None:
                continue
            # A lone filter is a name: poppler ignores a /DecodeParms dictionary beside a filter array.
            assert image["/Filter"] == "/FlateDecode"
            assert image["/DecodeParms"] == {"/Predictor": 15, "/Colors": 3, "/BitsPerComponent": 8,
                                             "/Columns": image["/Width"]}
            seen.add(idat.get(image._data, "an image not a card's own PNG data"))
    assert seen == set(images)


def test_png_stream_only_reads_plain_rgb_pngs(tmp_path) -> None:
    from cardgen.outputs.pdf import png_stream

    Image.new("RGB", (3, 2), "red").save(tmp_path / "rgb.png")
    Image.new("RGBA", (3, 2), "red").save(tmp_path / "rgba.png")
    Image.new("P", (3, 2)).save(tmp_path / "palette.png")
    (tmp_path / "junk.png").write_bytes(b"not a png")
    width, height, data = png_stream(tmp_path / "rgb.png")  # type: ignore[misc]
    assert (width, height) == (3, 2) and data.startswith(b"\x78")  # a zlib stream
    assert [png_stream(tmp_path / n) for n in ("rgba.png", "palette.png", "junk.png", "none.png")] == [None] * 4


def test_jpeg_images_are_made_while_drawing_and_embedded_as_made(tiny_game, monkeypatch):
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.outputs.print_work import PrintJPEG

    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  images: jpeg\n")
    out = tiny_game / "output"
    jpegs = out / ".cache" / "print-jpeg"
    make, build_process, made_here = PrintJPEG.make, os.getpid(), []

    def make_noting_where(self, picture):
        if os.getpid() == build_process:  # not by the render workers (forked processes)
            made_here.append(self.key)
        return make(self, picture)

    monkeypatch.setattr(PrintJPEG, "make", make_noting_where)
    build_game(tiny_game, "tiny", BuildOptions(out_root=out, jobs=2), None, ["print"])
    assert made_here == [] and len(list(jpegs.rglob("*.jpg"))) == 4  # 3 faces and the back, made by the drawing
    made = {p.read_bytes() for p in jpegs.rglob("*.jpg")}
    [pdf] = (out / "tiny" / "print").glob("*.pdf")
    embedded = {obj.get_object()._data for page in pypdf.PdfReader(pdf).pages
                for obj in page["/Resources"].get("/XObject", {}).values()}
    assert embedded == made


def test_the_print_stage_runs_while_the_cards_are_drawn_and_waits_for_each(tiny_game, monkeypatch):
    """The workers wait until the print stage asks for a card file (it runs beside the drawing and waits for the
    files it embeds as it writes); the PDF holds every card image as drawn."""
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.build.plan import CardFiles

    out = tiny_game / "output"
    seen_go = hold_drawing(monkeypatch, out)
    wait = CardFiles.wait

    def wait_and_let_draw(self, path=None):
        (out / "go").touch()
        return wait(self, path)

    monkeypatch.setattr(CardFiles, "wait", wait_and_let_draw)
    build_game(tiny_game, "tiny", BuildOptions(out_root=out, jobs=2), None, ["print"])
    assert seen_go.read_text() == "True"
    [pdf] = (out / "tiny" / "print").glob("*.pdf")
    embedded = {(image.image.size, image.image.tobytes()) for page in pypdf.PdfReader(pdf).pages
                for image in page.images}
    files = [*(out / "tiny" / "cards").rglob("*.png"), *(out / "tiny" / "backs").glob("*.png")]
    drawn = {(image.size, image.convert("RGB").tobytes()) for image in map(Image.open, files)}
    assert len(drawn) == 4 and embedded == drawn  # 3 faces and the back


def test_tokens_and_boards_are_embedded_from_streams_made_while_drawing(built, record) -> None:
    """Images with an alpha channel (the damage token, the play mat) are embedded from the streams the render
    workers compressed (no file is decoded while writing the PDF): colours exact, a soft mask only where some
    pixel is not opaque."""
    import zlib

    from cardgen.outputs.print_work import MaskedImage

    see_through = {c.hash: c for c in record.cards if c.kind != "card"}
    assert {c.kind for c in see_through.values()} == {"token", "board"}
    embedded = {}
    for page in pypdf.PdfReader(built / "print" / "scrapbots-letter.pdf").pages:
        for obj in page["/Resources"].get("/XObject", {}).values():
            embedded[obj.get_object()._data] = obj.get_object()
    for key, card in see_through.items():
        width, height, colour, alpha = MaskedImage(built.parent, key).streams(built / card.face)  # type: ignore[misc]
        image = embedded[colour]  # the very stream the worker made
        with Image.open(built / card.face) as drawn:
            assert zlib.decompress(colour) == drawn.convert("RGB").tobytes()
            opaque = drawn.getchannel("A").getextrema() == (255, 255)
            assert ("/SMask" in image) is not opaque and (alpha == b"") is opaque
            if not opaque:
                assert zlib.decompress(image["/SMask"].get_object()._data) == drawn.getchannel("A").tobytes()
        assert (image["/Width"], image["/Height"]) == (width, height) == (card.pixels.width, card.pixels.height)


@pytest.mark.parametrize("isal", [True, False], ids=["isal", "zlib"])
def test_masked_streams_are_deflated_by_isal_and_without_it_by_zlib(built, record, tmp_path, isal) -> None:
    """The streams of a card image with transparency are compressed with ISA-L's deflate where the isal wheel is
    installed, and with zlib where it is missing (a platform without the wheel): either way, made in a fresh
    process as a render worker makes them, they inflate to the card's exact colours and alpha."""
    import subprocess
    import sys
    import zlib

    from cardgen.outputs.print_work import MaskedImage

    missing = "" if isal else "sys.modules['isal'] = None\n"  # an import of it fails, as if not installed
    made = ("import sys, zlib\n"
            "from pathlib import Path\n"
            f"{missing}"
            "from PIL import Image\n"
            "from cardgen.outputs import print_work\n"
            "assert (print_work.deflate is zlib.compress) is not (sys.argv[3] == 'isal'), print_work.deflate\n"
            "with Image.open(sys.argv[2]) as picture:\n"
            "    picture.load()\n"
            "    print_work.MaskedImage(Path(sys.argv[1]), 'k').make(picture)\n")
    for card in [c for c in record.cards if c.kind != "card"]:  # the damage token (see-through) and the board
        out = tmp_path / card.id
        subprocess.run([sys.executable, "-c", made, str(out), str(built / card.face), "isal" if isal else "zlib"],
                       check=True)
        with Image.open(built / card.face) as drawn:
            streams = MaskedImage(out, "k").streams(built / "none.png")
            assert streams is not None
            width, height, colour, alpha = streams
            assert (width, height) == drawn.size and zlib.decompress(colour) == drawn.convert("RGB").tobytes()
            opaque = drawn.getchannel("A").getextrema() == (255, 255)
            assert alpha == b"" if opaque else zlib.decompress(alpha) == drawn.getchannel("A").tobytes()


def test_the_render_workers_are_given_the_streams_of_tokens_and_boards_to_make(built, record, tmp_path) -> None:
    from cardgen.options.pdf import PrintSpec
    from cardgen.outputs.pdf import PrintStage
    from cardgen.outputs.print_work import MaskedImage, PrintJPEG

    work = PrintStage(PrintSpec()).card_work(None, record, tmp_path)  # type: ignore[arg-type]
    see_through = {c.hash for c in record.cards if c.kind != "card"}
    assert see_through and {k for k, w in work.items() if isinstance(w, MaskedImage)} == see_through
    jpeg = PrintStage(PrintSpec(images="jpeg")).card_work(None, record, tmp_path)  # type: ignore[arg-type]
    assert {k for k, w in jpeg.items() if isinstance(w, PrintJPEG)} == set(record.image_hashes().values()) - see_through


def test_the_card_work_a_worker_unpickles_imports_nothing_of_the_pipeline(built, record, tmp_path) -> None:
    """The print's and the TTS export's work on card images, as a render worker unpickles it with each job, is
    defined in the modules the registry names as their work (which the workers import as they start), and
    unpickling it in a fresh process imports no manifest, pydantic, Jinja, reportlab or stage: a worker drawing an
    edit's card does not load the whole pipeline again (~0.1 s of CPU)."""
    import pickle
    import subprocess
    import sys

    from cardgen.core.registry import OUTPUTS
    from cardgen.options.pdf import PrintSpec
    from cardgen.options.tts import TTSSpec
    from cardgen.outputs.pdf import PrintStage
    from cardgen.outputs.tts.stage import card_work

    work = {"print": [*PrintStage(PrintSpec(images="jpeg")).card_work(None, record, tmp_path).values()],  # type: ignore[arg-type]
            "tts": [*card_work("scrapbots", record, TTSSpec(), tmp_path).values()]}
    assert all(work.values())
    assert {name: {type(item).__module__ for item in items} for name, items in work.items()} == \
        {name: {OUTPUTS[name].work} for name in work}
    heavy = ["pydantic", "jinja2", "reportlab", "cardgen.load.manifest", "cardgen.record.record",
             "cardgen.outputs.pdf", "cardgen.outputs.tts.stage", "cardgen.svg.context"]
    code = (f"import pickle, sys; work = pickle.loads(sys.stdin.buffer.read()); "
            f"print(len(work), [m for m in {heavy!r} if m in sys.modules])")
    unpickled = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(work), capture_output=True,
                               check=True)
    assert unpickled.stdout.decode().split() == ["2", "[]"]


def test_card_images_are_read_only_while_the_pdf_is_written(tmp_path) -> None:
    """Writing a print PDF reads each card image's data when its object is written, and writes each object to the
    file as it is formatted: memory stays bounded for thousands of cards (no image held from the moment it is
    placed, nor the whole document before it is written)."""
    import os
    import tracemalloc

    (tmp_path / "cards" / "c").mkdir(parents=True)
    size = {"size_mm": {"width": 25.4, "height": 35.56}, "bleed_mm": 0, "dpi": 300,
            "pixels": {"width": 300, "height": 420}}
    cards, total = [], 0
    for n in range(24):  # noise: PNG data as large as the pixels, so the data dominates what is measured
        path = tmp_path / "cards" / "c" / f"{n}.png"
        Image.frombytes("RGB", (300, 420), os.urandom(300 * 420 * 3)).save(path, compress_level=1)
        total += path.stat().st_size
        cards.append({"id": f"c{n}", "name": f"C{n}", "deck": "c", "copies": 1, "face": f"cards/c/{n}.png",
                      "back": None, "source": {"file": "c.csv", "row": n + 2}, "hash": f"{n:032d}", **size})
    record = BuildRecord.model_validate({
        "cardgen": "test", "built_at": "2026-01-01T00:00:00", "game": {"name": "c", "title": "C", "version": "1"},
        "decks": {"c": {"title": "C", **size}}, "cards": cards, "stats": {"cards": 24, "copies": 24}})
    tracemalloc.start()
    try:
        write_print_pdf(record, tmp_path, PrintSpec(), tmp_path / "c.pdf")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tmp_path / "c.pdf").stat().st_size > total
    # written as it is formatted: never the whole document in memory (measured 0.42x; 2.2x when reportlab held
    # the file's pieces, then joined them into one bytes object to write)
    assert peak < 0.6 * total, f"peak {peak / total:.2f}x the images' data"


def test_a_pdf_written_as_it_is_formatted_is_the_file_reportlab_writes_whole(built, record, tmp_path, monkeypatch):
    """The print PDF is written object by object as reportlab formats it (see `test_card_images_are_read_only_
    while_the_pdf_is_written`): byte for byte the file reportlab writes in one go, its cross-reference offsets
    and all (with reportlab's invariant mode, dates and ID are fixed)."""
    import contextlib

    from reportlab import rl_config

    import cardgen.outputs.reportlab_compat as compat

    monkeypatch.setattr(rl_config, "invariant", 1)
    streamed = write_print_pdf(record, built, PrintSpec(), tmp_path / "streamed.pdf").files[0]
    monkeypatch.setattr(compat, "streaming", lambda handle: contextlib.nullcontext())
    whole = write_print_pdf(record, built, PrintSpec(), tmp_path / "whole.pdf").files[0]
    assert streamed.read_bytes() == whole.read_bytes()
    assert len(pypdf.PdfReader(streamed, strict=True).pages) > 1


def test_pages_put_back_from_a_kept_entry_are_the_pages_drawn_and_a_foreign_entry_is_not_used(
        built, record, few, tmp_path, monkeypatch):
    """A PDF written again puts back every page it drew before (nothing drawn) and is the same file; an entry
    whose pages are not what cardgen keeps (other images than the page's, not text) is not used: the pages are
    drawn."""
    from reportlab import rl_config

    import cardgen.outputs.pdf as pdf_module
    from cardgen.core.storage import KeptByGame
    from cardgen.outputs.pdf_update import FILE_KEY

    monkeypatch.setattr(rl_config, "invariant", 1)
    target = tmp_path / "kept-pages.pdf"
    drawn: list[object] = []
    draw_page = pdf_module._draw_page
    monkeypatch.setattr(pdf_module, "_draw_page", lambda pdf, page, images: drawn.append(page) or
                        draw_page(pdf, page, images))
    first = write_print_pdf(record, built, PrintSpec(), target, cards=few).files[0].read_bytes()
    pages = len(drawn)
    assert pages > 2
    drawn.clear()
    assert write_print_pdf(record, built, PrintSpec(), target, cards=few).files[0].read_bytes() == first
    assert drawn == []
    kept = KeptByGame(built.parent, "print-pages", f"{record.game.name}\0{target.name}")
    keys = [key for key in kept.kept if key != FILE_KEY]  # the pages (and where the file's images are)
    assert len(keys) == pages
    foreign = {keys[0]: {**kept.kept[keys[0]], "forms": ["not-an-image"]},
               keys[1]: {**kept.kept[keys[1]], "code": [1, 2]}}
    kept.used = {**kept.kept, **foreign}
    kept.save()
    assert write_print_pdf(record, built, PrintSpec(), target, cards=few).files[0].read_bytes() == first
    assert len(drawn) == 2


def _boxes(path: Path) -> list[tuple[list[float], list[float], list[float]]]:
    """Per page, in mm: its MediaBox, TrimBox and BleedBox as read back by pypdf (x0, y0, x1, y1)."""
    return [tuple([round(float(v) / PT, 2) for v in box] for box in (page.mediabox, page.trimbox, page.bleedbox))
            for page in pypdf.PdfReader(path).pages]


def test_sheets_and_tiles_are_trimmed_at_the_paper_and_a_lone_card_at_its_trim(built, record, names):
    # The build's letter PDF: 9-up sheets, a deck's last sheet holding one card, the token sheet and the mat's tiles.
    path = built / "print" / "scrapbots-letter.pdf"
    bleed = {c.id: c.bleed_mm for c in record.cards} | {"back": record.decks["starting"].bleed_mm}
    paper = Rect(0, 0, 215.9, 279.4)
    lone = 0
    for (media, trim, bleed_box), images in zip(_boxes(path), placed_images(path, names), strict=True):
        whole = len(images) == 1 and paper.contains(card := images[0][1].grow(-bleed[images[0][0]]), tol=0.02)
        if whole:  # touching spacing: the bleed is cut off at the trim, so the BleedBox is the trim
            lone += 1
            assert trim == bleed_box == pytest.approx([card.x, card.y, card.right, card.top], abs=0.02)
        else:  # several cards, a tile of the mat (its image larger than the page) or a blank back
            assert trim == bleed_box == media
    decks = Counter(c.deck for c in record.cards if c.kind == "card" for _ in range(c.copies))
    assert lone == 2 * sum(n % 9 == 1 for n in decks.values()) > 0  # a lone last card's front and back
    raw = pypdf.PdfReader(path).pages[0]
    assert "/TrimBox" in raw and "/BleedBox" in raw  # said on a sheet too, not left to the reader's default


@pytest.mark.parametrize("spacing", ["gap", "touching"])
def test_a_page_of_one_card_has_the_cards_trim_and_bleed_as_its_boxes(built, record, names, tmp_path, spacing):
    wounds = [c for c in record.cards if c.deck == "wounds"]
    options = PrintSpec(grid="1x1", spacing=spacing, back_offset=(1.5, -2.0))
    path = write_print_pdf(record, built, options, tmp_path / "one.pdf", cards=wounds).files[0]
    bleed = wounds[0].bleed_mm
    shown = bleed if spacing == "gap" else 0.0  # touching cuts the bleed off at the trim, so none is printed
    images = placed_images(path, names)
    assert len(images) == 2 * sum(c.copies for c in wounds)  # each front and its back, one a page
    for (_, trim, box_bleed), [(_, image)] in zip(_boxes(path), images):
        card = image.grow(-bleed)  # where the card's image puts its trim (the back's moved by the offset)
        assert trim == pytest.approx([card.x, card.y, card.right, card.top], abs=0.02)
        assert box_bleed == pytest.approx([card.x - shown, card.y - shown, card.right + shown, card.top + shown],
                                          abs=0.02)


_WRITE_PRINT = """
import sys
from pathlib import Path
if sys.argv[3] == "python":
    sys.modules["_rl_accel"] = None  # reportlab then formats with its own Python functions
from reportlab import rl_config
rl_config.invariant = 1  # the same creation date and document ID in both files
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.pdf import write_print_pdf
from cardgen.record.record import BuildRecord
from reportlab.pdfbase import pdfdoc
built = Path(sys.argv[1])
write_print_pdf(BuildRecord.read(built / "build.json"), built, PrintSpec(), Path(sys.argv[2]))
print(pdfdoc.fp_str.__module__)
"""


def test_reportlab_formats_with_its_c_helpers_and_writes_the_same_print_as_without(built, tmp_path):
    """rl-accel (a dependency) makes a print's files cheaper to write (gen1000's: 0.56 -> 0.47 s of CPU); they are the
    same bytes as reportlab's own Python formatting writes."""
    import subprocess
    import sys

    written = {}
    for helpers in ("c", "python"):
        target = tmp_path / f"{helpers}.pdf"
        run = subprocess.run([sys.executable, "-c", _WRITE_PRINT, str(built), str(target), helpers],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        written[helpers] = (run.stdout.strip(), target.read_bytes())
    assert written["c"][0] == "_rl_accel"  # the C helpers are installed and used
    assert written["python"][0] == "reportlab.lib.rl_accel"
    assert written["c"][1] == written["python"][1]

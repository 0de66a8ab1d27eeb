"""An edit that changes only card images updates the print PDF incrementally (ISO 32000-1, 7.5.6): the file the last
build wrote, with a revision appended that holds the new images under the old images' object numbers. It reads
and renders as a cold build's file; anything else (an image two cards share, a file past its growth bounds, a
file changed behind the build's back) is written whole."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
from PIL import Image, ImageChops

from cardgen.build.build import BuildOptions, build_game
from cardgen.outputs import pdf_update, stage_names
from tests.conftest import SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, write_game

GHOSTSCRIPT = shutil.which("gs")
PDF = Path("tiny") / "print" / "tiny-letter.pdf"


def _build(root: Path, out: str = "output", jobs: int = 1) -> bool:
    """Build `tiny` into `root/out`; whether it was up to date."""
    return build_game(root, "tiny", BuildOptions(root / out, jobs=jobs), stages=stage_names()).up_to_date


def _edit(root: Path, old: str, new: str) -> None:
    csv = root / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace(old, new))


def _pages(pdf: Path) -> list[tuple[str, list[tuple[bytes, bytes]]]]:
    """Each page's text and the data of the images it draws, and of their soft masks (whatever their names): what
    the page shows."""
    from pypdf import PdfReader

    def data(image: Any) -> tuple[bytes, bytes]:
        mask = image.get("/SMask")
        return image.get_data(), b"" if mask is None else mask.get_object().get_data()

    reader = PdfReader(pdf, strict=True)
    return [(page.extract_text(), sorted(data(image.get_object())
                                         for image in page["/Resources"].get("/XObject", {}).values()))
            for page in reader.pages]


def _rendered(pdf: Path, folder: Path) -> list[Image.Image]:
    """The pages as Ghostscript renders them (at 40 DPI), which must say nothing (no error, no repair)."""
    assert GHOSTSCRIPT is not None
    folder.mkdir()
    done = subprocess.run([GHOSTSCRIPT, "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=png16m", "-r40",
                           f"-sOutputFile={folder / 'page%d.png'}", str(pdf)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    pages = []
    for number in range(1, len(list(folder.iterdir())) + 1):
        with Image.open(folder / f"page{number}.png") as page:
            pages.append(page.convert("RGB"))
    return pages


def _revisions(pdf: Path) -> int:
    """How many times the file was written: once whole, then once per revision appended."""
    return pdf.read_bytes().count(b"%%EOF")


@pytest.mark.skipif(GHOSTSCRIPT is None, reason="Ghostscript's gs is not installed (Debian: ghostscript)")
@pytest.mark.parametrize("jobs", [1, 2])  # with 2, the render workers write the files of a long print
def test_an_edit_of_a_card_appends_a_revision_that_reads_and_renders_as_a_cold_build(
        tiny_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)  # two images of 10 KB in a file of 60 KB
    if jobs == 2:  # 20 Alphas, a sheet (front and back) per file: three files, NA on the last
        monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)
        _edit(tiny_game, '"quoted",2', '"quoted",20')
    pdf = tiny_game / "output" / (PDF.parent / "tiny-letter-part3of3.pdf" if jobs == 2 else PDF)
    _build(tiny_game, jobs=jobs)
    first = pdf.read_bytes()
    shutil.copy(pdf, tmp_path / "first.pdf")
    drawn: list[str] = []
    draw = pdf_module._draw
    monkeypatch.setattr(pdf_module, "_draw", lambda path, **kw: drawn.append(path.name) or draw(path, **kw))
    for old, new in [("Plain", "Plainer"), ("Plainer", "Plainest")]:  # NA, 3 copies: one image drawn 3 times
        _edit(tiny_game, old, new)
        _build(tiny_game, jobs=jobs)
    assert drawn == []  # no file drawn again: the others kept, NA's updated
    assert pdf.read_bytes().startswith(first) and _revisions(pdf) == 3
    assert _build(tiny_game, jobs=jobs)  # the next build says up to date
    _build(tiny_game, "cold", jobs)
    cold = tiny_game / "cold" / pdf.relative_to(tiny_game / "output")
    assert _pages(pdf) == _pages(cold) != _pages(tmp_path / "first.pdf")  # the same pages, NA's new image
    for mine, theirs in zip(_rendered(pdf, tmp_path / "edited"), _rendered(cold, tmp_path / "cold"), strict=True):
        assert max(high for _, high in ImageChops.difference(mine, theirs).getextrema()) <= 2


def test_the_print_a_watch_updated_is_updated_by_the_next_process_too(tiny_game: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch's update of the file is kept in memory (`KeptByGame.deferred`) and written to the entry once its
    build has reported (`written_later`): a process started after the watch updates the file too, where it found an
    earlier state there and drew the file whole."""
    import threading

    import cardgen.outputs.pdf as pdf_module
    from cardgen.core import storage

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    _build(tiny_game)
    storage.keep_for_next_builds()  # a watch's edits
    for old, new in [("Plain", "Plainer"), ("Plainer", "Plainest")]:
        _edit(tiny_game, old, new)
        _build(tiny_game)
        storage.run_after_rebuild()  # its wait for the next save
    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())  # another process: none of the watch's memory
    for name in ("_KNOWN_ENTRIES", "_DERIVED", "_RUNS", "_SPLICED"):
        monkeypatch.setattr(storage, name, {})
    drawn: list[str] = []
    draw = pdf_module._draw
    monkeypatch.setattr(pdf_module, "_draw", lambda path, **kw: drawn.append(path.name) or draw(path, **kw))
    _edit(tiny_game, "Plainest", "Plain")
    _build(tiny_game)
    assert drawn == [] and _revisions(tiny_game / "output" / PDF) == 4


def test_an_image_two_cards_share_is_not_replaced_for_one_of_them(workspace: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Alpha and Beta look the same (the face shows the text only): reportlab embeds their image once. An edit of
    Alpha writes the file whole (Beta still draws the old image), and so does one that makes Gamma look like them
    (the new image is an object of the file already)."""
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    face = SIMPLE_FACE.replace("{{ text_line(card.name, 80, 80, 600, 60) }}", "")
    write_game(workspace, "tiny", SIMPLE_MANIFEST, {"cards.csv": """\
        name,power,text,count
        Alpha,1,Same,1
        Beta,2,Same,1
        Gamma,3,Other,1
    """}, {"face.svg": face, "back.svg": SIMPLE_BACK})
    pdf = workspace / "output" / PDF
    _build(workspace)
    for old, new, revisions in [("Other", "Another", 2),  # Gamma's own image: appended
                                ("Alpha,1,Same", "Alpha,1,Changed", 1), ("Another", "Same", 1)]:
        _edit(workspace, old, new)
        _build(workspace)
        assert _revisions(pdf) == revisions, new
        shutil.rmtree(workspace / "cold", ignore_errors=True)
        _build(workspace, "cold")
        assert _pages(pdf) == _pages(workspace / "cold" / PDF), new


@pytest.mark.parametrize(("bound", "value"), [("REVISIONS_AT_MOST", 1), ("GROWTH_AT_MOST", 0.25)])
def test_a_file_past_its_growth_bounds_is_written_whole(tiny_game: Path, monkeypatch: pytest.MonkeyPatch,
                                                        bound: str, value: float) -> None:
    """One revision is allowed; with a new image of 10.7 KB in a file of 61.7 KB, a growth of 17%, not two. The file
    written whole is the base of the next revision."""
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    monkeypatch.setattr(pdf_update, bound, value)
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    revisions = []
    for old, new in [("Plain", "Plainer"), ("Plainer", "Plainest"), ("Plainest", "Plain.")]:
        _edit(tiny_game, old, new)
        _build(tiny_game)
        revisions.append(_revisions(pdf))
    assert revisions == [2, 1, 2]
    _build(tiny_game, "cold")
    assert _pages(pdf) == _pages(tiny_game / "cold" / PDF)


def _write_in_place(pdf: Path) -> None:
    """An edit of the file in place, in its middle: its size stays, its time moves."""
    with pdf.open("r+b") as handle:
        handle.seek(pdf.stat().st_size // 2)
        handle.write(b"edited")


def _rewrite_end_keeping_time(pdf: Path) -> None:
    """A change of the file's last bytes (a space in its trailer doubled, a line end dropped), its size and time
    set back as they were."""
    state = pdf.stat()
    data = pdf.read_bytes()
    pdf.write_bytes(data[:-200] + data[-200:].replace(b"\n", b"  ", 1)[:-1])
    os.utime(pdf, ns=(state.st_atime_ns, state.st_mtime_ns))
    assert pdf.stat().st_size == state.st_size


@pytest.mark.parametrize("change", [_write_in_place, _rewrite_end_keeping_time])
def test_a_file_changed_behind_the_builds_back_is_written_whole(tiny_game: Path, monkeypatch: pytest.MonkeyPatch,
                                                                change: Callable[[Path], None]) -> None:
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    change(pdf)
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert _revisions(pdf) == 1
    _build(tiny_game, "cold")
    assert _pages(pdf) == _pages(tiny_game / "cold" / PDF)


def test_a_revision_stopped_while_appended_leaves_the_file_as_it_was(tiny_game: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed while the revision is written: the published file is the previous one, whole, and the next build
    makes the edited one."""
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    before = pdf.read_bytes()

    def killed(*args: object) -> bytes:
        raise KeyboardInterrupt

    revision = pdf_update._revision
    monkeypatch.setattr(pdf_update, "_revision", killed)
    _edit(tiny_game, "Plain", "Plainer")
    with pytest.raises(KeyboardInterrupt):
        _build(tiny_game)
    assert pdf.read_bytes() == before
    monkeypatch.setattr(pdf_update, "_revision", revision)
    _build(tiny_game)
    assert _revisions(pdf) == 2
    _build(tiny_game, "cold")
    assert _pages(pdf) == _pages(tiny_game / "cold" / PDF)


CHIPS = """\
  chips:
    kind: token
    source: chips.csv
    face: chip.svg
    size: {width: 20mm, height: 20mm, bleed: 0}
"""


@pytest.mark.parametrize(("extra", "old", "new", "kind"), [
    ("print:\n  images: jpeg\n", "Plain", "Plainer", "/DCTDecode"),  # the card's JPEG: reportlab's picture image
    ("", "#aa2222", "#22aa22", "/SMask"),  # a round token: its colours and its alpha as a soft mask, two objects
])
def test_a_revision_holds_each_kind_of_image_a_whole_write_embeds(tiny_game: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  extra: str, old: str, new: str, kind: str) -> None:
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("decks:\n", "decks:\n" + CHIPS) + extra)
    (tiny_game / "data" / "tiny" / "chips.csv").write_text("name,color\nRed,#aa2222\nBlue,#2222aa\n")
    (tiny_game / "templates" / "tiny" / "chip.svg").write_text(
        '<svg {{ geo.svg_attrs }}><circle cx="{{ geo.width / 2 }}" cy="{{ geo.height / 2 }}" '
        'r="{{ geo.width / 2 }}" fill="{{ card.color }}"/></svg>')
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    before = pdf.read_bytes()
    for csv in ("cards.csv", "chips.csv"):
        text = (tiny_game / "data" / "tiny" / csv).read_text()
        (tiny_game / "data" / "tiny" / csv).write_text(text.replace(old, new))
    _build(tiny_game)
    assert _revisions(pdf) == 2
    revision = pdf.read_bytes()[len(before):]
    assert revision.count(b" 0 obj") == 1 + (kind == "/SMask") and kind.encode() in revision
    _build(tiny_game, "cold")
    assert _pages(pdf) == _pages(tiny_game / "cold" / PDF)


def test_the_backs_file_of_a_print_without_duplex_gets_its_own_revision(tiny_game: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """With `duplex: none` the backs are a file of their own: a new back (every card's, one image) is a revision of
    that file; the fronts file is kept as it was."""
    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  duplex: none\n")
    fronts, backs = (tiny_game / "output" / PDF.parent / name for name in ("tiny-letter.pdf", "tiny-letter-backs.pdf"))
    _build(tiny_game)
    kept = fronts.stat().st_ino
    back = tiny_game / "templates" / "tiny" / "back.svg"
    back.write_text(back.read_text().replace("#334455", "#554433"))
    _build(tiny_game)
    assert fronts.stat().st_ino == kept and (_revisions(fronts), _revisions(backs)) == (1, 2)
    _build(tiny_game, "cold")
    for pdf in (fronts, backs):
        assert _pages(pdf) == _pages(tiny_game / "cold" / PDF.parent / pdf.name)


def test_where_the_kernel_cannot_copy_the_file_it_is_copied_through_python(tiny_game: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """copy_file_range fails across file systems (and is missing off Linux): the copy is made by reading."""
    import errno

    def across(*args: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    monkeypatch.setattr(os, "copy_file_range", across)
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    first = pdf.read_bytes()
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert pdf.read_bytes().startswith(first) and _revisions(pdf) == 2
    _build(tiny_game, "cold")
    assert _pages(pdf) == _pages(tiny_game / "cold" / PDF)


def test_the_file_is_copied_before_the_new_images_are_waited_for(tiny_game: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy of the file to update is made first, then the new images are waited for and read: in a command that
    builds once (no copy made ahead), the copy is made while the edited card is drawn, not after it."""
    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 1.0)
    pdf = tiny_game / "output" / PDF
    _build(tiny_game)
    events: list[str] = []
    clone, pixels = pdf_update.clone, pdf_module._pixels
    monkeypatch.setattr(pdf_update, "clone", lambda *args: events.append("copy") or clone(*args))
    monkeypatch.setattr(pdf_module, "_pixels", lambda *args: events.append("image") or pixels(*args))
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert events == ["copy", "image"] and _revisions(pdf) == 2


@pytest.mark.parametrize("png", [True, False])  # a card's PNG rows; a token's Flate streams, with a soft mask
def test_a_revision_formats_its_images_byte_for_byte_as_reportlab(png: bool) -> None:
    import io

    from cardgen.outputs import reportlab_compat as rl
    from cardgen.outputs.pdf import _canvas

    canvas = _canvas(io.BytesIO())
    image = (rl.png_image("card", 750, 1050, lambda: [b"x\x9c rows"]) if png
             else rl.flate_image("chip", "DeviceRGB", 236, 236, b"x\x9c rgb"))
    image.name = "card" if png else "chip"
    rl.register_image(canvas, image, rl.xobject_name(canvas, image.name))
    if not png:
        rl.attach_soft_mask(canvas, image, rl.flate_image("chip-alpha", "DeviceGray", 236, 236, b"x\x9c alpha"))
    own = rl.embedded_objects(canvas, image.name)
    theirs = rl.formatted_objects(canvas, dict(zip(own, [12, 345])))
    mine = ({12: pdf_update.image_object(12, 750, 1050, "DeviceRGB", b"x\x9c rows", png=True)} if png else
            {12: pdf_update.image_object(12, 236, 236, "DeviceRGB", b"x\x9c rgb", mask=345),
             345: pdf_update.image_object(345, 236, 236, "DeviceGray", b"x\x9c alpha")})
    assert mine == theirs


def test_an_update_of_images_cardgen_drew_imports_no_reportlab_drawing(tiny_game: Path) -> None:
    """reportlab's canvas (~30 ms to import) is not needed to append a revision of cardgen's own images."""
    import sys

    _build(tiny_game)
    _edit(tiny_game, "Plain", "Plainer")
    script = ("import sys; from pathlib import Path; from cardgen.outputs import pdf_update;"
              "pdf_update.GROWTH_AT_MOST = 1.0; from tests.test_print_update import _build;"
              f"_build(Path({str(tiny_game)!r})); print(sorted(m for m in sys.modules if m.startswith('reportlab.')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True,
                          cwd=Path(__file__).parent.parent)
    assert _revisions(tiny_game / "output" / PDF) == 2
    assert done.stdout.strip() == "[]"


def test_a_state_this_process_kept_is_taken_as_it_is_and_one_read_back_is_checked() -> None:
    """`Written.of`: the state `as_kept` made in this process is its `Written` (not checked again each edit); the
    same state read back from the cache's JSON is checked: the same `Written`, and None once damaged."""
    import json

    written = pdf_update.Written("layout", ["a", "b"], {"a": [10, 20, 5, 0], "b": [10, 20, 6, 7]}, "/Size 9", 120,
                                 900, 1, "tail", 800)
    kept = written.as_kept()
    assert pdf_update.Written.of(kept) is written
    read = json.loads(json.dumps(kept))
    assert read == {**vars(written)} and pdf_update.Written.of(read) == written
    for damage in ({"names": ["a", 2]}, {"objects": {"a": [10, 20, 5]}}, {"size": "900"}):
        assert pdf_update.Written.of({**read, **damage}) is None, damage

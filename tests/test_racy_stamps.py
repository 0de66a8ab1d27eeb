"""load/freshness.py: a source saved just before a build ("racy": its time cannot tell a second same-size save in the
same tick) is stamped with the digest of the bytes the build read of it, so that the next build decides by content,
without running the pipeline, and never takes a save it did not read for what it built."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import cardgen.build.build
import cardgen.core.storage
import cardgen.load.data
from cardgen.build.build import BuildOptions, build_game
from cardgen.core.errors import CardgenError
from cardgen.core.registry import imported
from cardgen.core.storage import note_read, noting_reads
from cardgen.load.freshness import with_read_digests
from cardgen.load.manifest import DataSource
from cardgen.load.sources import READERS, _kept


def _build(root: Path):
    return build_game(root, "tiny", BuildOptions(root / "output", jobs=1))


def _sources(root: Path) -> dict[str, list]:
    return json.loads((root / "output" / "tiny" / "build.json").read_text())["sources"]


def _power(root: Path, name: str) -> int:
    cards = json.loads((root / "output" / "tiny" / "build.json").read_text())["cards"]
    return next(card["fields"]["power"] for card in cards if card["name"] == name)


def _aged(root: Path) -> None:
    """Make the workspace's files ten seconds old: none is racy for the next build."""
    old = time.time() - 10
    for path in root.rglob("*"):
        if path.is_file() and "output" not in path.parts:
            os.utime(path, (old, old))


def _saved_then_built(root: Path) -> Path:
    """Build the game with its files old, save its CSV (a racy file for the next build: just written) and build
    it again; the CSV's path."""
    _aged(root)
    _build(root)
    csv = root / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,5"))
    assert not _build(root).up_to_date
    return csv


def _no_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cardgen.build.build, "plan_build", lambda *a: pytest.fail("planned although nothing changed"))


def test_the_build_after_a_build_right_after_a_save_is_up_to_date(tiny_game: Path, monkeypatch) -> None:
    csv = _saved_then_built(tiny_game)
    stamp = _sources(tiny_game)["data/tiny/cards.csv"]
    assert stamp == [csv.stat().st_size, csv.stat().st_mtime_ns, hashlib.sha256(csv.read_bytes()).hexdigest()]
    _no_planning(monkeypatch)
    assert _build(tiny_game).up_to_date


def test_a_same_size_save_keeping_the_stamped_time_is_built(tiny_game: Path, monkeypatch) -> None:
    csv = _saved_then_built(tiny_game)
    stamped = csv.stat().st_mtime_ns
    csv.write_text(csv.read_text().replace("Alpha,5", "Alpha,7"))  # the same size, and the same time:
    os.utime(csv, ns=(stamped, stamped))  # only the content tells
    assert not _build(tiny_game).up_to_date
    assert _power(tiny_game, "Alpha") == 7


def test_a_save_after_the_build_read_the_file_is_never_taken_as_built(tiny_game: Path, monkeypatch) -> None:
    csv = _saved_then_built(tiny_game)
    read = cardgen.load.data.read_noted

    def read_then_saved(path: Path) -> bytes:
        """The build reads the CSV, then it is saved again (the same size and time) before the build ends."""
        data = read(path)
        stamped = path.stat().st_mtime_ns
        path.write_bytes(data.replace(b"Alpha,6", b"Alpha,8"))
        os.utime(path, ns=(stamped, stamped))
        return data

    csv.write_text(csv.read_text().replace("Alpha,5", "Alpha,6"))
    monkeypatch.setattr(cardgen.load.data, "read_noted", read_then_saved)
    assert not _build(tiny_game).up_to_date
    assert _power(tiny_game, "Alpha") == 6  # what it read
    monkeypatch.undo()
    assert not _build(tiny_game).up_to_date  # the save it did not read is built now
    assert _power(tiny_game, "Alpha") == 8


def test_a_file_read_twice_as_different_contents_or_only_keyed_by_is_stamped_unknown(tmp_path: Path) -> None:
    """Unknown: a file read as two contents, or whose digest only keys something (a font the renders are keyed by,
    which the font book reads too); known: a file read for its use, keyed by the same digest or not."""
    names = ["read", "twice", "keyed", "keyed-read", "keyed-other", "old"]
    racy: dict[str, list] = {name: [8, 1, ""] for name in names}
    racy["old"] = [8, 1]
    with noting_reads() as reads:
        note_read(tmp_path / "read", "one")
        note_read(tmp_path / "twice", "two")
        note_read(tmp_path / "twice", "three")
        note_read(tmp_path / "keyed", "four", whole=False)
        note_read(tmp_path / "keyed-read", "five", whole=False)
        note_read(tmp_path / "keyed-read", "five")
        note_read(tmp_path / "keyed-other", "six", whole=False)
        note_read(tmp_path / "keyed-other", "seven")
    note_read(tmp_path / "read", "after")  # (read outside a build: noted nowhere)
    digests = {name: stamp[2:] for name, stamp in with_read_digests(racy, tmp_path, reads).items()}
    assert digests == {"read": ["one"], "twice": [""], "keyed": [""], "keyed-read": ["five"], "keyed-other": [""],
                       "old": []}


def test_a_process_forked_while_a_build_notes_its_reads_notes_nothing(tmp_path: Path) -> None:
    """A render worker forked during the build (its reads are not the build's; noting them cost CPU for nothing)."""
    with noting_reads() as reads:
        child = os.fork()
        if child == 0:  # (the child: its answer is its exit status)
            note_read(tmp_path / "icon.svg", "one")
            os._exit(0 if cardgen.core.storage._READS.get() is None else 1)
        assert os.waitpid(child, 0)[1] == 0
        note_read(tmp_path / "cards.csv", "two")
    assert list(reads) == [os.path.realpath(tmp_path / "cards.csv")]


@pytest.mark.parametrize("suffix, text", [(".csv", "name\nA\n"), (".json", '[{"name": "A"}]'),
                                          (".yaml", "- name: A\n")])
def test_each_data_reader_notes_the_bytes_it_read(tmp_path: Path, suffix: str, text: str) -> None:
    """A kept table (YAML) is noted whether it was parsed or taken from the user's cache."""
    path = tmp_path / f"cards{suffix}"
    path.write_text(text)
    reader, source = READERS[suffix], DataSource(file=path.name)
    read = functools.partial(_kept, reader) if reader.kept else imported(reader.read)
    for _ in range(2):
        with noting_reads() as reads:
            table = read(path, path.name, source)
        assert [row.values for row in table.rows] == [{"name": "A"}]
        assert reads == {os.path.realpath(path): (hashlib.sha256(text.encode()).hexdigest(), True)}


def test_the_build_after_a_build_right_after_a_template_save_is_up_to_date(tiny_game: Path, monkeypatch) -> None:
    _saved_then_built(tiny_game)
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text() + "\n<!-- edited -->\n")
    assert not _build(tiny_game).up_to_date
    assert len(_sources(tiny_game)["templates/tiny/face.svg"][2]) == 64  # (its digest: the file was racy)
    _no_planning(monkeypatch)
    assert _build(tiny_game).up_to_date


@pytest.mark.parametrize("text", [b"<svg>{{ card.name }}</svg>\r\n<g/>\r", "\ufeff<svg>é</svg>\n".encode()])
def test_the_template_loader_reads_as_jinja_and_notes_the_bytes(tmp_path: Path, text: bytes) -> None:
    """`ProjectLoader.get_source` reads a template itself, to note its bytes: the same source and file name as
    Jinja's own loader gives (its line ends made "\\n", a BOM kept)."""
    import jinja2

    from cardgen.svg.templates import project_environment

    folder = tmp_path / "templates" / "g"
    folder.mkdir(parents=True)
    (folder / "face.svg").write_bytes(text)
    environment = project_environment(tmp_path, folder)
    with noting_reads() as reads:
        mine = environment.loader.get_source(environment, "face.svg")  # type: ignore[union-attr]
    theirs = jinja2.FileSystemLoader([str(folder)]).get_source(environment, "face.svg")
    assert mine[:2] == theirs[:2] and mine[2]()
    assert reads == {os.path.realpath(folder / "face.svg"): (hashlib.sha256(text).hexdigest(), True)}


def _corner(root: Path, middle: bool = False) -> tuple[int, ...]:
    """The top-left pixel of the first card's face as built (`middle`: its middle one)."""
    from PIL import Image

    card = json.loads((root / "output" / "tiny" / "build.json").read_text())["cards"][0]
    with Image.open(root / "output" / "tiny" / card["face"]) as image:
        return image.convert("RGB").getpixel((image.width // 2, image.height // 2) if middle else (0, 0))


def test_a_template_saved_after_the_renders_were_keyed_is_never_taken_as_built(tiny_game: Path, monkeypatch) -> None:
    """The kept renders are keyed by the templates' digests (`render_inputs`) before the template is read: a save
    between the two leaves a build whose cards show the template as it was keyed, which the next build must not
    take for the one saved since."""
    import cardgen.svg.templates

    _saved_then_built(tiny_game)
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text())  # racy now, its renders kept (white)
    read = cardgen.svg.templates.read_noted

    def saved_then_read(path: Path, whole: bool = True) -> bytes:
        if path.name == "face.svg" and b"#ff0000" not in path.read_bytes():
            stamped = path.stat().st_mtime_ns
            path.write_text(path.read_text().replace("#ffffff", "#ff0000"))  # the same size and time
            os.utime(path, ns=(stamped, stamped))
        return read(path, whole)

    monkeypatch.setattr(cardgen.svg.templates, "read_noted", saved_then_read)
    _build(tiny_game)
    assert _corner(tiny_game) == (255, 255, 255)  # as keyed
    monkeypatch.undo()
    assert not _build(tiny_game).up_to_date
    assert _corner(tiny_game) == (255, 0, 0)


# Game.yaml, an included deck definition and a workspace icon, each holding a mark ("1") a same-size save changes and
# a build shows: the game's title in build.json, the deck's title there, the icon's colour in the card's SVG.
RACY_KINDS = {"game.yaml": "data/tiny/game.yaml", "include": "data/tiny/main.yaml",
              "icon": "icons/hexagonal-nut.svg"}
MARKS = {"game.yaml": "title: Tiny{}", "include": "title: Main{}", "icon": 'fill="#00ff0{}"'}


@pytest.fixture
def marked_game(tiny_game: Path) -> Path:
    """The tiny game with its deck included from data/tiny/main.yaml and its :scrap: icon a workspace icon."""
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    text = manifest.read_text().replace("title: Tiny", MARKS["game.yaml"].format(1))
    manifest.write_text(text.replace("source: cards.csv\n    face: face.svg\n    back: back.svg", "include: main.yaml"))
    (tiny_game / RACY_KINDS["include"]).write_text(
        MARKS["include"].format(1) + "\nsource: cards.csv\nface: face.svg\nback: back.svg\n")
    (tiny_game / "icons").mkdir()
    (tiny_game / RACY_KINDS["icon"]).write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect '
                                                f'width="10" height="10" {MARKS["icon"].format(1)}/></svg>')
    return tiny_game


def _marked_build(root: Path):
    return build_game(root, "tiny", BuildOptions(root / "output", jobs=1, keep_svg=True))


def _shown(root: Path, kind: str) -> int:
    """The mark the last build shows of a kind of file (see MARKS)."""
    out = root / "output" / "tiny"
    text = "".join(path.read_text() for path in [out / "build.json", *sorted(out.glob("cards/main/*.svg"))])
    return next(n for n in range(10) if MARKS[kind].format(n).split(": ")[-1] in text)


def _marked(path: Path, kind: str, mark: int, keep_time: bool = False) -> None:
    """Save the file of a kind with another mark (the same size); `keep_time`: with the modification time it had."""
    stamped = path.stat().st_mtime_ns
    path.write_text(re.sub(re.escape(MARKS[kind].format(9)).replace("9", r"\d"), MARKS[kind].format(mark),
                           path.read_text()))
    if keep_time:
        os.utime(path, ns=(stamped, stamped))


def _marked_then_built(root: Path, kind: str) -> Path:
    """Build the game with its files old, save the file of `kind` with mark 2 (racy for the next build) and build it
    again; that file."""
    _aged(root)
    assert _marked_build(root).cards == 3
    path = root / RACY_KINDS[kind]
    _marked(path, kind, 2)
    assert not _marked_build(root).up_to_date
    assert _shown(root, kind) == 2
    return path


@pytest.mark.parametrize("kind", RACY_KINDS)
@pytest.mark.parametrize("again", [False, True], ids=["new bytes", "the same bytes again"])
def test_the_build_after_a_build_right_after_a_save_of_any_kind_is_up_to_date(marked_game: Path, monkeypatch,
                                                                              kind: str, again: bool) -> None:
    """The same bytes saved again: the manifest and the icon as kept (`_kept_game`, `_parse_icon`)."""
    path = _marked_then_built(marked_game, kind)
    if again:
        time.sleep(0.01)
        path.write_bytes(path.read_bytes())
        _marked_build(marked_game)
    stamp = _sources(marked_game)[RACY_KINDS[kind]]
    assert stamp == [path.stat().st_size, path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()]
    _no_planning(monkeypatch)
    assert _marked_build(marked_game).up_to_date


@pytest.mark.parametrize("kind", RACY_KINDS)
def test_a_same_size_save_of_any_kind_keeping_the_stamped_time_is_built(marked_game: Path, kind: str) -> None:
    path = _marked_then_built(marked_game, kind)
    _marked(path, kind, 3, keep_time=True)
    assert not _marked_build(marked_game).up_to_date
    assert _shown(marked_game, kind) == 3


def _saved_after(read: Callable[..., Any], path: Path, kind: str) -> Callable[..., Any]:
    """`read`, which saves the file of `kind` (mark 4, the same size and time) once it has read it the first time."""

    def read_then_saved(*args: Any) -> Any:
        value = read(*args)
        if MARKS[kind].format(4) not in path.read_text():
            _marked(path, kind, 4, keep_time=True)
        return value

    return read_then_saved


@pytest.mark.parametrize("kind, reader", [("game.yaml", "cardgen.load.manifest:read_noted"),
                                          ("include", "cardgen.core.yamlsource:read_yaml"),
                                          ("icon", "cardgen.load.icons:_parse_icon")])
def test_a_save_after_the_build_read_a_file_of_any_kind_is_never_taken_as_built(marked_game: Path, monkeypatch,
                                                                               kind: str, reader: str) -> None:
    """The file saved again (the same size and time) right after the read that a build noted: the build shows what
    it read (an icon, parsed again where its file changed since, is read as other bytes than the renders are keyed
    by: the build fails, saying so, rather than draw the save under the key of what it read first), and the next
    one the save."""
    import importlib

    path = _marked_then_built(marked_game, kind)
    _marked(path, kind, 3)
    module, name = reader.split(":")
    monkeypatch.setattr(module + "." + name, _saved_after(getattr(importlib.import_module(module), name), path, kind))
    if kind == "icon":
        with pytest.raises(CardgenError, match="icon 'scrap' changed while the build drew it"):
            _marked_build(marked_game)
    else:
        assert not _marked_build(marked_game).up_to_date
        assert _shown(marked_game, kind) == 3  # what it read
    monkeypatch.undo()
    _marked_build(marked_game)
    assert _shown(marked_game, kind) == 4  # the save it did not read is built now


def test_an_icon_saved_after_the_renders_were_keyed_is_never_taken_as_built(marked_game: Path, monkeypatch) -> None:
    """The kept renders are keyed by the icons' digests (`render_inputs`): a save after that, read by validation,
    fails the build (what it read is not what its renders are keyed by), and the next build draws the save."""
    import cardgen.svg.templates

    path = _marked_then_built(marked_game, "icon")
    time.sleep(0.01)
    path.write_bytes(path.read_bytes())  # racy now, its renders kept (mark 2)
    digest = cardgen.svg.templates.file_digest
    monkeypatch.setattr(cardgen.svg.templates, "file_digest", lambda file: _saved_after(digest, path, "icon")(file)
                        if file == path else digest(file))
    with pytest.raises(CardgenError, match="icon 'scrap' changed while the build drew it"):
        _marked_build(marked_game)
    assert _shown(marked_game, "icon") == 2  # the last build's
    monkeypatch.undo()
    assert not _marked_build(marked_game).up_to_date
    assert _shown(marked_game, "icon") == 4


def _art(path: Path, colour: tuple[int, int, int]) -> None:
    """An 8 x 8 image of one colour, stored uncompressed: every colour the same size."""
    from PIL import Image

    Image.new("RGB", (8, 8), colour).save(path, compress_level=0)


@pytest.fixture
def art_game(tiny_game: Path) -> Path:
    """The tiny game whose cards each name, in their data, the art their face is filled with (data/tiny/art.png)."""
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0] + ",art", *(line + ",art.png" for line in lines[1:])]) + "\n")
    (tiny_game / "templates" / "tiny" / "face.svg").write_text(
        '<svg {{ geo.svg_attrs }}>{{ image(card.art, 0, 0, geo.width, geo.height, "stretch") }}</svg>')
    _art(tiny_game / "data" / "tiny" / "art.png", (0, 0, 255))
    return tiny_game


def _art_saved_then_built(root: Path) -> Path:
    """Build the game with its files old, save its art red (racy for the next build) and build it again."""
    _aged(root)
    _build(root)
    art = root / "data" / "tiny" / "art.png"
    _art(art, (255, 0, 0))
    assert not _build(root).up_to_date
    assert _corner(root, middle=True) == (255, 0, 0)
    return art


def test_the_build_after_a_build_right_after_an_art_save_is_up_to_date(art_game: Path, monkeypatch) -> None:
    art = _art_saved_then_built(art_game)
    assert _sources(art_game)["data/tiny/art.png"][2] == hashlib.sha256(art.read_bytes()).hexdigest()
    _no_planning(monkeypatch)
    assert _build(art_game).up_to_date


def test_a_same_size_art_save_keeping_the_stamped_time_is_built(art_game: Path, monkeypatch) -> None:
    art = _art_saved_then_built(art_game)
    stamped = art.stat().st_mtime_ns
    _art(art, (0, 255, 0))
    os.utime(art, ns=(stamped, stamped))
    assert not _build(art_game).up_to_date
    assert _corner(art_game, middle=True) == (0, 255, 0)


@pytest.mark.parametrize("when", ["keyed", "drawn"])
def test_art_saved_between_its_digest_and_its_drawing_is_never_taken_as_built(art_game: Path, monkeypatch,
                                                                             when: str) -> None:
    """The art saved yellow (the same size and time) once the build keyed its images by its digest (green), then
    saved back green (the same size and time): saved right after the digest and back after the build (`keyed`), or
    saved once planned, before the drawing, and back right after it (`drawn`). The drawing fails, saying why, rather
    than keep yellow's image under green's key (`render.make_url_fetcher`); the stamps and the previous output stay
    as they were, and the next build draws green."""
    import cardgen.build.build
    import cardgen.build.plan

    art = _art_saved_then_built(art_game)
    stamped = art.stat().st_mtime_ns
    _art(art, (0, 255, 0))
    os.utime(art, ns=(stamped, stamped))
    green, sources = art.read_bytes(), _sources(art_game)

    def saved(colour: tuple[int, int, int]) -> None:
        _art(art, colour)
        os.utime(art, ns=(stamped, stamped))

    digest, draw = cardgen.build.plan.file_digest, cardgen.build.build._Build.draw_and_run

    def keyed_then_saved(path: Path) -> str:
        value = digest(path)
        if when == "keyed" and path == art.resolve() and art.read_bytes() == green:
            saved((255, 255, 0))
        return value

    def drawn_then_saved_back(self: Any, *args: Any) -> Any:
        if when == "drawn":
            saved((255, 255, 0))
        try:
            return draw(self, *args)
        finally:
            if when == "drawn":
                saved((0, 255, 0))

    monkeypatch.setattr(cardgen.build.plan, "file_digest", keyed_then_saved)
    monkeypatch.setattr(cardgen.build.build._Build, "draw_and_run", drawn_then_saved_back)
    with pytest.raises(CardgenError, match="art.png' changed while the build drew it"):
        _build(art_game)
    monkeypatch.undo()
    saved((0, 255, 0))
    assert _sources(art_game) == sources and _corner(art_game, middle=True) == (255, 0, 0)  # the last build's
    assert not _build(art_game).up_to_date
    assert _corner(art_game, middle=True) == (0, 255, 0)  # green, not yellow kept under green's key


def _paper_width(root: Path) -> int:
    """The shorter side (points) of the first page of the tiny game's print PDF."""
    from pypdf import PdfReader

    (pdf,) = (root / "output" / "tiny" / "print").glob("*.pdf")
    box = PdfReader(pdf).pages[0].mediabox
    return round(min(box.width, box.height))


def test_game_yaml_saved_while_the_game_loads_is_built_by_the_next_build(tiny_game: Path, monkeypatch) -> None:
    """game.yaml saved (the print's paper: what no card shows) right after the build read it: the build's outputs
    are of the game it read, and so are the keys it keeps them by (`Game.read_as`: the build fingerprint, the kept
    renders), not of the file read again later, so the next build makes the save's."""
    import cardgen.load.manifest

    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print: {paper: a4}\n")
    read = cardgen.load.manifest.read_noted

    def read_then_saved(path: Path, *args: Any) -> bytes:
        data = read(path, *args)
        if path == manifest:
            manifest.write_bytes(data.replace(b"paper: a4", b"paper: a3"))
        return data

    def printed():
        return build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=1), stages=["print"])

    monkeypatch.setattr(cardgen.load.manifest, "read_noted", read_then_saved)
    printed()
    assert _paper_width(tiny_game) == 595  # A4, as read
    monkeypatch.setattr(cardgen.load.manifest, "read_noted", read)
    assert not printed().up_to_date
    assert _paper_width(tiny_game) == 842  # A3, as saved


def test_a_template_saved_between_its_key_and_its_render_is_never_kept_under_that_key(tiny_game: Path,
                                                                                     monkeypatch) -> None:
    """The face saved green (a new render: its key changed), then yellow (the same size and time) once the renders
    were keyed by green's digest (`render_inputs`), before the render read it: the render fails, saying why, rather
    than keep yellow's render under green's key (`ProjectLoader.keyed`); saved green again, the next build draws
    green."""
    import cardgen.svg.templates

    _aged(tiny_game)
    _build(tiny_game)
    face = tiny_game / "templates" / "tiny" / "face.svg"
    white = face.read_text()
    face.write_text(white.replace("#ffffff", "#00ff00"))
    stamped = face.stat().st_mtime_ns

    def saved(colour: str) -> None:
        face.write_text(white.replace("#ffffff", colour))
        os.utime(face, ns=(stamped, stamped))

    digest = cardgen.svg.templates.file_digest

    def keyed_then_saved(path: Path) -> str:
        value = digest(path)
        if path == face and "#00ff00" in face.read_text():
            saved("#ffff00")
        return value

    monkeypatch.setattr(cardgen.svg.templates, "file_digest", keyed_then_saved)
    with pytest.raises(CardgenError, match="template 'face.svg' changed while the build drew it"):
        _build(tiny_game)
    monkeypatch.setattr(cardgen.svg.templates, "file_digest", digest)
    saved("#00ff00")
    assert not _build(tiny_game).up_to_date
    assert _corner(tiny_game) == (0, 255, 0)  # green, not yellow kept under green's key


def _printed(root: Path):
    return build_game(root, "tiny", BuildOptions(root / "output", jobs=1), stages=["print"])


def _pages(root: Path) -> int:
    from pypdf import PdfReader

    (pdf,) = (root / "output" / "tiny" / "print").glob("*.pdf")
    return len(PdfReader(pdf).pages)


@pytest.fixture
def layout_game(tiny_game: Path) -> Path:
    """The tiny game printed on a sheet layout of its workspace, `layouts/mine.yaml` (the bundled 3 x 3 poker one on
    Letter: its 6 copies on one front page, a back page after it)."""
    from cardgen.options.layouts import LAYOUTS

    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print: {paper: letter, layout: mine}\n")
    (tiny_game / "layouts").mkdir()
    (tiny_game / "layouts" / "mine.yaml").write_text((LAYOUTS.bundled / "poker-3x3-letter.yaml").read_text())
    return tiny_game


@pytest.mark.parametrize("again", [False, True], ids=["new bytes", "the same bytes again"])
def test_the_build_after_a_build_right_after_a_layout_save_is_up_to_date(layout_game: Path, monkeypatch,
                                                                         again: bool) -> None:
    """The layout as validation read it, or as the kept game holds it (`Game.read_as`: the same bytes saved again),
    which the print stage's read is checked against: its digest in the stamps."""
    _aged(layout_game)
    _printed(layout_game)
    layout = layout_game / "layouts" / "mine.yaml"
    layout.write_text(layout.read_text() + "# edited\n")
    assert not _printed(layout_game).up_to_date
    if again:  # and the CSV edited: the pipeline runs, with the game as kept
        time.sleep(0.01)
        layout.write_bytes(layout.read_bytes())
        csv = layout_game / "data" / "tiny" / "cards.csv"
        csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,5"))
        assert not _printed(layout_game).up_to_date
    assert _sources(layout_game)["layouts/mine.yaml"][2] == hashlib.sha256(layout.read_bytes()).hexdigest()
    _no_planning(monkeypatch)
    assert _printed(layout_game).up_to_date


def test_a_layout_saved_after_the_game_loaded_is_never_printed_by_that_build(layout_game: Path, monkeypatch) -> None:
    """The layout saved (one slot a page) once the game is loaded, before the print stage reads it again: the stage
    refuses it (the build's fingerprint and stamps hold the layout the game was loaded with), and the next build
    prints it."""
    from cardgen.outputs.pdf import PrintStage

    _aged(layout_game)
    _printed(layout_game)
    assert _pages(layout_game) == 2
    layout = layout_game / "layouts" / "mine.yaml"
    run = PrintStage.run

    def saved_then_run(self: Any, ctx: Any) -> Any:
        layout.write_text(re.sub(r"slots:\n(  - .*\n)+", "slots:\n  - {x: 12.7mm, y: 6.35mm}\n", layout.read_text()))
        return run(self, ctx)

    layout.write_text(layout.read_text() + "# edited\n")  # (the game loaded anew: not kept)
    monkeypatch.setattr(PrintStage, "run", saved_then_run)
    with pytest.raises(CardgenError, match="sheet layout file changed while the build used it"):
        _printed(layout_game)
    monkeypatch.setattr(PrintStage, "run", run)
    assert not _printed(layout_game).up_to_date
    assert _pages(layout_game) == 12  # a card a page

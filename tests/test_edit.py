"""A one-card edit does the work of that card only: its layout is inspected, its files are made; every other
card's findings and files are taken from the previous build, and the outputs are those of a cold build."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cardgen.build.build import BuildOptions, build_game
from cardgen.outputs import stage_names
from cardgen.validate import validate_game
from cardgen.validate.layout import LayoutChecker
from tests.test_spliced import unpadded


def _build(root: Path, out: str = "output"):
    return build_game(root, "tiny", BuildOptions(root / out, jobs=1), stages=stage_names())


def _beside_print(findings: list) -> list:
    """The findings but the print's note that 9 poker cards leave Letter's crop marks in the printer's band."""
    return [f for f in findings if "a printer may not print" not in f.message]


def _edit(root: Path, old: str, new: str) -> None:
    csv = root / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace(old, new))


@pytest.fixture
def inspected(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cards (or backs: None) whose rendered text the layout check inspects, in order."""
    seen: list[str] = []
    inspect = LayoutChecker._inspect

    def counting(self, rendered, template, deck, card):  # type: ignore[no-untyped-def]
        seen.append(card.id if card else None)
        return inspect(self, rendered, template, deck, card)

    monkeypatch.setattr(LayoutChecker, "_inspect", counting)
    return seen


def test_an_edit_inspects_the_layout_of_the_edited_card_only(tiny_game: Path, inspected: list[str]) -> None:
    _edit(tiny_game, "Fire & Ice", "Fire ☃ Ice")  # a snowman: Roboto Mono has no glyph for it (a warning)
    _build(tiny_game)
    assert sorted(inspected, key=str) == [None, "alpha", "beta", "na"]
    inspected.clear()
    _edit(tiny_game, "Plain", "Plainer")
    result = _build(tiny_game)
    assert inspected == ["na"]
    text = (tiny_game / "output" / "tiny" / "build.json").read_text(encoding="utf-8")
    assert unpadded(text) == json.dumps(json.loads(text), indent=2, ensure_ascii=False)  # (its runs padded)
    fresh = validate_game(tiny_game, "tiny")  # no output root: every card inspected
    assert [f for f in result.findings if f.rule == "missing-glyph"] == \
        [f for f in fresh if f.rule == "missing-glyph"] != []


def test_kept_layout_findings_that_are_damaged_are_found_again(tiny_game: Path, inspected: list[str]) -> None:
    _edit(tiny_game, "Fire & Ice", "Fire ☃ Ice")
    first = _build(tiny_game)
    [entry] = [p for p in (tiny_game / "output" / ".cache" / "layout").rglob("*.jsonl")]
    entry.write_text(entry.read_text().replace("missing-glyph", "missing-glyph-not"))  # same size: digest told
    inspected.clear()
    _edit(tiny_game, "Plain", "Plainer")
    again = _build(tiny_game)
    assert sorted(inspected, key=str) == [None, "alpha", "beta", "na"]
    assert [f for f in again.findings if f.rule and f.rule.startswith("missing")] == \
        [f for f in first.findings if f.rule and f.rule.startswith("missing")] != []


def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def _pages(pdf: Path) -> list[tuple[str, list[bytes]]]:
    """Each page's text and the raw streams of its images: what the page shows (an image's name is not: a file
    updated incrementally draws a new image under the name of the one it replaced)."""
    from pypdf import PdfReader

    pages = []
    for page in PdfReader(pdf).pages:
        objects = page["/Resources"].get("/XObject", {})
        pages.append((page.extract_text(), sorted(image.get_object().get_data() for image in objects.values())))
    return pages


def _same_as_cold(root: Path, edited: Path, cold: Path) -> None:
    """Every output of the edited build is the cold build's: images byte for byte, the TTS saved object but
    for the folder it names (and so its runs' pads: `storage.padding`), the PDFs page by page (their creation
    dates differ). The gallery's previous/ (the edited card as it was) and the build's record and stamps (times,
    counts) are an edit's own."""
    mine, theirs = _files(edited), _files(cold)
    for own in [n for n in mine if n.startswith("previous/") or n in ("build.json", ".build-stamps.json")]:
        mine.pop(own), theirs.pop(own, None)
    assert mine.keys() == theirs.keys()
    for name, path in mine.items():
        if name.endswith(".pdf"):
            assert _pages(path) == _pages(theirs[name]), name
        elif name.endswith(".json"):
            def shown(text: str, root: Path) -> str:  # the folder and the time of the build aside
                return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "TIME", text.replace(str(root), "OUT"))

            assert shown(unpadded(path.read_text()), edited.parent) == \
                shown(unpadded(theirs[name].read_text()), cold.parent), name
        elif not name.endswith((".html", ".cardgen-made")):
            assert path.read_bytes() == theirs[name].read_bytes(), name


def test_an_edit_keeps_the_files_of_unchanged_cards_as_links_and_matches_a_cold_build(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)  # a sheet (front and back) per file: a long print
    _edit(tiny_game, '"quoted",2', '"quoted",20')  # 20 Alphas: three sheets, the last one holds NA
    out = tiny_game / "output" / "tiny"
    _build(tiny_game)
    before = {name: path.stat().st_ino for name, path in _files(out).items()}
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    after = _files(out)
    kept = {name for name, path in after.items() if before.get(name) == path.stat().st_ino}
    cards = {name for name in after if name.startswith(("cards/", "backs/"))}
    assert cards - kept == {"cards/main/na.png"}
    pdfs = {name for name in after if name.endswith(".pdf")}
    assert 0 < len(pdfs & kept) < len(pdfs)  # the files holding NA's pages are written again, the others kept
    assert {name for name in after if name.startswith("tts/") and name.endswith(".jpg")} & kept
    cache = {p.stat().st_ino for p in (tiny_game / "output" / ".cache").rglob("*") if p.is_file()}
    assert all(path.stat().st_nlink == 1 and path.stat().st_ino not in cache for path in after.values())
    _build(tiny_game, "cold")
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


def test_an_edit_moves_the_files_it_made_into_the_output_folder_and_one_stopped_there_is_built_again(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import cardgen.outputs.pdf as pdf_module

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)
    _edit(tiny_game, '"quoted",2', '"quoted",20')
    output = tiny_game / "output"
    out = output / "tiny"
    _build(tiny_game)
    folder = out.stat().st_ino
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert out.stat().st_ino == folder  # moved in: the folder itself is the previous one, not swapped
    assert not [p for p in output.iterdir() if p.name.startswith(".tiny")]  # no staging folder, no .old left
    assert _build(tiny_game).up_to_date
    _build(tiny_game, "cold")
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")

    replace = os.replace

    def stopped_at_na(source: str, target: str) -> None:
        if str(target) == str(out / "cards" / "main" / "na.png"):
            raise KeyboardInterrupt  # killed while moving the edit's files in
        replace(source, target)

    monkeypatch.setattr(os, "replace", stopped_at_na)
    _edit(tiny_game, "Plainer", "Plain")
    with pytest.raises(KeyboardInterrupt):
        _build(tiny_game)
    monkeypatch.setattr(os, "replace", replace)
    assert not (out / ".build-stamps.json").exists()  # a folder half moved in is never taken as current
    assert not _build(tiny_game).up_to_date
    assert _build(tiny_game).up_to_date
    _build(tiny_game, "cold2")
    _same_as_cold(tiny_game, out, tiny_game / "cold2" / "tiny")


def test_where_hard_links_fail_unchanged_files_are_copied(tiny_game: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    import cardgen.outputs.pdf as pdf_module
    from cardgen.load import freshness

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)
    monkeypatch.setattr(freshness, "MOVED_AT_MOST", 0)  # swapped in whole, not moved in: it links what it keeps
    _edit(tiny_game, '"quoted",2', '"quoted",20')
    out = tiny_game / "output" / "tiny"
    _build(tiny_game)
    before = {name: path.stat().st_ino for name, path in _files(out).items()}

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    drawn: list[str] = []
    draw = pdf_module._draw
    monkeypatch.setattr(pdf_module, "_draw", lambda path, **kw: drawn.append(path.name) or draw(path, **kw))
    monkeypatch.setattr(os, "link", no_links)
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert not any(before.get(name) == path.stat().st_ino for name, path in _files(out).items())
    assert drawn == []  # the two files without NA are copies of the previous ones, NA's a copy with a revision
    _build(tiny_game, "cold")
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


def test_a_previous_output_written_to_during_the_build_is_not_published(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core.errors import CardgenError
    from cardgen.outputs.gallery import GalleryStage

    out = tiny_game / "output" / "tiny"
    _build(tiny_game)
    alpha = out / "cards" / "main" / "alpha.png"
    run = GalleryStage.run

    def designer_edits_alpha_meanwhile(self, ctx):  # type: ignore[no-untyped-def]
        with alpha.open("r+b") as handle:  # written in place: a hard link to it sees the edit
            handle.seek(100)
            handle.write(b"edited")
        return run(self, ctx)

    monkeypatch.setattr(GalleryStage, "run", designer_edits_alpha_meanwhile)
    _edit(tiny_game, "Plain", "Plainer")
    with pytest.raises(CardgenError, match="changed while the build was running"):
        _build(tiny_game)
    monkeypatch.setattr(GalleryStage, "run", run)
    _build(tiny_game)  # the edited alpha.png is not kept: made again from the cache
    _build(tiny_game, "cold")
    assert alpha.read_bytes() == (tiny_game / "cold" / "tiny" / "cards" / "main" / "alpha.png").read_bytes()


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The templates the reference check parses and scans, in order (by the file findings show)."""
    from cardgen.validate import references

    seen: list[str] = []
    scan = references._scan

    def counting(tree, source, shown):  # type: ignore[no-untyped-def]
        seen.append(shown)
        return scan(tree, source, shown)

    monkeypatch.setattr(references, "_scan", counting)
    return seen


def test_an_edit_of_data_parses_no_template_and_an_edited_template_is_parsed_again(
        tiny_game: Path, parsed: list[str]) -> None:
    _build(tiny_game)
    assert "templates/tiny/face.svg" in parsed
    parsed.clear()
    _edit(tiny_game, "Plain", "Plainer")
    result = _build(tiny_game)
    assert parsed == []
    assert _beside_print(result.findings) == [f for f in validate_game(tiny_game, "tiny") if f.severity == "warning"]
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text().replace("</svg>", "<text>{{ card.powr }}</text></svg>"))
    fresh = [f for f in validate_game(tiny_game, "tiny") if f.rule == "undefined-field"]
    parsed.clear()
    with pytest.raises(Exception) as failed:
        _build(tiny_game)
    assert parsed == ["templates/tiny/face.svg"]  # the edited template only; the back's scan is kept
    assert fresh and "card.powr" in str(failed.value.problems)  # type: ignore[attr-defined]


def test_templates_scanned_ahead_are_those_the_build_takes(tiny_game: Path, parsed: list[str]) -> None:
    """A first build's worker scans the game's own templates ahead into its kept scans (`scan_ahead`): the build's
    reference check then parses none of them, and finds what a fresh check finds; a template that does not parse
    is left to the build."""
    from cardgen.core.ownership import mark
    from cardgen.core.storage import cache_root
    from cardgen.validate.references import scan_ahead

    (tiny_game / "templates" / "tiny" / "broken.svg").write_text("{% if %}")
    mark(cache_root(tiny_game / "output"))  # as a build does before its workers start
    scan_ahead(tiny_game, "tiny", tiny_game / "output")
    assert sorted(parsed) == ["templates/tiny/back.svg", "templates/tiny/face.svg"]
    parsed.clear()
    result = _build(tiny_game)
    assert parsed == []
    assert _beside_print(result.findings) == [f for f in validate_game(tiny_game, "tiny") if f.severity == "warning"]


def test_kept_template_scans_that_are_damaged_are_made_again(tiny_game: Path, parsed: list[str]) -> None:
    _build(tiny_game)
    [entry] = [p for p in (tiny_game / "output" / ".cache" / "template-scans").rglob("*.jsonl")]
    entry.write_text(entry.read_text().replace('"text"', '"txet"'))  # same size: the seal's digest tells
    parsed.clear()
    _edit(tiny_game, "Plain", "Plainer")
    result = _build(tiny_game)
    assert "templates/tiny/face.svg" in parsed
    assert _beside_print(result.findings) == [f for f in validate_game(tiny_game, "tiny") if f.severity == "warning"]


def test_an_edit_draws_again_only_the_print_pages_that_hold_the_changed_card(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages of the print PDF whose cards did not change are put back as the last build drew them (their
    operators, images and font), not drawn again; the file is a cold build's byte for byte (reportlab's
    invariant mode fixes the dates and ID that differ otherwise). (The file is written whole: no incremental update,
    see tests/test_print_update.py.)"""
    from reportlab import rl_config

    import cardgen.outputs.pdf as pdf_module
    from cardgen.outputs import pdf_update

    monkeypatch.setattr(rl_config, "invariant", 1)
    monkeypatch.setattr(pdf_update, "REVISIONS_AT_MOST", 0)
    _edit(tiny_game, '"quoted",2', '"quoted",20')  # 20 Alphas: three sheets, fronts and backs, NA on the last
    _build(tiny_game)
    drawn: list[list[str]] = []
    draw_page = pdf_module._draw_page
    monkeypatch.setattr(pdf_module, "_draw_page", lambda pdf, page, images: drawn.append(
        [slot.image for slot in page.slots]) or draw_page(pdf, page, images))
    _edit(tiny_game, "Plain", "Plainer")
    _build(tiny_game)
    assert len(drawn) == 1 and "cards/main/na.png" in drawn[0], drawn  # NA's front page; its back page is kept
    drawn.clear()
    _build(tiny_game, "cold")
    assert len(drawn) == 6
    edited, cold = (tiny_game / out / "tiny" / "print" for out in ("output", "cold"))
    assert [p.name for p in edited.iterdir()] == [p.name for p in cold.iterdir()] != []
    for pdf in edited.iterdir():
        assert pdf.read_bytes() == (cold / pdf.name).read_bytes(), pdf.name



def test_a_rebuild_in_the_same_process_takes_the_record_it_wrote_and_reads_one_written_since(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.record.record import BuildRecord

    read = BuildRecord.read.__func__  # type: ignore[attr-defined]
    reads: list[Path] = []
    monkeypatch.setattr(BuildRecord, "read", classmethod(lambda cls, path: reads.append(path) or read(cls, path)))
    record = tiny_game / "output" / "tiny" / "build.json"
    _build(tiny_game)
    reads.clear()
    _edit(tiny_game, "Plain", "Plainer")
    edited = _build(tiny_game)
    assert reads == []  # a watch's rebuild: the record this process wrote is known, not parsed again
    assert [change.id for change in edited.changes.changed] == ["na"]
    record.write_text(record.read_text().replace('"Plainer"', '"Plain!!"'))  # written since: read again
    _edit(tiny_game, "Plainer", "Plainest")
    again = _build(tiny_game)
    assert reads == [record]
    assert [(change.id, change.fields) for change in again.changes.changed] == \
        [("na", {"text": ("Plain!!", "Plainest")})]


def test_rows_converted_again_in_one_process_give_what_a_fresh_load_gives(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A running watch converts only the rows it has not converted before (`data._CONVERTED`), and an unchanged
    row's card is the last load's object (`data._CARDS`): an edited row's problems, a changed field type: each as a
    load in a fresh process."""
    import threading

    from cardgen.core import storage
    from cardgen.load import data
    from cardgen.load.manifest import load_game

    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    data._CONVERTED.clear()
    data.read_game_data(load_game(tiny_game, "tiny"))
    assert not data._CONVERTED  # a build of its own keeps none
    data.remember_rows()

    def load() -> data.GameData:
        return data.read_game_data(load_game(tiny_game, "tiny"))

    def fresh() -> data.GameData:
        data._CONVERTED.clear(), data._CARDS.clear(), data._READ.clear()
        return load()

    first = load()
    assert [c.fields["power"] for c in first.cards] == [1, 2, 3] and not first.problems
    assert [a is b for a, b in zip(load().cards, first.cards)] == [True] * 3  # unchanged rows: the same cards
    _edit(tiny_game, "Beta,2,", "Beta,two,")
    edited = load()
    assert [(p.row, p.column) for p in edited.problems] == [(3, "power")]
    assert [a is b for a, b in zip(edited.cards, first.cards)] == [True, False, True]
    assert (edited.problems, [c.fields for c in edited.cards]) == \
        (fresh().problems, [c.fields for c in fresh().cards])
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("power: int", "power: str"))
    retyped = load()
    assert not retyped.problems and [c.fields["power"] for c in retyped.cards] == ["1", "two", "3"]


def test_an_edits_stages_start_once_the_files_of_the_images_found_are_placed(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Placing a kept card file is a stat, and each stat beside the stages' threads let them take the GIL for a
    switch interval: the stages start (`handed`) once the images found in the cache are placed, only the edited
    card's files left to place."""
    from cardgen.build import build

    _build(tiny_game)
    _edit(tiny_game, "Plain", "Plainer")
    left: list[set[str]] = []
    handed = build._Build.handed
    monkeypatch.setattr(build._Build, "handed", lambda self: left.append(set(self.card_files.unplaced)) or handed(self))
    assert _build(tiny_game).rendered == 1
    assert left == [{"cards/main/na.png"}]


def test_a_process_building_again_writes_the_record_and_gallery_a_fresh_process_writes(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A running watch makes an unchanged card's record entry, its JSON, its gallery figure and table data once
    (`record.kept_piece`), its look (`plan._LOOKS`), and its Tabletop Simulator object and that object's texts
    (`objects.kept_text`): after edits of a card, of a rule that marks unchanged cards, and of the rule's removal,
    build.json, index.html and the saved object are those a fresh process writes, and after an edit of a card's
    copies too (two output roots built in step,
    one keeping what it made between builds, the other not)."""
    import difflib
    import threading

    from cardgen.build import plan
    from cardgen.core import storage
    from cardgen.load import data
    from cardgen.outputs.tts import objects
    from cardgen.record import record

    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    kept: list[dict] = [{}, {}, {}, {}]
    held: list[dict] = [{}, {}, {}, {}]  # what a process building again holds
    for module, name, now in zip([record, record, plan, objects], ["_KEPT_ENTRIES", "_PIECES", "_LOOKS", "_TEXTS"],
                                 held):
        monkeypatch.setattr(module, name, now)

    def both() -> list[str]:
        """Build into kept/ keeping what is made, and into fresh/ keeping nothing; their record and gallery."""
        data.remember_rows()
        for now, before in zip(held, kept):
            now.clear(), now.update(before)
        _build(tiny_game, "kept")
        kept[:] = [dict(now) for now in held]
        storage.BUILDS_AGAIN.clear()
        for now in held:
            now.clear()
        _build(tiny_game, "fresh")
        texts = []
        for root in ("kept", "fresh"):
            for name in ("build.json", "index.html", "tts/Tiny.json"):
                text = (tiny_game / root / "tiny" / name).read_text(encoding="utf-8")
                text = text.replace(str(tiny_game / root), "ROOT")
                if name == "build.json":  # the sources' stamps say when the build read them (racy ones -2)
                    text = re.sub(r'\n  "sources": \{.*?\n  \}', "", text, flags=re.DOTALL)
                texts.append(re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "TIME", text))
        for mine, fresh in zip(texts[:3], texts[3:]):
            assert mine == fresh, "\n".join(difflib.unified_diff(fresh.splitlines(), mine.splitlines(), lineterm=""))
        return texts[:3]

    both()
    before = list(kept[0]["tiny"].values())
    _edit(tiny_game, "Plain", "Plainer")
    assert "Plainer" in both()[1]
    assert [any(entry is old for old in before) for entry in kept[0]["tiny"].values()] == [True, True, False]
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    plain = manifest.read_text()
    manifest.write_text(plain + "rules:\n  - {id: weak, message: Weak, severity: warning, check: 'power < 2'}\n")
    gallery = both()[1]
    assert gallery.count('<li class="warning">') == 4  # two cards marked, each at the top and on its figure
    manifest.write_text(plain)
    assert '<li class="warning">' not in both()[1]
    _edit(tiny_game, "Plainer", "Plain")
    both()
    _edit(tiny_game, "Plain,3", "Plain,5")  # a card's copies: the stats counted again where cards changed
    assert '"copies": 8' in both()[0]


def test_an_edit_in_a_process_building_again_keeps_its_renders_in_memory_until_they_are_many(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch does not write every rendered SVG and layout finding of the game again for an edit's card: the few
    new ones stay in memory (`KeptByGame.deferred`), its next build takes them from there, and the entries are
    written once more than DEFERRED_AT_MOST are not in them. A fresh process reads the entries as they are on disk:
    it renders the edited card again, nothing else, and writes what a watch's build writes."""
    from cardgen.core import storage
    from cardgen.svg import templates

    storage.keep_for_next_builds()
    made: list[str] = []
    make = templates.SVGRenderer.make
    monkeypatch.setattr(templates.SVGRenderer, "make", lambda self, template, key, deck, card:
                        made.append(key) or make(self, template, key, deck, card))
    _build(tiny_game)
    entries = sorted(p for kind in ("svg", "layout") for p in (tiny_game / "output" / ".cache" / kind).rglob("*.jsonl"))
    written = [p.stat().st_mtime_ns for p in entries]
    for old, new, card in (("Plain", "Plainer", "na"), ("Bold", "Bolder", "beta")):
        _edit(tiny_game, old, new)
        made.clear()
        assert _build(tiny_game).rendered == 1
        assert set(made) == {card}  # NA's new render, after the first edit, taken from memory
        assert [p.stat().st_mtime_ns for p in entries] == written  # not written again
    storage._KNOWN_ENTRIES.clear()  # as a fresh process: the entries as they are on disk
    _edit(tiny_game, "Fire", "Fired")
    made.clear()
    assert _build(tiny_game).rendered == 1 and set(made) == {"alpha", "beta", "na"}
    _build(tiny_game, "cold")
    _same_as_cold(tiny_game, tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny")
    monkeypatch.setattr(storage, "DEFERRED_AT_MOST", 0)  # more new renders than an edit may keep in memory
    _edit(tiny_game, "Plainer", "Plain again")
    _build(tiny_game)
    assert all(p.stat().st_mtime_ns != before for p, before in zip(entries, written))

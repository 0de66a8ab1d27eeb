"""The typed build record: a round trip through build.json, old or hand-edited records, hashes read not redone."""
from __future__ import annotations

import json
from pathlib import Path

import pypdf
import pytest
from click.testing import CliRunner

from cardgen.build.build import BuildOptions, build_game
from cardgen.commands.cli import main
from cardgen.core.errors import CardgenError
from cardgen.core.storage import RUN_ITEMS, Run
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.pdf import write_print_pdf
from cardgen.record.record import BuildRecord
from tests.test_spliced import unpadded


@pytest.fixture
def built(tiny_game: Path) -> Path:
    """The tiny game built without outputs; returns output/tiny."""
    build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=1))
    return tiny_game / "output" / "tiny"


def test_record_round_trips_through_build_json(built: Path, tmp_path: Path) -> None:
    record = BuildRecord.read(built / "build.json")
    assert [c.name for c in record.cards] == ["Alpha", "Beta", "NA"]
    assert record.cards[0].fields["power"] == 1 and record.cards[0].copies == 2
    assert record.cards[0].source.file == "data/tiny/cards.csv" and record.cards[0].source.row == 2
    assert record.decks["main"].pixels.width == record.cards[0].pixels.width
    assert record.image_hash(record.cards[1].face) == record.cards[1].hash
    assert record.image_hash(record.cards[1].back) == next(iter(record.backs.values())).hash
    record.save(tmp_path)
    assert BuildRecord.read(tmp_path / "build.json") == record
    assert json.loads((tmp_path / "build.json").read_text()) == json.loads((built / "build.json").read_text())


def test_build_json_is_the_records_json_indented_as_utf8_text(built: Path, tmp_path: Path) -> None:
    """build.json is written from the serializer's bytes: the same text as the record's JSON, indented, with text
    outside ASCII written as it is (not escaped)."""
    record = BuildRecord.read(built / "build.json")
    record.cards[0].name = "Größe & <Ärger> ✦"
    record.save(tmp_path)
    text = unpadded((tmp_path / "build.json").read_text(encoding="utf-8"))
    assert text == record.model_dump_json(indent=2)
    assert '"name": "Größe & <Ärger> ✦"' in text and text.startswith('{\n  "')


def test_build_json_is_written_a_card_at_a_time(built: Path, tmp_path: Path) -> None:
    """At the end of a build, when its memory is at its peak, build.json (~35 MB at 10,000 cards) is written in
    pieces that do not grow with the number of cards, making the same text as the whole record's JSON."""
    record = BuildRecord.read(built / "build.json")
    record.cards[1].fields["text"] = "a line\nand another, \"cards\": []"  # line breaks and keys in values
    many = record.model_copy(update={"cards": [card.model_copy(update={"id": f"{card.id}-{n}"})
                                               for n in range(100) for card in record.cards]})
    for each in (record, many):
        each.save(tmp_path)
        assert unpadded((tmp_path / "build.json").read_text(encoding="utf-8")) == each.model_dump_json(indent=2)
    assert BuildRecord.read(tmp_path / "build.json") == many
    small = list(many.model_copy(update={"cards": many.cards[-3:]}).json_parts())
    large = list(many.json_parts())
    # (a run of RUN_ITEMS cards each, a card its separator and its JSON: the same objects each build, spliced by
    # storage.write_spliced)
    assert len(large) == -(-len(many.cards) // RUN_ITEMS) + 2
    assert all(isinstance(run, Run) and len(run.parts) <= 2 * RUN_ITEMS for run in large[1:-1])
    pieces = [piece for run in [*small[1:-1], *large[1:-1]] for piece in run.parts]  # type: ignore[union-attr]
    ends = [large[0].parts[0], large[-1], small[0].parts[0], small[-1]]  # type: ignore[union-attr]
    assert max(map(len, pieces)) < 10_000 and max(map(len, ends[:2])) == max(map(len, ends[2:]))


def test_a_record_missing_a_key_names_it(built: Path) -> None:
    data = json.loads((built / "build.json").read_text())
    del data["cards"][1]["hash"]
    with pytest.raises(CardgenError, match=r"cards\.1\.hash: Field required"):
        BuildRecord.parse(data, "build.json")


def test_keys_of_a_later_cardgen_are_ignored(built: Path) -> None:
    data = json.loads((built / "build.json").read_text())
    data["cards"][0]["rarity_color"] = "gold"
    assert BuildRecord.parse(data, "build.json").cards[0].id == data["cards"][0]["id"]


@pytest.mark.parametrize("damage", ["{ not json", '{"cards": "hand edited"}'])
def test_a_damaged_build_json_is_rebuilt_cleanly(built: Path, tiny_game: Path, damage: str) -> None:
    (built / "build.json").write_text(damage)
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert len(BuildRecord.read(built / "build.json").cards) == 3


@pytest.mark.parametrize("damage, says", [("{ not json", "not valid JSON"),
                                          ('{"cards": []}', "not a build record cardgen can read")])
def test_commands_after_a_build_explain_a_damaged_build_json(built: Path, tiny_game: Path, damage: str,
                                                            says: str) -> None:
    (built / "build.json").write_text(damage)
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "snapshot", "tiny", "v1"])
    assert result.exit_code == 1, result.output
    assert says in result.output and "cardgen build tiny" in result.output
    assert "Traceback" not in result.output
    # print and tts build what is missing first: the damaged record is rebuilt, never served.
    for command in (["print", "tiny"], ["tts", "tiny"]):
        result = CliRunner().invoke(main, ["--root", str(tiny_game), *command])
        assert result.exit_code == 0, (command, result.output)
        assert len(BuildRecord.read(built / "build.json").cards) == 3
        (built / "build.json").write_text(damage)


def test_the_pdf_tells_images_apart_by_the_recorded_hash(built: Path, tmp_path: Path) -> None:
    """The print stage reads each card's content hash from the record and never hashes image files again:
    two cards recorded with one hash are embedded as one image."""
    record = BuildRecord.read(built / "build.json")
    distinct = write_print_pdf(record, built, PrintSpec(duplex="none"), tmp_path / "a.pdf").files[0]
    record.cards[1].hash = record.cards[0].hash
    merged = write_print_pdf(record, built, PrintSpec(duplex="none"), tmp_path / "b.pdf").files[0]

    def embedded(path: Path) -> int:
        return len({ref.idnum for page in pypdf.PdfReader(path).pages
                    for ref in page["/Resources"]["/XObject"].values()})

    assert (embedded(distinct), embedded(merged)) == (3, 2)


def test_the_change_report_compares_what_a_face_shows_or_an_older_record_s_hash(built: Path) -> None:
    from cardgen.record.changes import diff_records

    record = BuildRecord.read(built / "build.json")
    redrawn = record.model_copy(deep=True)
    for card in redrawn.cards:  # a new cardgen drawing the same cards: every cache key new
        card.hash = card.hash[::-1]
    assert diff_records(record, redrawn).empty
    redrawn.cards[1].look = record.cards[0].look
    assert [(c.id, c.image_changed) for c in diff_records(record, redrawn).changed] == [("beta", True)]
    data = json.loads((built / "build.json").read_text())
    for card in data["cards"]:
        del card["look"]
    older = BuildRecord.parse(data, "snapshots/printed.json")  # a snapshot older than `look`: compared by hash
    assert diff_records(older, record).empty
    assert [c.id for c in diff_records(older, redrawn).changed] == ["alpha", "beta", "na"]


def test_a_back_missing_from_the_backs_is_refused(built: Path) -> None:
    data = json.loads((built / "build.json").read_text())
    data["cards"][2]["back"] = "backs/elsewhere.png"
    with pytest.raises(CardgenError, match=r"cards\.2\.back: 'backs/elsewhere.png' is not one of the record's"):
        BuildRecord.parse(data, "build.json")


def test_a_record_of_many_cards_holds_their_layout_boxes_compactly(built: Path) -> None:
    """A card holds about twenty layout boxes; at 10,000 cards a build holds 200,000 of them while it draws
    and writes its outputs, so each must cost little more than its numbers (a pydantic model costs ~1 kB)."""
    import tracemalloc

    data = json.loads((built / "build.json").read_text())
    card = data["cards"][0]
    boxes = [{"kind": "text_box", "x": 10.5 + n, "y": 20.25, "width": 300.0, "height": 80.0, "label": f"text {n}",
              "overflow": False} for n in range(20)]
    data["cards"] = [{**card, "id": f"c{n}", "boxes": boxes} for n in range(500)]
    text = json.dumps(data)
    tracemalloc.start()
    try:
        record = BuildRecord.model_validate_json(text)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [box.label for box in record.cards[7].boxes] == [box["label"] for box in boxes]
    assert held / (500 * 20) < 400, f"{held / (500 * 20):.0f} bytes per box"


def test_layout_boxes_are_made_once_per_render_and_shared_by_the_record_and_the_svg_cache(tiny_game: Path) -> None:
    """Boxes are held once per build (at 10,000 cards a copy of them costs tens of MB in the main process)."""
    from cardgen.build.plan import plan_build, record_of
    from cardgen.core.boxes import GuideBox
    from cardgen.svg.context import BuildContext

    out = tiny_game / "output"
    made = []
    for _ in range(2):  # rendered, then read from the SVG cache the first plan saved
        context = BuildContext.load(tiny_game, "tiny", out)
        plan = plan_build(context)
        record = record_of(plan)
        assert context.renderer.cache is not None
        context.renderer.cache.save()
        for card in record.cards:
            boxes = plan.faces[card.id].rendered.boxes
            assert [box.kind for box in boxes] == ["text_line", "text_box"]
            assert all(type(box) is GuideBox for box in boxes)
            assert all(held is box for held, box in zip(card.boxes, boxes, strict=True))
        kept = context.renderer.cache.used
        assert all(any(entry["boxes"] is art.rendered.boxes for entry in kept.values())
                   for art in plan.faces.values())
        made.append({card.id: card.boxes for card in record.cards})
    assert made[0] == made[1] and made[0]["alpha"][0].label == "Alpha"
    assert BuildRecord.model_validate_json(record.model_dump_json()).cards[0].boxes == record.cards[0].boxes


def test_pieces_of_kept_entries_are_made_once_a_few_kinds_each_and_forgotten_with_their_entry(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`kept_piece`: what is made of a kept card entry is made once, of at most PIECES_AT_MOST kinds (kinds no longer
    asked for go); an entry not kept, or no longer kept, or in a process that builds once, has it made each time."""
    from cardgen.core import storage
    from cardgen.record import record
    from cardgen.record.record import CardEntry, Dimensions, Pixels, SourceRef, keep_entries, kept_piece

    monkeypatch.setattr(record, "_KEPT_ENTRIES", {})
    monkeypatch.setattr(record, "_PIECES", {})

    def entry(name: str) -> CardEntry:
        return CardEntry(id=name, deck="d", name=name, copies=1, face=f"cards/d/{name}.png", source=SourceRef(file="f"),
                         size_mm=Dimensions(width=63, height=88), bleed_mm=3, dpi=300,
                         pixels=Pixels(width=814, height=1110), hash="h")

    made: list[str] = []

    def piece(card: CardEntry, kind: object) -> str:
        return kept_piece(card, kind, lambda: made.append(f"{card.id}/{kind}") or f"{card.id} as {kind}")

    alpha, beta = entry("alpha"), entry("beta")
    keep_entries("g", {"a": alpha})  # a process that builds once keeps none
    assert [piece(alpha, "json"), piece(alpha, "json")] == ["alpha as json"] * 2 and len(made) == 2
    storage.keep_for_next_builds()
    keep_entries("g", {"a": alpha})
    made.clear()
    assert [piece(alpha, "json"), piece(alpha, "json"), piece(beta, "json")] == \
        ["alpha as json", "alpha as json", "beta as json"]
    assert made == ["alpha/json", "beta/json"]
    for number in range(3 * record.PIECES_AT_MOST):
        piece(alpha, number)
    assert len(record._PIECES[id(alpha)][1]) <= record.PIECES_AT_MOST
    keep_entries("g", {"b": beta})  # alpha is no longer kept: its pieces go
    made.clear()
    piece(alpha, "json")
    assert made == ["alpha/json"] and id(alpha) not in record._PIECES


def test_the_change_report_finds_cards_added_removed_renamed_and_moved(built: Path) -> None:
    """Two records of the same length compare card by card at each place while the entries that differ keep their
    ids; a card renamed in place (its id new), cards swapped, added or removed are found by id all the same."""
    from cardgen.record.changes import diff_records

    record = BuildRecord.read(built / "build.json")
    alpha, beta, na = record.cards

    def report(cards: list) -> tuple:
        changes = diff_records(record, record.model_copy(update={"cards": cards}))
        return ([c.id for c in changes.added], [c.id for c in changes.removed],
                [(c.id, sorted(c.fields)) for c in changes.changed])

    edited = beta.model_copy(update={"fields": {**beta.fields, "power": 9}})
    assert report([alpha, edited, na]) == ([], [], [("beta", ["power"])])
    assert report([alpha, beta.model_copy(update={"id": "gamma"}), na]) == (["gamma"], ["beta"], [])
    assert report([alpha, na, edited]) == ([], [], [("beta", ["power"])])
    assert report([alpha, na]) == ([], ["beta"], [])
    assert report([alpha, beta, na, beta.model_copy(update={"id": "delta"})]) == (["delta"], [], [])


def test_image_hashes_after_edits_in_a_process_building_again_are_made_anew(built: Path) -> None:
    """`image_hashes` in a process that builds again (a block of unchanged cards the last call's): every face and
    back by its path, as the record says, after cards changed (a face, a hash), added and removed."""
    from cardgen.core import storage

    storage.keep_for_next_builds()  # (for this test only: see conftest's `builds_once`)
    record = BuildRecord.read(built / "build.json")
    cards = [record.cards[n % 3].model_copy(update={"face": f"cards/{n}.png", "hash": f"h{n}"})
             for n in range(3 * RUN_ITEMS)]

    def expected(cards: list) -> dict[str, str]:
        return {**{back.image: back.hash for back in record.backs.values()}, **{c.face: c.hash for c in cards}}

    edits = [lambda: None, lambda: cards.__setitem__(5, cards[5].model_copy(update={"hash": "new"})),
             lambda: cards.__setitem__(RUN_ITEMS, cards[RUN_ITEMS].model_copy(update={"face": "cards/moved.png"})),
             lambda: cards.insert(0, cards[7].model_copy(update={"face": "cards/added.png"})),
             lambda: cards.pop(2 * RUN_ITEMS)]
    for number, edit in enumerate(edits):
        edit()
        assert record.model_copy(update={"cards": list(cards)}).image_hashes() == expected(cards), number

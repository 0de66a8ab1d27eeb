"""A running watch's edit takes the last build's record entries and hand-out whole and makes only the changed
cards' (`plan._LastRecord`): after cards changed, added, removed and reordered, and a template edited, the record and
every output are those of a cold build of the edited game."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardgen.build import plan as plan_module
from cardgen.core import storage
from cardgen.record import record as record_module
from tests.test_edit import _same_as_cold
from tests.test_watch_outputs import ALPHA, BETA, NA, _build, _cold, _rows

GAMMA = "Gamma,4,A new card,2"


def _record(folder: Path) -> dict:
    """build.json but what an edit's own record says (the time, the sources' stamps, how many images it drew)."""
    record = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    del record["stats"]["rendered"], record["stats"]["cached"]
    return {key: value for key, value in record.items() if key not in ("built_at", "sources")}


@pytest.fixture
def entries_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """In a process that builds again: the cards whose record entry `record_of` looks at one by one."""
    storage.keep_for_next_builds()
    seen: list[str] = []
    card_entry = plan_module._card_entry
    monkeypatch.setattr(plan_module, "_card_entry", lambda game, card, *rest: seen.append(card.id) or
                        card_entry(game, card, *rest))
    return seen


@pytest.mark.parametrize("rows, template, changed", [
    ([ALPHA, BETA, NA.replace("Plain", "Plainer")], None, ["na"]),  # a card's text
    ([ALPHA, BETA, NA, GAMMA], None, ["gamma"]),  # a card added
    ([ALPHA, NA], None, ["na"]),  # a card removed: the next one's row, in its entry, changes
    ([NA, ALPHA, BETA], None, ["na", "alpha", "beta"]),  # reordered: each card's row, in its entry, changes
    ([ALPHA, BETA, NA], ('fill="#ffffff"', 'fill="#fffff0"'), ["alpha", "beta", "na"]),  # every face
])
def test_a_watchs_edit_makes_the_changed_cards_entries_only_and_a_cold_builds_record_and_outputs(
        tiny_game: Path, entries_made: list[str], rows: list[str], template: tuple[str, str] | None,
        changed: list[str]) -> None:
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    entries_made.clear()
    _rows(tiny_game, rows)
    if template is not None:
        face = tiny_game / "templates" / "tiny" / "face.svg"
        face.write_text(face.read_text().replace(*template))
    _build(tiny_game)
    assert entries_made == changed
    _cold(tiny_game)
    assert _record(out) == _record(cold)
    _same_as_cold(tiny_game, out, cold)


def test_a_watchs_edits_one_after_another_write_a_cold_builds_record_and_outputs(
        tiny_game: Path, entries_made: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each edit starts from the last one's kept plan, record and hand-out (`_LastPlan`, `_LastRecord`,
    `_HandOut.patched`); a card's text edited in its place plans that card's face only."""
    planned: list[str] = []
    artwork_of = plan_module.artwork_of
    monkeypatch.setattr(plan_module, "artwork_of", lambda name, rendered, plan, deck, context, card=None:
                        planned.append(card.id if card else "back") or
                        artwork_of(name, rendered, plan, deck, context, card))
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    back = tiny_game / "templates" / "tiny" / "back.svg"
    edits = [[ALPHA, BETA, NA], [ALPHA, BETA.replace("Bold", "Bolder"), NA], [ALPHA, BETA, NA], "back",
             [ALPHA, BETA, NA, GAMMA], [GAMMA, BETA, NA, ALPHA], [GAMMA, NA, ALPHA],
             [GAMMA, NA.replace("Plain", "Plainer"), ALPHA.replace("Fire", "Water")]]
    for number, rows in enumerate(edits):
        planned.clear()
        if rows == "back":
            back.write_text(back.read_text().replace("#334455", "#334466"))
        else:
            _rows(tiny_game, list(rows))
        _build(tiny_game)
        if number in (1, 2):
            assert planned == ["back", "beta"]
        elif number == len(edits) - 1:
            assert planned == ["back", "na", "alpha"]
        _cold(tiny_game)
        assert _record(out) == _record(cold)
        _same_as_cold(tiny_game, out, cold)
    assert entries_made[-2:] == ["na", "alpha"]


@pytest.mark.parametrize("damage", ["written", "deleted", "replaced"])
def test_a_watch_takes_the_card_images_it_verified_unlooked_at_and_notices_one_changed_behind_its_back(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    """A process that builds again verifies a card image in the cache once; an edit of another card takes it unlooked
    at while the kernel says nothing touched it (`folderwatch.entry_trust`), and verifies it again, and draws it
    again, once it was written in place, deleted or replaced behind the process's back: the outputs are a cold
    build's."""
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    storage.keep_for_next_builds()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainer")])
    _build(tiny_game)  # (the first build of a game in a process watches and verifies its entries)
    record = json.loads((out / "build.json").read_text(encoding="utf-8"))
    beta = plan_module.png_cache(tiny_game / "output").path(next(c["hash"] for c in record["cards"]
                                                               if c["id"] == "beta"))
    good = beta.read_bytes()
    verified: list[str] = []
    verify = plan_module.verify
    monkeypatch.setattr(plan_module, "verify", lambda path: verified.append(path.name) or verify(path))
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainest")])
    _build(tiny_game)
    assert len(verified) == 1  # the edited card's new image only
    verified.clear()
    if damage == "written":
        with beta.open("r+b") as handle:  # in place: the same size
            handle.seek(200)
            handle.write(b"edited")
    elif damage == "deleted":
        beta.unlink()
    else:  # another file renamed over it
        other = beta.with_name("other.tmp")
        other.write_bytes(good[:-6] + b"edited")
        other.replace(beta)
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plain at last")])
    _build(tiny_game)
    assert sorted(verified) == sorted([beta.name, verified[-1]]) and len(verified) == 2
    assert beta.read_bytes() == good
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, cold)


def test_an_entry_is_trusted_until_the_kernel_names_it_or_cannot_tell_and_never_without_inotify(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry trusted is taken until the kernel names it, or until the watch cannot tell (its queue overflowed:
    nothing trusted); without inotify, or in a process that builds once, there is no watch: every entry looked at."""
    import sys

    from cardgen.core import folderwatch

    entry, other = tmp_path / "ab" / "abc.png", str(tmp_path / "ab" / "other.png")
    entry.parent.mkdir()
    entry.write_bytes(b"x")
    monkeypatch.setattr(folderwatch, "_WATCHES", {})
    assert folderwatch.entry_trust(tmp_path) is None  # builds once: never watches
    storage.keep_for_next_builds()
    watched = folderwatch.entry_trust(tmp_path)
    assert watched is not None
    watched.trust([str(entry)])
    assert folderwatch.entry_trust(tmp_path) is watched
    assert watched.untouched([str(entry), other]) == [True, False]
    entry.write_bytes(b"y")
    assert folderwatch.entry_trust(tmp_path) is watched and watched.untouched([str(entry)]) == [False]
    watched.trust([str(entry)])
    queue = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    for _ in range(queue // 2 + 1):  # the kernel's queue overflows (two files: like events are merged)
        entry.write_bytes(b"z")
        Path(other).write_bytes(b"z")
    again = folderwatch.entry_trust(tmp_path)
    assert again is not None and again is not watched and again.untouched([str(entry)]) == [False]
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # (an import of it fails)
    again.close()
    assert folderwatch.entry_trust(tmp_path) is None


def test_a_process_watches_at_most_so_many_folders_and_notes_at_most_so_many_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond WATCHED_AT_MOST folders (output and cache folders alike) the oldest watch is closed and trusts nothing;
    beyond NAMES_AT_MOST files changed and not looked at, the watch says it cannot tell and is begun anew."""
    from cardgen.core import folderwatch

    monkeypatch.setattr(folderwatch, "_WATCHES", {})
    monkeypatch.setattr(folderwatch, "WATCHED_AT_MOST", 2)
    storage.keep_for_next_builds()
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for folder in (first, second, third):
        folder.mkdir()
    watch = folderwatch.entry_trust(first)
    assert watch is not None
    watch.trust([str(first / "a")])
    assert folderwatch.changed_since(second) is None  # (the first question: not known)
    assert folderwatch.entry_trust(third) is not None
    assert list(folderwatch._WATCHES) == [second, third] and not watch.whole \
        and watch.untouched([str(first / "a")]) == [False]
    assert folderwatch.changed_since(second) == set()
    monkeypatch.setattr(folderwatch, "NAMES_AT_MOST", 2)
    for name in "abc":
        (second / name).write_bytes(b"x")
    assert folderwatch.changed_since(second) is None


def _sources(folder: Path) -> list[str]:
    """The files build.json says the build read."""
    return sorted(json.loads((folder / "build.json").read_text(encoding="utf-8"))["sources"])


def test_a_watchs_record_lists_the_files_its_cards_draw_after_edits_as_a_cold_build(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the cards draw, counted again only at the changed cards' places (`plan._FilesDrawn`): a file no card
    draws any more leaves the record's sources, one a changed card draws comes in, as in a cold build's; the pieces
    kept of card entries are those of the entries kept."""
    from PIL import Image

    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    for kept in (record_module, "_PIECES"), (record_module, "_KEPT_ENTRIES"), (plan_module, "_LAST_RECORDS"):
        monkeypatch.setattr(*kept, {})  # (none of earlier tests' games)
    storage.keep_for_next_builds()
    face = tiny_game / "templates" / "tiny" / "face.svg"
    drawn = "{% if card.power == 2 %}{{ image('../../art/mark.png', 10, 10, 50, 50) }}{% endif %}</svg>"
    face.write_text(face.read_text().replace("</svg>", drawn))
    (tiny_game / "art").mkdir()  # outside the game's folder: the record lists it among its sources when drawn
    Image.new("RGB", (40, 40), "red").save(tiny_game / "art" / "mark.png")
    plain = "Beta,5,Plain words,1"
    seen = []
    for rows in ([ALPHA, plain, NA], [ALPHA, BETA, NA], [ALPHA, plain, NA], [NA, BETA, ALPHA, GAMMA], [NA, GAMMA]):
        _rows(tiny_game, rows)
        _build(tiny_game)
        _cold(tiny_game)
        assert _sources(out) == _sources(cold)
        seen.append(_sources(out))
        # the pieces kept are those of the entries kept, no other (`record._keep_changed`, by the few that changed)
        assert set(record_module._PIECES) == set(map(id, record_module._KEPT_ENTRIES["tiny"].values()))
    mark = set(seen[1]) - set(seen[0])  # Beta draws the image
    assert mark == {"art/mark.png"} and not mark & set(seen[2]) and mark <= set(seen[3]) and \
        not mark & set(seen[4])


def test_a_watchs_stamps_noted_after_edits_are_its_stamps_files_and_seal_its_outputs(tiny_game: Path) -> None:
    """An edit appends its stamps' changes to the stamps file, and the process keeps what makes the stamps whole for
    its next build (`freshness._append_stamps`), made once the rebuild has reported (`storage.run_after_rebuild`, as a
    watch does after each) or when read first: after edits that change, add, remove and reorder cards they are what
    the file holds, as the process's own; they seal every output file as it is; the outputs are a cold build's, and
    the next build says up to date."""
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.load import freshness
    from cardgen.outputs import stage_names

    out, stamps = tiny_game / "output" / "tiny", tiny_game / "output" / "tiny" / freshness.STAMPS
    storage.keep_for_next_builds()
    edits = ([ALPHA, BETA, NA], [ALPHA, BETA, NA.replace("Plain", "Plainer")], [ALPHA, BETA, NA, GAMMA],
             [NA, GAMMA, ALPHA], [GAMMA, NA.replace("Plain", "Plainest"), ALPHA], [GAMMA, NA, ALPHA, BETA])
    for number, rows in enumerate(edits):
        _rows(tiny_game, rows)
        _build(tiny_game)
        if number % 2:
            storage.run_after_rebuild()
        identity = storage.file_identity(stamps)
        assert isinstance(freshness._KNOWN_STAMPS[identity], dict) == bool(number % 2 or number < 2), number
        assert freshness._read_stamps(stamps) == freshness.parse_stamps(stamps.read_text())[0], number
        assert identity in freshness._WRITTEN
    assert stamps.read_text().count("\n") >= 4  # the edits' changes appended, not the stamps written whole
    assert freshness._read_stamps(stamps)["outputs"] == freshness._output_stamp(out)
    assert build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=1), stages=stage_names()).up_to_date
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


def test_a_watchs_record_hand_out_and_files_drawn_compare_every_card_when_they_did_not_follow_the_last_plan(
        tiny_game: Path, entries_made: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan made from the game's last one names the places it changed (`BuildPlan.since`); the record, the hand-out
    and the files drawn take only those when they last followed that very plan (`plan.changed_since`). A build
    stopped after its plan (before its record, hand-out and files drawn) leaves them one plan behind: the next edit
    compares every card, so the card that build changed is in the record, the card files and the sources as in a
    cold build."""
    from PIL import Image

    from cardgen.build import build as build_module

    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    face = tiny_game / "templates" / "tiny" / "face.svg"
    drawn = "{% if card.power == 2 %}{{ image('../../art/mark.png', 10, 10, 50, 50) }}{% endif %}</svg>"
    face.write_text(face.read_text().replace("</svg>", drawn))
    (tiny_game / "art").mkdir()
    Image.new("RGB", (40, 40), "red").save(tiny_game / "art" / "mark.png")
    _rows(tiny_game, [ALPHA, "Beta,5,Plain words,1", NA])
    _build(tiny_game)

    def stopped(plan: plan_module.BuildPlan) -> None:
        raise KeyboardInterrupt  # (a Ctrl-C after the plan)

    monkeypatch.setattr(build_module, "record_of", stopped)
    _rows(tiny_game, [ALPHA, BETA, NA])  # Beta now draws the image
    with pytest.raises(KeyboardInterrupt):
        _build(tiny_game)
    monkeypatch.setattr(build_module, "record_of", plan_module.record_of)
    entries_made.clear()
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainer")])
    _build(tiny_game)
    assert entries_made == ["beta", "na"]
    _cold(tiny_game)
    assert _record(out) == _record(cold)
    assert "art/mark.png" in _sources(out) and _sources(out) == _sources(cold)
    _same_as_cold(tiny_game, out, cold)



def test_a_watchs_plan_looks_up_the_renders_its_layout_check_made_anew_only_when_it_followed_the_check_before(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan made from the game's last one looks up the face renders of the places the layout check did not take
    whole from the check before (`layout.checked_anew`) when its last plan took its renders from that check; a build
    stopped after its check (before its plan) leaves the plan one check behind: the next one looks up every card's,
    and plans the card that build changed as a cold build does."""
    from cardgen.build import build as build_module
    from cardgen.svg.context import BuildContext
    from cardgen.svg.templates import SVGRenderer
    from cardgen.validate.layout import checked_anew

    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    storage.keep_for_next_builds()
    looked_up: list[int] = []
    faces_done = SVGRenderer.faces_done
    monkeypatch.setattr(SVGRenderer, "faces_done", lambda self, memos: looked_up.append(len(memos)) or
                        faces_done(self, memos))
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainer")])
    _build(tiny_game)
    assert looked_up == [1]  # the edited card's render only
    # (a game loaded again, as another command in this process would: its renderer made no check)
    assert checked_anew(BuildContext.load(tiny_game, "tiny", tiny_game / "output")) is None

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # (a Ctrl-C after the layout check)

    monkeypatch.setattr(build_module, "plan_build", stopped)
    _rows(tiny_game, [ALPHA.replace("Fire", "Water"), BETA, NA.replace("Plain", "Plainer")])
    with pytest.raises(KeyboardInterrupt):
        _build(tiny_game)
    monkeypatch.setattr(build_module, "plan_build", plan_module.plan_build)
    looked_up.clear()
    _rows(tiny_game, [ALPHA.replace("Fire", "Water"), BETA, NA.replace("Plain", "Plainest")])
    _build(tiny_game)
    assert looked_up == [3]  # every card's
    _cold(tiny_game)
    assert _record(out) == _record(cold)
    _same_as_cold(tiny_game, out, cold)


def test_a_watchs_layout_check_takes_the_last_checks_values_unlooked_up_while_its_caches_saved_them(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout check takes the last check's renders and findings whole without looking each value up in the caches
    when both caches hold what the last check's build saved of them in this process (`KeptByGame.copied_from`); an
    entry read from its file again (as another process wrote it) has each value looked up. The outputs are a cold
    build's either way."""
    import operator

    from cardgen.validate import layout

    class Counting:
        """The operator module, counting the values compared by identity (`_reused`'s look-ups)."""

        def __init__(self) -> None:
            self.compared = 0

        def __getattr__(self, name: str) -> object:
            return getattr(operator, name)

        def is_(self, a: object, b: object) -> bool:
            self.compared += 1
            return a is b

    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    storage.keep_for_next_builds()
    counting = Counting()
    monkeypatch.setattr(layout, "operator", counting)
    texts = iter(f"Plain {number}" for number in range(10))
    for _ in range(3):
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
        _build(tiny_game)
    counting.compared = 0
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
    _build(tiny_game)
    assert counting.compared == 0  # the caches as the last build saved them: nothing looked up
    storage._KNOWN_ENTRIES.clear()  # each entry read from its file, as another process wrote it
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
    _build(tiny_game)
    assert counting.compared > 0
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, cold)


def test_the_artworks_by_key_are_the_last_builds_patched_at_the_places_holding_another(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that builds again, each artwork by its image key is the last call's dict with the places that
    hold another artwork taken out and put in (`plan._arts_by_key`): the same artworks by the same keys as made
    whole, also when the changed places swap their keys or an artwork takes a key another holds (the later's)."""
    from types import SimpleNamespace

    monkeypatch.setattr(storage, "_DERIVED", {})
    storage.keep_for_next_builds()
    read: list[str] = []  # the keys read (`plan._KEY`): the changed places' only, when patched
    monkeypatch.setattr(plan_module, "_KEY", lambda art: read.append(art.key) or art.key)

    def arts(*keys: str) -> list:
        return [SimpleNamespace(key=key) for key in keys]

    def whole(every: list) -> dict:
        return {key: art for key, art in zip([art.key for art in every], every)}

    every = arts("a", "b", "c", "d")
    assert plan_module._arts_by_key(every, "g") == whole(every)
    for change in ([0], [1, 2], [3]):
        every = list(every)
        for place, art in zip(change, arts(*[f"{every[place].key}'" for place in change])):
            every[place] = art
        read.clear()
        assert plan_module._arts_by_key(every, "g") == whole(every), change
        assert read == [every[place].key for place in change]
    swapped = [every[1], every[0], *every[2:]]
    assert plan_module._arts_by_key(swapped, "g") == whole(swapped)
    shared = [*swapped[:3], arts(swapped[0].key)[0]]  # (a key two hold: the later's)
    assert plan_module._arts_by_key(shared, "g") == whole(shared)
    assert plan_module._arts_by_key(swapped, "g") == whole(swapped)

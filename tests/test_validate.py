"""cardgen validate: each layer's findings, the report formats, the exit code, and validation before a build."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from cardgen.build.build import BuildOptions, build_game
from cardgen.commands.cli import main
from cardgen.core.errors import CardgenError
from cardgen.validate import validate_game
from tests.test_validate_support import FACE, MANIFEST, REPO, mini_workspace, with_manifest, write_game


@pytest.fixture(name="ws")
def _ws(tmp_path: Path) -> Path:
    return mini_workspace(tmp_path)


def messages(findings: list) -> str:
    return "\n".join(str(f) for f in findings)


def test_clean_game_has_no_findings(ws: Path) -> None:
    assert validate_game(ws, "mini") == []


def test_scrapbots_validates_with_zero_findings() -> None:
    findings = validate_game(REPO, "scrapbots")
    assert [f for f in findings if f.severity == "error"] == []
    assert findings == []


# ---------------------------------------------------------------- layer 1: manifest

def test_manifest_unknown_key_names_path_line_and_suggestion(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("        text: [text]", "        txet: [text]"))
    [finding] = validate_game(ws, "mini")
    assert str(finding) == ("data/mini/game.yaml:21: error: decks.main.txet: unknown key 'txet'; "
                            "did you mean 'text'?")


def test_manifest_wrong_value_names_key_and_line(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("dpi: 100", "dpi: lots"))
    [finding] = validate_game(ws, "mini")
    assert finding.file == "data/mini/game.yaml" and finding.row == 4 and "dpi:" in finding.message


def test_rule_without_a_kind_is_a_manifest_error(ws: Path) -> None:
    write_game(ws, manifest=with_manifest("rules:\n  - {id: r, message: m, where: \"power > 1\"}\n"))
    [finding] = validate_game(ws, "mini")
    assert "exactly one of check:, total:, expect:, terms:, refers: or text:" in finding.message and finding.row == 23


# ---------------------------------------------------------------- layer 2: data schema

def test_schema_findings_name_file_row_column(ws: Path) -> None:
    write_game(ws, files={"cards.csv": """\
        name,kind,power,count,text,powr
        Alpha,Unit,11,1,ok,
        Beta,Spel,x,1,ok,
        Alpha,Unit,1,1,ok,
         Gamma ,Unit,1,1,ok,
        Delta,Unit,#REF!,1,ok,
    """})
    findings = validate_game(ws, "mini", layout=False)
    shown = messages(findings)
    assert "data/mini/cards.csv:2:power: error: 11.0 is above the maximum 10" in shown or \
        "data/mini/cards.csv:2:power: error: 11 is above the maximum 10" in shown
    assert "data/mini/cards.csv:3:kind: error: 'Spel' is not one of Unit, Spell; did you mean 'Spell'?" in shown
    assert "data/mini/cards.csv:3:power: error: 'x' is not a whole number" in shown
    assert "data/mini/cards.csv:4: error: duplicate card id 'alpha' (also at data/mini/cards.csv:2)" in shown
    assert "data/mini/cards.csv:5:name: warning: ' Gamma ' has spaces at its start or end" in shown
    assert "data/mini/cards.csv:6:power: error: the spreadsheet shows the error #REF! here" in shown
    assert ("data/mini/cards.csv:1:powr: warning: column 'powr' is not declared under fields: and no template "
            "or rule uses it; did you mean 'power'?") in shown


def test_missing_required_column_is_reported_once(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "nmae,kind\nA,Unit\nB,Unit\nC,Unit\n"})
    findings = [f for f in validate_game(ws, "mini", layout=False) if f.rule == "missing-column"]
    assert [str(f) for f in findings] == ["data/mini/cards.csv:1:name: error: required column 'name' is missing "
                                          "from the header; did you mean 'nmae'? (missing-column)"]


def test_zero_and_negative_copies(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,count\nA,0\nB,-2\n"})
    shown = messages(validate_game(ws, "mini"))
    assert "data/mini/cards.csv:2: warning: card 'a' has 0 copies; it is left out of the build" in shown
    assert "data/mini/cards.csv:3:count: error: copy count -2 is negative; expected 0 or more" in shown


# ---------------------------------------------------------------- layer 3: references

def test_unknown_icon_in_text_is_found_before_rendering(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nA,Pay 2 :scarp: now\n"})
    findings = validate_game(ws, "mini")
    assert [str(f) for f in findings] == [
        "data/mini/cards.csv:2:text: error: unknown icon 'scarp'; did you mean 'scrap'? (`cardgen icons search "
        "WORD` searches the 4,137 bundled game-icons.net icons and icons/) (:scarp: in the text) (unknown-icon)"]


def test_template_field_missing_from_data_names_template_line(ws: Path) -> None:
    write_game(ws, templates={"face.svg": FACE.replace("card.text", "card.txt"), "back.svg": "<svg/>"})
    findings = validate_game(ws, "mini")
    assert len(findings) == 1 and findings[0].file == "templates/mini/face.svg" and findings[0].row == 4
    assert findings[0].message == "the template uses card.txt but deck 'main' has no column 'txt'; did you mean 'text'?"


def test_missing_template_partial_font_and_icon(ws: Path) -> None:
    face = ('{% include "parts.svg" %}<svg>{{ icon("no-such-icon", 0, 0, 10) }}'
            '{{ text_line(card.name, 0, 0, 10, 10, font="Comic Sans") }}</svg>\n')
    write_game(ws, manifest=MANIFEST.replace("back: back.svg", "back: backside.svg"),
               templates={"face.svg": face})
    found = {(f.rule, f.file, f.row) for f in validate_game(ws, "mini")}
    assert ("missing-template", "templates/mini/face.svg", 1) in found  # parts.svg, where it is included
    assert ("missing-template", "data/mini/game.yaml", 20) in found  # backside.svg, the deck's back
    assert ("unknown-icon", "templates/mini/face.svg", 1) in found
    assert ("missing-font", "templates/mini/face.svg", 1) in found
    assert len(found) == 4


def test_jinja_syntax_error_names_template_line(ws: Path) -> None:
    write_game(ws, templates={"face.svg": "<svg>\n{{ card.name \n{% if %}</svg>\n", "back.svg": "<svg/>"})
    findings = validate_game(ws, "mini")
    assert [(f.rule, f.file) for f in findings] == [("template-syntax", "templates/mini/face.svg")]
    assert findings[0].row in (2, 3)


def test_icon_alias_to_missing_file(ws: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("scrap: hexagonal-nut", "scrap: hexagonal-nutt"))
    [finding] = [f for f in validate_game(ws, "mini") if f.file == "data/mini/game.yaml"]
    assert finding.message == ("icons.scrap: no icon named 'hexagonal-nutt' (neither a bundled game-icons.net icon "
                               "nor icons/**/hexagonal-nutt.svg); did you mean 'hexagonal-nut'?")
    assert finding.row == 9


# ---------------------------------------------------------------- layer 5: layout

def test_text_overflow_is_an_error_naming_card_and_field(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nWordy," + "a very long rules text " * 40 + "\n"})
    [finding] = validate_game(ws, "mini")
    assert finding.severity == "error" and finding.rule == "text-overflow"
    assert (finding.file, finding.row, finding.column) == ("data/mini/cards.csv", 2, "text")
    assert finding.message.startswith("card 'wordy': text does not fit its box even at the minimum size")
    assert "px high (1.2 x the size 8.0px each) and the box is 100.0px high" in finding.message


def test_overflow_says_the_line_height_does_not_fit_and_by_how_much(ws: Path) -> None:
    """12 pt text (50 px at 300 DPI) in a 50 px box: a line is 1.2 x the size, 60 px, 10 px more than the box."""
    face = FACE.replace("text_box(card.text, geo.safe.x, 60, geo.safe.width, 100, 12, min_size=8)",
                        'text_box(card.text, geo.safe.x, 60, geo.safe.width, 50, "12pt")')
    write_game(ws, manifest=MANIFEST.replace("dpi: 100", "dpi: 300"), files={"cards.csv": "name,text\nA,Hi\n"},
               templates={"face.svg": face, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    [finding] = validate_game(ws, "mini")
    assert finding.rule == "text-overflow" and finding.column == "text"
    assert finding.message.endswith("'Hi': one line is 60.0px high (1.2 x the size 50.0px) and the box is 50.0px "
                                    "high, 10.0px too short; make the box taller or min_size smaller")


def test_overflow_names_the_word_wider_than_its_box(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nA,a Pneumonoultramicroscopicsilicovolcanoconiosis b\n"})
    [finding] = validate_game(ws, "mini")  # 45 letters of Roboto Mono at 8 px (0.6 em each): 216 px, box 141.5 px
    assert ("the word 'Pneumonoultramicroscopicsilico' is 216.0px wide and the box 141.5px, 74.5px too narrow"
            in finding.message)


def test_text_outside_safe_zone_is_a_warning(ws: Path) -> None:
    face = FACE.replace("text_line(card.name, geo.safe.x,", "text_line(card.name, 2,")
    write_game(ws, files={"cards.csv": "name,text\nAlpha,Hi\n"},
               templates={"face.svg": face, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    [finding] = validate_game(ws, "mini")
    assert (finding.rule, finding.severity, finding.file, finding.row) == ("safe-zone", "warning",
                                                                           "data/mini/cards.csv", 2)
    assert finding.message.startswith("card 'alpha': text 'Alpha' crosses the left edge of the safe zone")


def test_cards_crossing_the_safe_zone_at_one_template_box_are_one_finding(ws: Path) -> None:
    """Five cards whose name's box starts left of the safe zone: one warning at the template line that draws the
    name, saying how many cards and naming a few, not five warnings (the nanDeck port had 76)."""
    face = FACE.replace("text_line(card.name, geo.safe.x,", "text_line(card.name, 2,")
    names = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    write_game(ws, files={"cards.csv": "name,text\n" + "".join(f"{n},Hi\n" for n in names)},
               templates={"face.svg": face, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    [finding] = validate_game(ws, "mini")
    assert (finding.rule, finding.file, finding.row, finding.column) == ("safe-zone", "templates/mini/face.svg", 3,
                                                                         "name")
    assert finding.message == ("text of column 'name' crosses the left edge of the safe zone (x 16-157, y 16-236 px) "
                               "on 5 cards of deck 'main' drawn by templates/mini/face.svg ('alpha', 'beta', 'gamma' "
                               "and 2 more); it may be cut off: move or shrink its box in the template")


def test_missing_glyph_is_a_warning_naming_the_font(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nA,Fire 🔥 and Ωmega and 火\n"})
    findings = validate_game(ws, "mini")
    assert [f.rule for f in findings] == ["missing-glyph"]
    assert "font 'Roboto Mono' (RobotoMono-Regular.ttf) has no glyph for" in findings[0].message
    assert "'🔥' (U+1F525)" in findings[0].message and findings[0].column == "text"


# ---------------------------------------------------------------- the command and the build

def test_cli_text_output_and_exit_code(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,power\nA,99\n"})
    result = CliRunner().invoke(main, ["--root", str(ws), "validate", "mini"])
    assert result.exit_code == 1
    assert result.output.splitlines() == ["data/mini/cards.csv:2:power: error: 99 is above the maximum 10",
                                          "mini: 1 error, 0 warnings (fix the errors before building)"]


def test_cli_json_output(ws: Path) -> None:
    write_game(ws, files={"cards.csv": "name,power\n A,1\n"})
    result = CliRunner().invoke(main, ["--root", str(ws), "validate", "--format", "json"])
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["ok"] is True and report["games"]["mini"]["warnings"] == 1
    assert report["games"]["mini"]["findings"][0] == {"message": "' A' has spaces at its start or end; they are "
                                                      "removed", "file": "data/mini/cards.csv", "row": 2,
                                                      "column": "name", "severity": "warning", "rule": "spaces"}


def test_build_stops_on_errors_unless_forced(ws: Path, tmp_path: Path) -> None:
    write_game(ws, files={"cards.csv": "name,text\nWordy," + "a very long rules text " * 40 + "\n"})
    out = tmp_path / "out"
    try:
        build_game(ws, "mini", BuildOptions(out, jobs=1))
        raise AssertionError("the build should have stopped")
    except CardgenError as exc:
        assert [p.rule for p in exc.problems] == ["text-overflow"]
    assert not (out / "mini").exists()
    result = build_game(ws, "mini", BuildOptions(out, jobs=1, force=True))
    assert (out / "mini" / "build.json").is_file()
    assert [w.rule for w in result.findings] == ["text-overflow"]


def test_build_shows_warnings_once(ws: Path, tmp_path: Path) -> None:
    write_game(ws, files={"cards.csv": "name,count\nA,0\nB,1\n"})
    result = build_game(ws, "mini", BuildOptions(tmp_path / "out", jobs=1))
    assert [str(w) for w in result.findings] == [
        "data/mini/cards.csv:2: warning: card 'a' has 0 copies; it is left out of the build"]




def test_safe_zone_respects_text_anchor(ws: Path) -> None:
    centred = '<svg {{ geo.svg_attrs }}><text x="{{ geo.width / 2 }}" y="100" font-size="12" ' \
              'text-anchor="middle">{{ card.name }}</text></svg>\n'
    write_game(ws, templates={"face.svg": centred, "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    assert validate_game(ws, "mini") == []
    write_game(ws, templates={"face.svg": centred.replace("middle", "end").replace("geo.width / 2", "20"),
                              "back.svg": "<svg {{ geo.svg_attrs }}/>"})
    assert {(f.rule, f.message.split(" crosses")[1][:13]) for f in validate_game(ws, "mini")} == {
        ("safe-zone", " the left edg")}


def test_cli_validates_every_game_and_reports_each(ws: Path) -> None:
    write_game(ws, "broken", manifest=MANIFEST.replace("title: Mini", "titel: Mini"))
    result = CliRunner().invoke(main, ["--root", str(ws), "validate"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "data/broken/game.yaml:1: error: title: this key is required",
        "data/broken/game.yaml:1: error: titel: unknown key 'titel'; did you mean 'title'?",
        "broken: 2 errors, 0 warnings (fix the errors before building)",
        "mini: 0 errors, 0 warnings (ok)",
    ]


def test_rule_naming_an_unknown_deck(ws: Path) -> None:
    write_game(ws, manifest=with_manifest("rules:\n  - {id: r, message: m, decks: [mian], check: \"power >= 0\"}\n"))
    [finding] = validate_game(ws, "mini")
    assert finding.message == "rule 'r' cannot be checked: unknown deck 'mian' in decks:; the decks are main"


def test_a_card_deck_without_a_back_warns_once_saying_what_each_output_does(ws: Path, tmp_path: Path) -> None:
    write_game(ws, manifest=MANIFEST.replace("        back: back.svg\n", "") + "    print: {duplex: short-edge}\n")
    [finding] = validate_game(ws, "mini")
    assert (finding.severity, finding.rule, finding.row) == ("warning", "no-back", 17)  # the line of `main:`
    assert "deck 'main' has no back" in finding.message
    assert "blank back page" in finding.message and "Tabletop Simulator a plain dark grey back" in finding.message
    result = CliRunner().invoke(main, ["--root", str(ws), "build", "--out", str(tmp_path / "o"), "-j", "1"])
    assert result.exit_code == 0, result.output
    assert result.output.count("has no back") == 1


def test_text_runs_read_each_attribute_of_a_text_and_its_spans() -> None:
    from cardgen.validate.layout import TextRun, text_runs

    svg = ('<svg><text x="10" y="20.5" font-size="12" font-family="&apos;Fira Sans&apos;, serif" '
           'font-weight="bold" stroke-x="99" xml:space="preserve">'
           '<tspan x="30" font-style="italic">A &amp; B</tspan><tspan stroke-x="7"> C </tspan><tspan>  </tspan></text>'
           '<text text-anchor="middle" x="5" x="6" font-size="big">plain <b>D</b></text>'
           "<text x='40' y=\"8\">E</text></svg>")
    assert text_runs(svg, "Default") == [
        TextRun("A & B", 30.0, 20.5, 12.0, "Fira Sans", True, True),  # the span's x and style, the text's weight
        TextRun(" C ", 10.0, 20.5, 12.0, "Fira Sans", True, False),  # stroke-x is not x: the text's x
        TextRun("plain D", 5.0, 0.0, 16.0, "Default", False, False, "middle"),  # first x; a size not a number
        TextRun("E", 0.0, 8.0, 16.0, "Default", False, False),  # single-quoted attributes are not read
    ]


# ---------------------------------------------------------------- the layout check shared with helper processes

MANY_CARDS = "name,power,text\n" + "".join(
    f"Card {n},{n % 4},{'a very long rules text ' * 40 if n % 5 == 0 else 'Fire 🔥' if n % 3 == 0 else 'Plain'}\n"
    for n in range(1, 16))
DIVIDING_FACE = FACE.replace("</svg>", "<desc>{{ 12 / card.power }}</desc></svg>")  # power 0: a render fails


class _Pool:
    """Helper processes for the layout check, as a build's render pool gives them: forked, noting every chunk
    a helper began (not taken back by the check)."""

    def __init__(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
        self.futures: list = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.futures.append(self.pool.submit(fn, *args, **kwargs))
        return self.futures[-1]

    def grow(self) -> None:
        pass


class _Refusing(_Pool):
    """Helpers that begin every chunk and make nothing of it (each saw other inputs, or was killed)."""

    def __init__(self, outcome: object) -> None:
        self.outcome, self.futures = outcome, []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        from concurrent.futures import Future

        future: Future = Future()
        future.set_running_or_notify_cancel()
        (future.set_exception if isinstance(self.outcome, Exception) else future.set_result)(self.outcome)
        self.futures.append(future)
        return future


class _FirstDone(_Pool):
    """Helpers that make the first chunk at once (in this process) and begin no other: the check takes those back."""

    def __init__(self) -> None:
        self.futures = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        from concurrent.futures import Future

        future: Future = Future()
        if not self.futures:
            future.set_result(fn(*args, **kwargs))
        self.futures.append(future)
        return future


def _checked(ws: Path, helpers: object = None) -> tuple[list, dict]:
    """The findings of validating `mini` (with `helpers`), and the SVG of every render by (template, deck, card)."""
    from cardgen.svg.context import BuildContext
    from cardgen.validate import validate_context

    context = BuildContext.load(ws, "mini")
    findings = validate_context(context, helpers=helpers)  # type: ignore[arg-type]
    return findings, {memo: rendered.svg for memo, rendered in context.renderer.done.items()}


def test_a_large_layout_check_shares_its_renders_with_helpers_and_finds_what_it_finds_alone(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cardgen.validate.layout as layout

    write_game(ws, files={"cards.csv": MANY_CARDS}, templates={"face.svg": DIVIDING_FACE, "back.svg": "<svg/>"})
    alone, alone_svgs = _checked(ws)
    assert {f.rule for f in alone} == {"text-overflow", "missing-glyph", "render", "safe-zone"}
    monkeypatch.setattr(layout, "SHARE_FROM", 4)
    monkeypatch.setattr(layout, "SHARE_CHUNK", 2)
    helpers = _Pool()
    try:
        shared, shared_svgs = _checked(ws, helpers)
    finally:
        helpers.pool.shutdown()
    assert len(helpers.futures) == 8 and any(not future.cancelled() for future in helpers.futures)
    assert shared == alone and shared_svgs == alone_svgs and len(alone_svgs) == 13  # 15 cards, 3 fail, 1 back


def test_a_helpers_chunk_is_kept_as_soon_as_it_is_done_between_the_checks_own_renders(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cardgen.validate.layout as layout

    write_game(ws, files={"cards.csv": MANY_CARDS}, templates={"face.svg": DIVIDING_FACE, "back.svg": "<svg/>"})
    alone = _checked(ws)
    monkeypatch.setattr(layout, "SHARE_FROM", 4)
    monkeypatch.setattr(layout, "SHARE_CHUNK", 2)
    events: list[str] = []
    made, kept = layout.LayoutChecker._made, layout.LayoutChecker._kept

    def noted(event: str, step: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: Any, *args: Any) -> Any:
            if self.helpers is not None:  # the check's, not the helper's own (made here at submit)
                events.append(event)
            return step(self, *args)
        return run

    monkeypatch.setattr(layout.LayoutChecker, "_made", noted("made", made))
    monkeypatch.setattr(layout.LayoutChecker, "_kept", noted("kept", kept))
    helpers = _FirstDone()
    assert _checked(ws, helpers)[0] == alone[0] and len(helpers.futures) == 8
    # the helper's chunk (2 renders) kept before this process made its first render; then each of its own kept
    assert events[:2] == ["kept", "kept"] and events[2] == "made" and events.count("made") == 14


def test_the_checks_own_renders_let_the_pools_threads_in_quickly_while_it_shares(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's threads take a helper's results in and hand it its next chunk: while the check renders its own
    share, a thread that wants the interpreter lock gets it after SHARE_SWITCH_SECONDS, not Python's 5 ms (the
    helpers idled half the time); the interval is Python's again once the check is done, even when it fails."""
    import sys

    import cardgen.validate.layout as layout

    write_game(ws, files={"cards.csv": MANY_CARDS}, templates={"face.svg": DIVIDING_FACE, "back.svg": "<svg/>"})
    monkeypatch.setattr(layout, "SHARE_FROM", 4)
    monkeypatch.setattr(layout, "SHARE_CHUNK", 2)
    intervals: list[float] = []
    made = layout.LayoutChecker._made

    def noted(self: Any, *args: Any) -> Any:
        if self.helpers is not None:
            intervals.append(sys.getswitchinterval())
        return made(self, *args)

    monkeypatch.setattr(layout.LayoutChecker, "_made", noted)
    before = sys.getswitchinterval()
    _checked(ws, _FirstDone())
    assert intervals and all(value == pytest.approx(layout.SHARE_SWITCH_SECONDS) for value in intervals)
    assert sys.getswitchinterval() == before

    def failing(self: Any, *args: Any) -> Any:
        if self.helpers is not None:  # (the helper's renders made at submit)
            raise KeyboardInterrupt
        return made(self, *args)

    monkeypatch.setattr(layout.LayoutChecker, "_made", failing)
    with pytest.raises(KeyboardInterrupt):
        _checked(ws, _FirstDone())
    assert sys.getswitchinterval() == before


@pytest.mark.parametrize("outcome", [None, OSError("killed")])
def test_renders_a_helper_makes_nothing_of_are_made_by_the_check_itself(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       outcome: object) -> None:
    import cardgen.validate.layout as layout

    write_game(ws, files={"cards.csv": MANY_CARDS}, templates={"face.svg": DIVIDING_FACE, "back.svg": "<svg/>"})
    alone = _checked(ws)
    monkeypatch.setattr(layout, "SHARE_FROM", 4)
    helpers = _Refusing(outcome)
    assert _checked(ws, helpers) == alone and len(helpers.futures) == 1


def test_a_helper_that_would_render_other_inputs_makes_nothing(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cardgen.validate.layout as layout
    from cardgen.load.manifest import load_game
    from cardgen.svg.templates import render_inputs

    monkeypatch.setattr(layout, "_HELPING", {})  # a helper process setting the game up
    loaded = render_inputs(load_game(ws, "mini"))  # what the check loaded
    (ws / "templates" / "mini" / "back.svg").write_text("<svg/>")  # saved before the helper set the game up
    assert layout.render_share(ws, "mini", loaded, [("back.svg", "main", None)]) is None
    [(rendered, findings)] = layout.render_share(ws, "mini", render_inputs(load_game(ws, "mini")),
                                                 [("back.svg", "main", None)]) or []
    assert rendered is not None and rendered.svg == "<svg/>" and findings == []

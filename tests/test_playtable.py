"""The gallery's playtest table in headless chromium: a seeded shuffle deals the order the same generator gives in
Python, the odds are the hypergeometric computed here, and draw, flip, discard, put back, deal and reset move the
cards they should. The page is driven by a script appended to a copy of it (chromium's --dump-dom shows the DOM
after its scripts ran)."""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from tests.test_browser import CHROMIUM, FLAGS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new game of two decks, built."""
    root = tmp_path_factory.mktemp("table")
    assert CliRunner().invoke(main, ["--root", str(root), "init", "quest", "--decks", "heroes,foes"]).exit_code == 0
    result = CliRunner().invoke(main, ["--root", str(root), "build", "quest", "-j", "1"])
    assert result.exit_code == 0, result.output
    return root / "output" / "quest"


def mulberry32(seed: int):
    """The page's generator, in Python: uint32 arithmetic as JavaScript's Math.imul and >>> do it."""
    a = seed & 0xFFFFFFFF

    def imul(x: int, y: int) -> int:
        return (x * y) & 0xFFFFFFFF

    def random() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = imul(a ^ (a >> 15), 1 | a)
        t = ((t + imul(t ^ (t >> 7), 61 | t)) & 0xFFFFFFFF) ^ t
        return (t ^ (t >> 14)) / 4294967296

    return random


def shuffled(cards: list[str], seed: int) -> list[str]:
    out, random = list(cards), mulberry32(seed)
    for i in range(len(out) - 1, 0, -1):
        j = math.floor(random() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def physical_cards(out: Path, decks: list[str]) -> list[str]:
    """One id per copy, in the record's order: the deck before it is shuffled."""
    record = json.loads((out / "build.json").read_text(encoding="utf-8"))
    return [c["id"] for c in record["cards"] if c["deck"] in decks for _ in range(c["copies"])]


DRIVER = """<script>
(function () {
  const log = {};
  const $ = (id) => document.getElementById(id);
  const ids = (id) => ($(id).dataset.order || "").split(" ").filter(Boolean);
  const click = (zone, index, action) =>
    $(zone).querySelectorAll(".tcard")[index].querySelector("[data-action=" + action + "]").click();
  const faces = (zone) => Array.from($(zone).querySelectorAll(".tcard")).map((c) => c.dataset.face);
  log.start = ids("draw-pile");
  $("odds-filter").value = JSON.stringify(["deck", "foes"]);
  $("odds-k").value = "2"; $("odds-n").value = "3";
  $("odds-filter").dispatchEvent(new Event("input"));
  const odds = $("odds-result").dataset;
  log.odds = [Number(odds.p), Number(odds.N), Number(odds.K)];
  $("draw").click(); $("draw").click();
  log.drawn = [ids("in-play"), ids("draw-pile").length, faces("in-play")];
  click("in-play", 0, "flip");
  log.flipped = faces("in-play");
  click("in-play", 1, "discard");
  log.discarded = [ids("in-play"), ids("discard-pile")];
  click("in-play", 0, "back");
  log.back = [ids("in-play"), ids("draw-pile")];
  $("hands").value = "2"; $("hand-size").value = "2"; $("deal").click();
  log.hands = Array.from(document.querySelectorAll("#hands-zone .zone")).map((z) => z.dataset.order.split(" "));
  log.after_deal = ids("draw-pile");
  $("reset").click();
  log.reset = [ids("draw-pile"), ids("in-play"), ids("discard-pile"), document.querySelectorAll(".hand").length];
  document.body.dataset.log = JSON.stringify(log);
})();
</script></body>"""


def drive(out: Path, tmp_path: Path, fragment: str) -> dict:
    """Open a copy of the gallery (beside the images) with the driver appended; what the driver logged."""
    import subprocess

    from tests.test_browser import _Page

    page = out / "driven.html"
    page.write_text((out / "index.html").read_text(encoding="utf-8").replace("</body>", DRIVER), encoding="utf-8")
    flags = [f.format(profile=tmp_path / "profile") for f in FLAGS]
    result = subprocess.run([CHROMIUM, *flags, "--virtual-time-budget=3000", "--dump-dom",  # type: ignore[list-item]
                             page.as_uri() + fragment], capture_output=True, text=True, timeout=120)
    parsed = _Page()
    parsed.feed(result.stdout)
    assert "data-log" in parsed.body, f"the driver logged nothing: {result.stderr[-800:]}"
    return json.loads(parsed.body["data-log"])


def at_least(N: int, K: int, n: int, k: int) -> Fraction:
    return sum((Fraction(math.comb(K, i) * math.comb(N - K, n - i), math.comb(N, n))
                for i in range(k, min(n, K) + 1)), Fraction(0))


@pytest.mark.parametrize("seed", [0, 42, 4294967295])
def test_a_seeded_shuffle_is_the_order_python_computes(built: Path, tmp_path: Path, seed: int) -> None:
    log = drive(built, tmp_path, f"#view=table&decks=heroes,foes&seed={seed}")
    expected = shuffled(physical_cards(built, ["heroes", "foes"]), seed)
    assert log["start"] == expected
    assert log["start"] != physical_cards(built, ["heroes", "foes"])  # shuffled at all


def test_odds_are_the_exact_hypergeometric(built: Path, tmp_path: Path) -> None:
    log = drive(built, tmp_path, "#view=table&decks=heroes,foes&seed=7")
    deck = physical_cards(built, ["heroes", "foes"])
    foes = len(physical_cards(built, ["foes"]))
    assert log["odds"][1:] == [len(deck), foes]
    assert log["odds"][0] == pytest.approx(float(at_least(len(deck), foes, 3, 2)), abs=1e-12)


def test_draw_flip_discard_put_back_deal_and_reset(built: Path, tmp_path: Path) -> None:
    log = drive(built, tmp_path, "#view=table&decks=heroes&seed=99")
    order = shuffled(physical_cards(built, ["heroes"]), 99)
    assert log["drawn"] == [order[:2], len(order) - 2, ["up", "up"]]
    assert log["flipped"] == ["down", "up"]
    assert log["discarded"] == [[order[0]], [order[1]]]
    assert log["back"] == [[], [order[0], *order[2:]]]
    pile = [order[0], *order[2:]]
    assert log["hands"] == [[pile[0], pile[2]], [pile[1], pile[3]]]
    assert log["after_deal"] == pile[4:]
    assert log["reset"] == [physical_cards(built, ["heroes"]), [], [], 0]


def test_the_gallery_links_the_stats_page_when_there_is_one(built: Path) -> None:
    root = built.parent.parent
    assert 'href="../stats/quest.html"' not in (built / "index.html").read_text(encoding="utf-8")
    assert CliRunner().invoke(main, ["--root", str(root), "stats", "quest", "--page"]).exit_code == 0
    assert CliRunner().invoke(main, ["--root", str(root), "build", "quest", "-j", "1", "--guides"]).exit_code == 0
    assert 'href="../stats/quest.html"' in (built / "index.html").read_text(encoding="utf-8")

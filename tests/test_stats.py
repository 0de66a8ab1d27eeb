"""`cardgen stats`: the numbers of every deck, checked against the same numbers computed here from the data files
with the csv module; the Stats page; and pandas stays off the build's path."""
from __future__ import annotations

import csv
import io
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import REPO, SIMPLE_BACK, SIMPLE_FACE, run_cli, write_game


def _rows(game: str, file: str) -> list[dict[str, str]]:
    """A data file's rows as the csv module reads them (its header comment lines left out), a cell that is one
    of the game's `values:` (`{elite_slash_damage}`) holding its number."""
    import yaml

    values = yaml.safe_load((REPO / "data" / game / "game.yaml").read_text(encoding="utf-8")).get("values") or {}
    lines = [line for line in (REPO / "data" / game / file).read_text(encoding="utf-8").splitlines()
             if not line.startswith("#")]
    return [{k: str(values.get(v[1:-1], v)) if v.startswith("{") and v.endswith("}") else v for k, v in row.items()}
            for row in csv.DictReader(lines)]


def _csv(*args: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(run_cli(REPO, "stats", *args, "--format", "csv").output)))


def test_counts_by_deck_kind_and_tier_match_the_data() -> None:
    rows = _rows("battle-builder", "cards.csv")
    expected: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        kind = row["kind"].lower()
        deck = f"basic-{kind}s" if row["tier"] == "0" else f"{kind}-tier-{row['tier']}"
        for key in [(deck, "all", "all"), ("cards.csv", "all", "all"), ("cards.csv", "kind", row["kind"]),
                    ("cards.csv", "tier", row["tier"])]:
            expected[key][0] += 1
            expected[key][1] += int(row["count"])
    got = {(r["deck"], r["group"], r["value"]): [int(r["unique"]), int(r["copies"])]
           for r in _csv("battle-builder", "--table", "counts", "--by", "tier")}
    assert {k: v for k, v in got.items() if k in expected} == dict(expected)
    assert ("cards.csv", "tier", "3") in got and ("monsters", "difficulty", "Hard") in got


def test_distribution_curve_and_ratio_match_the_data() -> None:
    tables = json.loads(run_cli(REPO, "stats", "battle-builder", "--format", "json", "--ratio", "value/cost").output)
    monsters = [m for m in _yaml_monsters() if m["set"] == "game"]
    for difficulty in ("Easy", "Medium", "Hard"):
        hp = [m["hp"] for m in monsters if m["difficulty"] == difficulty]
        row = next(r for r in tables["distribution"] if (r["deck"], r["column"], r["group"], r["value"])
                   == ("monsters", "hp", "difficulty", difficulty))
        assert (row["cards"], row["min"], row["max"]) == (len(hp), min(hp), max(hp))
        assert row["mean"] == pytest.approx(statistics.mean(hp), abs=1e-3)
        assert row["median"] == statistics.median(hp)
    tier1 = [r for r in _rows("battle-builder", "cards.csv") if r["kind"] == "Attack" and r["tier"] == "1"]
    ratios: dict[float, int] = defaultdict(int)
    for row in _rows("battle-builder", "cards.csv"):
        if row["cost"]:  # the bought cards: the basic ones cost nothing
            ratios[round(int(row["value"]) / int(row["cost"]), 3)] += int(row["count"])
    curve = {r["value"]: r["copies"] for r in tables["curve"]
             if (r["deck"], r["column"]) == ("cards.csv", "value per cost")}
    assert curve == pytest.approx(dict(ratios))
    by_copies: dict[int, int] = defaultdict(int)
    for row in _rows("battle-builder", "cards.csv"):
        by_copies[int(row["count"])] += 1
    assert {r["value"]: r["cards"] for r in tables["curve"] if (r["deck"], r["column"]) == ("cards.csv", "copies")} \
        == by_copies
    copies = {r["deck"]: (r["unique"], r["copies"], r["singles"]) for r in tables["copies"]}
    assert copies["attack-tier-1"] == (len(tier1), sum(int(r["count"]) for r in tier1), 0)


def _yaml_monsters() -> list[dict]:
    import yaml

    return yaml.safe_load((REPO / "data" / "battle-builder" / "monsters.yaml").read_text(encoding="utf-8"))


OUTLIER_GAME = """\
    title: Outliers
    decks:
      spells:
        source: spells.csv
        face: face.svg
        back: back.svg
        fields: {school: {type: enum, values: [fire, ice]}, cost: int, power: int}
"""


@pytest.fixture
def outlier_game(workspace: Path) -> Path:
    # fire: power 1,2,3,4,5,40 (40 is far: MAD 1.5); ice: cost 3 x5 and one 9 (MAD 0: any other value is far)
    rows = ["name,school,cost,power,count"]
    rows += [f"F{p},fire,2,{p},1" for p in (1, 2, 3, 4, 5, 40)]
    rows += [f"I{i},ice,{9 if i == 5 else 3},{i},2" for i in range(6)]
    write_game(workspace, "o", OUTLIER_GAME, {"spells.csv": "\n".join(rows) + "\n"},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    return workspace


def test_outliers_are_the_cards_far_from_their_group(outlier_game: Path) -> None:
    result = run_cli(outlier_game, "stats", "o", "--format", "json", "--table", "outliers")
    found = {(r["name"], r["column"]): r for r in json.loads(result.output)["outliers"]}
    assert set(found) == {("F40", "power"), ("I5", "cost")}
    fire = [1, 2, 3, 4, 5, 40]
    mad = statistics.median(abs(p - statistics.median(fire)) for p in fire)
    assert found["F40", "power"]["robust_z"] == pytest.approx(0.6745 * (40 - statistics.median(fire)) / mad, abs=0.01)
    ice = found["I5", "cost"]
    assert (ice["of"], ice["median"], ice["robust_z"]) == ("ice", 3, None)


def test_text_format_and_a_mistyped_column(outlier_game: Path) -> None:
    text = run_cli(outlier_game, "stats", "o").output
    assert all(f"== {name}\n" in text for name in ("counts", "distribution", "curve", "outliers", "copies"))
    bad = run_cli(outlier_game, "stats", "o", "--by", "shcool", expect=1)
    assert "no deck has the column(s) shcool" in bad.output and "Traceback" not in bad.output
    assert "COLUMN/COLUMN" in run_cli(outlier_game, "stats", "o", "--ratio", "cost", expect=2).output


class _Charts(HTMLParser):
    """Per chart (its aria-label), how many bars it draws."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: dict[str, int] = {}
        self._chart = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "section":
            self._section = found.get("id", "")
        if tag == "svg" and found.get("class") == "chart":
            self._chart = f"{self._section}: {found['aria-label']}"
            self.charts[self._chart] = 0
        if tag == "rect" and self._chart:
            self.charts[self._chart] += 1


def test_the_stats_page_draws_a_chart_per_curve(outlier_game: Path) -> None:
    run_cli(outlier_game, "stats", "o", "--page")
    page = outlier_game / "output" / "stats" / "o.html"
    charts = _Charts()
    charts.feed(page.read_text(encoding="utf-8"))
    rows = list(csv.DictReader(io.StringIO((outlier_game / "data" / "o" / "spells.csv").read_text())))
    assert charts.charts == {"spells: copies by school": len({r["school"] for r in rows}),
                             "spells: cost: copies per value": len({r["cost"] for r in rows}),
                             "spells: power: copies per value": len({r["power"] for r in rows}),
                             "spells: unique cards by their copies": len({r["count"] for r in rows})}
    assert "http" not in page.read_text(encoding="utf-8").replace('xmlns="http', "")  # nothing from the network


PROBE = """\
import sys
from cardgen.commands.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print("PANDAS" if "pandas" in sys.modules else "NO-PANDAS", file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["build", "-j", "1"], ["validate"], ["stats"]])
def test_only_stats_imports_pandas(outlier_game: Path, command: list[str]) -> None:
    args = [sys.executable, "-c", PROBE, "--root", str(outlier_game), command[0], "o", *command[1:]]
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == ("PANDAS" if command == ["stats"] else "NO-PANDAS")

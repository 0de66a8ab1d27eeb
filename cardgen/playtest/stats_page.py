"""The Stats page (`<out>/stats/<game>.html`, written by `cardgen stats GAME --page`): every table of `cardgen stats`
per deck, each count and curve drawn as a bar chart (inline SVG) with its table beside. Works from file://."""
from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from cardgen.core.bundled import ASSETS
from cardgen.core.storage import write_text
from cardgen.load.manifest import Game
from cardgen.outputs.playtable import stats_page

CHART_WIDTH, CHART_HEIGHT = 320, 150  # px of a bar chart's drawing area


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def bar_chart(labels: list[str], values: list[float], title: str) -> str:
    """A vertical bar chart as inline SVG: one bar per label, its value written over it."""
    top = max(values, default=0) or 1
    step = CHART_WIDTH / max(len(values), 1)
    bars = []
    for index, (label, value) in enumerate(zip(labels, values)):
        height = value / top * CHART_HEIGHT
        x = index * step + step * 0.1
        bars.append(f'<g><title>{_e(label)}: {value:g}</title><rect x="{x:.1f}" y="{CHART_HEIGHT - height + 14:.1f}" '
                    f'width="{step * 0.8:.1f}" height="{height:.1f}" fill="#e8c21a"/>'
                    f'<text x="{x + step * 0.4:.1f}" y="{CHART_HEIGHT - height + 10:.1f}">{value:g}</text>'
                    f'<text x="{x + step * 0.4:.1f}" y="{CHART_HEIGHT + 28:.1f}">{_e(label)}</text></g>')
    return (f'<svg class="chart" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT + 34}" role="img" aria-label="{_e(title)}">'
            f'{"".join(bars)}</svg>')


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, na_rep="", border=0, classes="numbers", float_format=lambda v: f"{v:g}")


def _figure(title: str, labels: list[str], values: list[float], frame: pd.DataFrame) -> str:
    return (f'<figure class="stat"><figcaption>{_e(title)}</figcaption><div class="pair">'
            f"{bar_chart(labels, values, title)}{_table(frame)}</div></figure>")


def _deck_section(label: str, title: str, tables: dict[str, pd.DataFrame]) -> str:
    """One deck's (or data file's) counts, curves, distributions and outliers."""
    def of(name: str) -> pd.DataFrame:
        frame = tables[name]
        return frame[frame["deck"] == label].drop(columns="deck")

    counts, copies = of("counts"), of("copies")
    whole = {k: int(v) for k, v in copies.iloc[0].items() if k != "copies_per_card"}
    parts = [f'<section class="deck" id="{_e(label)}"><h2>{_e(title)} <small>{whole["unique"]} unique cards, '
             f'{whole["copies"]} with copies (each card {whole["min"]}-{whole["max"]} copies, '
             f'{whole["singles"]} single)</small></h2><div class="charts">']
    for group, rows in counts[counts["group"] != "all"].groupby("group", sort=False):
        parts.append(_figure(f"copies by {group}", [str(v) for v in rows["value"]], list(rows["copies"]),
                             rows.drop(columns="group")))
    for column, rows in of("curve").groupby("column", sort=False):
        if len(rows) < 2:
            continue  # one value for every card: the distribution table says it, a chart of one bar does not
        if column == "copies":  # copies against unique cards: how many cards have each number of copies
            parts.append(_figure("unique cards by their copies", [f"{v:g}" for v in rows["value"]],
                                 list(rows["cards"]), rows.drop(columns="column")))
        else:
            parts.append(_figure(f"{column}: copies per value", [f"{v:g}" for v in rows["value"]],
                                 list(rows["copies"]), rows.drop(columns="column")))
    parts.append("</div>")
    distribution = of("distribution")
    if not distribution.empty:
        parts.append(f"<h3>Distribution by group (unique cards)</h3>{_table(distribution)}")
    outliers = of("outliers")
    if not outliers.empty:
        parts.append(f"<h3>Far from their group's others</h3>{_table(outliers)}")
    return "".join(parts) + "</section>"


def stats_html(game: Game, tables: dict[str, pd.DataFrame]) -> str:
    """The whole Stats page of a game."""
    titles = {name: deck.title or name for name, deck in game.spec.decks.items()}
    labels = list(dict.fromkeys(tables["copies"]["deck"]))
    sections = "".join(_deck_section(label, titles.get(label, f"{label} (its decks together)"), tables)
                       for label in labels)
    nav = " ".join(f'<a href="#{_e(label)}">{_e(titles.get(label, label))}</a>' for label in labels)
    style = "".join((ASSETS / "gallery" / name).read_text(encoding="utf-8") for name in ("gallery.css", "stats.css"))
    title = _e(f"{game.spec.title}: stats")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{style}</style></head><body class="stats">'
            f'<header><h1>{title} <small><a href="../{_e(game.name)}/index.html">gallery</a></small></h1>'
            f'<nav>{nav}</nav></header><main>{sections}</main></body></html>\n')


def write_stats_page(game: Game, tables: dict[str, pd.DataFrame], out_root: Path) -> Path:
    """Write the Stats page of a game under the output root; return its path."""
    target = stats_page(out_root, game.name)
    write_text(target, stats_html(game, tables))
    return target

"""The numbers of every deck (`cardgen stats GAME`): a game's cards as a pandas DataFrame and the tables a designer
reads before a playtest: counts by type or tier, each numeric column's distribution and curve, the cards far from
their group's others, and copies against unique cards.

pandas is imported here only: this module is loaded by `cardgen stats` and nothing on the build's path.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from cardgen.core.errors import CardgenError
from cardgen.load.data import Card, load_cards
from cardgen.load.manifest import Game

# The tables and their columns (a table that is empty for a game still has them).
_COLUMNS = {"counts": ["deck", "group", "value", "unique", "copies"],
            "distribution": ["deck", "column", "group", "value", "cards", "copies", "min", "mean", "median", "max"],
            "curve": ["deck", "column", "value", "cards", "copies"],
            "outliers": ["deck", "id", "name", "column", "value", "group", "of", "median", "robust_z"],
            "copies": ["deck", "unique", "copies", "min", "max", "singles", "copies_per_card"]}
TABLES = tuple(_COLUMNS)
ROBUST_Z = 3.5  # Iglewicz and Hoaglin's cut-off for the modified z-score: a card further than this is an outlier
MIN_GROUP = 4  # fewer cards than this in a group say nothing about what is usual in it
MAX_GROUP_VALUES = 12  # a column with more distinct values than this is a measure, not a type or a tier


@dataclass
class StatsOptions:
    """What the tables are grouped by and which ratios of columns they add."""

    by: list[str] = field(default_factory=list)  # columns to group by besides the decks' enum columns
    ratios: list[tuple[str, str]] = field(default_factory=list)  # (a, b): the column 'a per b'


def card_frame(game: Game, cards: list[Card]) -> pd.DataFrame:
    """The game's cards as a DataFrame: deck, id, name, copies and every field (lists joined by ', ')."""
    rows = []
    for card in cards:
        values = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in card.fields.items()}
        rows.append({**values, "deck": card.deck, "id": card.id, "name": card.name, "copies": card.copies})
    return pd.DataFrame(rows).convert_dtypes()  # whole numbers stay whole where some cards lack the column


def numeric_columns(game: Game, deck: str, frame: pd.DataFrame) -> list[str]:
    """The deck's int and float fields that hold a number on at least one of its cards (not its copies column:
    the tables have `copies`)."""
    spec = game.spec.decks[deck]
    return [name for name, field_spec in game.fields_of(spec).items() if field_spec.type in ("int", "float")
            and name != spec.count and name in frame and frame[name].notna().any()]


def group_columns(game: Game, deck: str, frame: pd.DataFrame, by: list[str]) -> list[str]:
    """What a deck's cards are grouped by: its enum fields (a type, a difficulty) and the columns of --by that it
    has (a tier), each when its cards have more than one value of it and not too many."""
    specs = game.fields_of(game.spec.decks[deck])
    wanted = [name for name, spec in specs.items() if spec.type == "enum"] + [c for c in by if c not in specs
                                                                                or specs[c].type != "enum"]
    return [c for c in wanted if c in frame and 1 < frame[c].nunique() <= MAX_GROUP_VALUES]


def _check_columns(game: Game, frame: pd.DataFrame, options: StatsOptions) -> None:
    """Every column named in --by and --ratio exists in some deck: a typo is an error, not an empty table."""
    named = [*options.by, *(c for pair in options.ratios for c in pair)]
    unknown = [c for c in dict.fromkeys(named) if c not in frame]
    if unknown:
        raise CardgenError(f"{game.name}: no deck has the column(s) {', '.join(unknown)}; the columns are "
                           f"{', '.join(c for c in frame.columns if c not in ('deck', 'id'))}")


def with_ratios(frame: pd.DataFrame, ratios: list[tuple[str, str]]) -> pd.DataFrame:
    """The frame with a column 'a per b' for each ratio, to 3 decimals (empty where b is empty or 0)."""
    frame = frame.copy()
    for a, b in ratios:
        divisor = pd.to_numeric(frame[b], errors="coerce").replace(0, float("nan"))
        frame[f"{a} per {b}"] = (pd.to_numeric(frame[a], errors="coerce") / divisor).round(3)
    return frame


def deck_stats(game: Game, options: StatsOptions | None = None) -> dict[str, pd.DataFrame]:
    """Every table of `TABLES` for the game's decks (see `cardgen stats`), and for each data file that several
    decks are made from (a deck per tier), that file's cards together under its name."""
    options = options or StatsOptions()
    frame = card_frame(game, load_cards(game))
    _check_columns(game, frame, options)
    frame = with_ratios(frame, options.ratios)
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLES}
    for label, decks in _sets(game, frame):
        cards = frame[frame["deck"].isin(decks)].dropna(axis=1, how="all").assign(deck=label)
        groups = [c for c in dict.fromkeys(g for d in decks for g in group_columns(game, d, cards, options.by))]
        measures = ["copies"] + [c for d in decks for c in numeric_columns(game, d, cards)]  # copies vs unique
        measures += [f"{a} per {b}" for a, b in options.ratios if f"{a} per {b}" in cards]
        measures = [m for m in dict.fromkeys(measures) if m not in groups]
        parts["counts"].append(_counts(cards, groups))
        parts["copies"].append(_copies(cards))
        for measure in measures:
            parts["distribution"].append(_distribution(cards, measure, groups))
            parts["curve"].append(_curve(cards, measure))
            parts["outliers"].append(_outliers(cards, measure, groups))
    return {name: _joined(tables, name) for name, tables in parts.items()}


def _sets(game: Game, frame: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """The card sets the tables are about: each deck that has cards, then each data file read by several decks."""
    present = set(frame["deck"]) if not frame.empty else set()
    decks = [d for d in game.spec.decks if d in present]
    by_file: dict[str, list[str]] = {}
    for deck in decks:
        source = game.spec.decks[deck].source
        by_file.setdefault(getattr(source, "file", str(source)), []).append(deck)
    return [(d, [d]) for d in decks] + [(file, ds) for file, ds in by_file.items() if len(ds) > 1]


def _joined(tables: list[pd.DataFrame], name: str) -> pd.DataFrame:
    tables = [t for t in tables if not t.empty]
    joined = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=_COLUMNS[name])
    return joined[_COLUMNS[name]]


def _groupings(cards: pd.DataFrame, groups: list[str]) -> list[tuple[str, pd.core.groupby.DataFrameGroupBy | None]]:
    """('all', None) for the whole deck, then each group column with the deck grouped by it."""
    return [("all", None), *((g, cards.groupby(g, sort=True)) for g in groups)]


def _counts(cards: pd.DataFrame, groups: list[str]) -> pd.DataFrame:
    rows = [{"group": "all", "value": "all", "unique": len(cards), "copies": int(cards["copies"].sum())}]
    for column in groups:
        counted = cards.groupby(column, sort=True)["copies"].agg(["size", "sum"])
        rows += [{"group": column, "value": _plain(value), "unique": int(n), "copies": int(total)}
                 for value, (n, total) in counted.iterrows()]
    return pd.DataFrame(rows).assign(deck=cards["deck"].iloc[0])


def _distribution(cards: pd.DataFrame, measure: str, groups: list[str]) -> pd.DataFrame:
    """The measure's summary over the whole deck and within each value of each group column (unique cards)."""
    rows = []
    for group, grouped in _groupings(cards, groups):
        parts = [("all", cards)] if grouped is None else list(grouped)
        for value, part in parts:
            numbers = pd.to_numeric(part[measure], errors="coerce")
            present = numbers.notna()
            if not present.any():
                continue
            rows.append({"group": group, "value": _plain(value), "cards": int(present.sum()),
                         "copies": int(part.loc[present, "copies"].sum()), "min": numbers.min(),
                         "mean": round(float(numbers.mean()), 3), "median": numbers.median(), "max": numbers.max()})
    return pd.DataFrame(rows).assign(deck=cards["deck"].iloc[0], column=measure)


def _curve(cards: pd.DataFrame, measure: str) -> pd.DataFrame:
    """How many cards (unique and with copies) have each value of the measure: a cost curve."""
    numbers = pd.to_numeric(cards[measure], errors="coerce")
    present = cards.assign(value=numbers)[numbers.notna()]
    curve = present.groupby("value", sort=True)["copies"].agg(["size", "sum"]).reset_index()
    curve = curve.rename(columns={"size": "cards", "sum": "copies"})
    return curve.assign(deck=cards["deck"].iloc[0], column=measure)


def _outliers(cards: pd.DataFrame, measure: str, groups: list[str]) -> pd.DataFrame:
    """Cards whose measure is far from the others of their group (cards sharing every group value: a type and a
    tier; the whole set when it has no group): a modified z-score, 0.6745 (x - median) / MAD, beyond `ROBUST_Z`;
    where most of the group share one value (MAD 0), any card with another value (robust_z left empty)."""
    parts = list(cards.groupby(groups, sort=True)) if groups else [("all", cards)]
    rows = []
    for value, part in parts:
        numbers = pd.to_numeric(part[measure], errors="coerce").dropna().astype(float)
        if len(numbers) < MIN_GROUP:
            continue
        median = numbers.median()
        mad = (numbers - median).abs().median()
        far = (0.6745 * (numbers - median) / mad).abs() > ROBUST_Z if mad else numbers != median
        for index in numbers.index[far]:
            rows.append({"id": part.at[index, "id"], "name": part.at[index, "name"], "value": numbers[index],
                         "group": " / ".join(groups) or "all", "of": _label(value), "median": median,
                         "robust_z": round(float(0.6745 * (numbers[index] - median) / mad), 2) if mad else None})
    return pd.DataFrame(rows, columns=[c for c in _COLUMNS["outliers"] if c not in ("deck", "column")]).assign(
        deck=cards["deck"].iloc[0], column=measure)


def _label(value: object) -> str:
    """A group's values as one label: 'Attack / 1'."""
    values = value if isinstance(value, tuple) else (value,)
    return " / ".join(str(_plain(v)) for v in values)


def _copies(cards: pd.DataFrame) -> pd.DataFrame:
    copies = cards["copies"]
    return pd.DataFrame([{"deck": cards["deck"].iloc[0], "unique": len(cards), "copies": int(copies.sum()),
                          "min": int(copies.min()), "max": int(copies.max()), "singles": int((copies == 1).sum()),
                          "copies_per_card": round(float(copies.mean()), 2)}])


def _plain(value: object) -> object:
    """A group's value as written in the data (pandas gives numpy numbers and 1-tuples)."""
    if isinstance(value, tuple) and len(value) == 1:
        value = value[0]
    return value.item() if hasattr(value, "item") else value

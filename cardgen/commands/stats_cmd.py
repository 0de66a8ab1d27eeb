"""`cardgen stats GAME`: the numbers of every deck (see `cardgen.playtest.stats`), as text, CSV or JSON,
and the Stats page.

pandas is imported when the command runs, not when the command line starts.
"""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import complete_games


def _ratio(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> list[tuple[str, str]]:
    """--ratio value/cost -> [("value", "cost")]."""
    pairs = []
    for value in values:
        a, slash, b = value.partition("/")
        if not slash or not a.strip() or not b.strip():
            raise click.BadParameter(f"'{value}' is not COLUMN/COLUMN (e.g. damage/cost)")
        pairs.append((a.strip(), b.strip()))
    return pairs


@click.command("stats")
@click.argument("game", shell_complete=complete_games)
@click.option("--format", "output_format", type=click.Choice(["text", "csv", "json"]), default="text",
              show_default=True, help="text to read; csv (one table, or all stacked with a `table` column) or "
                                      "json (table name -> rows) for a spreadsheet or a script.")
@click.option("--table", default="all", show_default=True,
              help="Only this table: counts, distribution, curve, outliers or copies.")
@click.option("--by", multiple=True, help="Also group by this column (e.g. tier); enum columns always are.")
@click.option("--ratio", "ratios", multiple=True, callback=_ratio, metavar="A/B",
              help="Add the column 'A per B' (e.g. damage/cost); repeat for more.")
@click.option("--page", is_flag=True, help="Also write the Stats page, <out>/stats/<game>.html (charts and "
                                           "tables; the gallery links it).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output root for --page (default: <root>/output).")
@click.pass_obj
def stats_command(root: Path, game: str, output_format: str, table: str, by: tuple[str, ...],
                  ratios: list[tuple[str, str]], page: bool, out: Path | None) -> None:
    """The numbers of every deck of GAME, from its data (no build needed): counts by type and tier, each numeric
    column's distribution and curve, cards far from their group's others, copies against unique cards.

    A data file that several decks are made from (one deck per tier) is summed up under its name too.
    """
    from cardgen.load.manifest import load_game
    from cardgen.playtest.stats import TABLES, StatsOptions, deck_stats

    if table not in ("all", *TABLES):
        raise click.BadParameter(f"'{table}' is not a table; choose all, {', '.join(TABLES)}", param_hint="--table")
    loaded = load_game(root, game)
    tables = deck_stats(loaded, StatsOptions(list(by), ratios))
    chosen = tables if table == "all" else {table: tables[table]}
    click.echo(format_tables(chosen, output_format), nl=False)
    if page:
        from cardgen.core.ownership import check_output_root
        from cardgen.playtest.stats_page import write_stats_page

        target = write_stats_page(loaded, tables, check_output_root(root, out or root / "output"))
        click.echo(f"{game}: stats page -> {target}", err=True)


def format_tables(tables: dict, output_format: str) -> str:
    """The tables as text (each under its name), one CSV, or a JSON object of table name -> rows."""
    import pandas as pd

    if output_format == "json":
        import json

        return json.dumps({name: json.loads(frame.to_json(orient="records")) for name, frame in tables.items()},
                          indent=2, ensure_ascii=False) + "\n"
    if output_format == "csv":
        if len(tables) == 1:
            return next(iter(tables.values())).to_csv(index=False)
        stacked = pd.concat([frame.assign(table=name) for name, frame in tables.items()], ignore_index=True)
        stacked = stacked.convert_dtypes()  # counts stay whole numbers where other tables leave them empty
        return stacked[["table", *(c for c in stacked.columns if c != "table")]].to_csv(index=False)
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        return "".join(f"== {name}\n{frame.to_string(index=False) if not frame.empty else '(none)'}\n\n"
                       for name, frame in tables.items())

"""Designer expressions are evaluated by cardgen itself, exactly as pandas' DataFrame.eval evaluated them before.

The differential tests run a table of expressions through both evaluators on the same rows: cardgen's over
plain dicts, and pandas' (`engine="python"`, as cardgen called it, helpers turned into the same pandas calls).
"""
from __future__ import annotations

import ast
import copy
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cardgen.core.expressions import (
    AGGREGATES,
    EvaluationError,
    ExpressionError,
    check_aggregate,
    check_expression,
    evaluate_aggregate,
    evaluate_mask,
)

ROWS: list[dict[str, Any]] = [
    {"name": "Alpha", "kind": "Unit", "power": 3, "cost": 2.5, "tier": 1, "flag": True, "note": "x", "gap": 4.0},
    {"name": "Beta", "kind": "Spell", "power": 0, "cost": None, "tier": 2, "flag": False, "note": None,
     "gap": None},
    {"name": "Gamma", "kind": "Unit", "power": -2, "cost": 0.0, "tier": 3, "flag": True, "note": "y", "gap": 2.0},
    {"name": "Delta", "kind": "Item", "power": 7, "cost": 1.0, "tier": 1, "flag": False, "note": "", "gap": None},
]

MASKS = [
    "power > 1", "power >= 0 and tier == 1", "1 <= power <= 5", "0 < tier < 3 <= power",
    "power == 3 or kind == 'Spell'",
    "not power > 1", "not (kind == 'Unit' and power > 0)", "kind != 'Unit'", "note != 'x'", "note == 'x'",
    "cost > 1", "cost <= 1", "cost != 0", "cost == cost", "gap * 2 > 4", "gap + power >= 5", "gap - 1 < 5",
    "power / 2 > 1", "power // 2 == 1", "power % 2 == 1", "power ** 2 > 4", "-power < 0", "+cost > 0",
    "kind in ['Unit', 'Item']", "kind not in ['Unit']", "note in ['x']", "note not in ['x']", "tier in [1, 3]",
    "cost in [2.5, 1]", "power in (3, 7)", "tier == 1.0", "flag", "not flag", "flag and power > 0",
    "flag or tier == 3", "name + kind == 'AlphaUnit'", "power / 0 > 0", "power / 0 < 0", "cost / 0 > 1",
    "power // 0 > 100", "power % 0 == 0", "gap * 0 == 0", "True", "False", "1 == 1", "2 > 3",
    "name == 'Alpha' and (power > 1 or cost > 1)", "name == 1", "power == 'a'", "power != 'a'", "note",
    "power", "cost", "power - 3", "kind == 'Unit' and not flag or tier == 1", "not not flag",
    "filled(note)", "empty(cost)", "filled(cost) and cost > 1", "empty(gap) or gap > 3", "not empty(cost)",
    "matches(name, 'A.*')", "not matches(name, '[AB].*') and tier > 1", r"matches(cost, '2\.5')",
    "matches(note, '.*')", "matches(tier, '[12]')", "matches(flag, 'True')",
]


class _PandasHelpers(ast.NodeTransformer):
    """The pandas calls cardgen wrote for its helpers when pandas evaluated expressions."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        column = node.args[0]
        if node.func.id == "matches":  # type: ignore[attr-defined]
            text = ast.Call(ast.Attribute(column, "astype", ast.Load()), [ast.Constant("str")], [])
            matched = ast.Call(ast.Attribute(ast.Attribute(text, "str", ast.Load()), "fullmatch", ast.Load()),
                               [node.args[1]], [])
            filled = ast.Call(ast.Attribute(column, "notna", ast.Load()), [], [])
            return ast.Call(ast.Attribute(matched, "where", ast.Load()), [filled, ast.Constant(False)], [])
        method = {"filled": "notna", "empty": "isna"}[node.func.id]  # type: ignore[attr-defined]
        return ast.Call(ast.Attribute(column, method, ast.Load()), [], [])


def pandas_mask(rows: list[dict[str, Any]], expr: str) -> list[bool]:
    frame = pd.DataFrame(rows, dtype=object).infer_objects()
    # (a copy: the checked tree is shared by every check of the expression, and the transformer changes it)
    text = ast.unparse(_PandasHelpers().visit(copy.deepcopy(check_expression(expr, set(frame.columns)))))
    result = frame.eval(text, engine="python")
    if not isinstance(result, pd.Series):
        result = pd.Series([bool(result)] * len(frame), index=frame.index)
    return result.astype(object).where(result.notna(), False).astype(bool).tolist()


def _pandas_aggregate_value(frame: pd.DataFrame, name: str, columns: list[str]) -> Any:
    if name == "rows":
        return len(frame)
    if name == "distinct":
        if len(columns) == 1:
            return int(frame[columns[0]].dropna().nunique())
        return len({tuple(map(str, row)) for row in frame[columns].dropna().itertuples(index=False)})
    column = frame[columns[0]]
    value = {"count": lambda: column.notna().sum(), "sum": lambda: column.sum(min_count=0),
             "min": column.min, "max": column.max}[name]()
    return value.item() if hasattr(value, "item") else value


def pandas_aggregate(rows: list[dict[str, Any]], expr: str) -> tuple[bool, dict[str, Any]]:
    frame = pd.DataFrame(rows, columns=list(ROWS[0]), dtype=object).infer_objects()
    tree = copy.deepcopy(check_aggregate(expr, set(frame.columns)))  # (shared: the transformer changes it)
    values: dict[str, Any] = {}
    names: dict[str, str] = {}

    class Replace(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            label = ast.unparse(node)
            if label not in names:
                names[label] = f"agg{len(names)}"
                values[label] = _pandas_aggregate_value(frame, node.func.id,  # type: ignore[attr-defined]
                                                        [a.id for a in node.args])  # type: ignore[attr-defined]
            return ast.Name(names[label], ast.Load())

    text = ast.unparse(Replace().visit(tree))
    scalars = pd.DataFrame([{names[label]: value for label, value in values.items()}], dtype=object)
    result = scalars.eval(text, engine="python")
    return bool(result.iloc[0]) if isinstance(result, pd.Series) else bool(result), values


# The same rows with more empty cells: a yes/no, a text and a whole number.
GAPPY_ROWS = [{**ROWS[0]}, {**ROWS[1], "flag": None}, {**ROWS[2], "kind": None}, {**ROWS[3], "power": None}]


@pytest.mark.parametrize("rows", [ROWS, GAPPY_ROWS], ids=["rows", "gappy"])
@pytest.mark.parametrize("expr", MASKS)
def test_masks_are_what_pandas_gave(expr: str, rows: list[dict[str, Any]]) -> None:
    if rows is GAPPY_ROWS and "not" in expr and "flag" in expr:
        return  # pandas raised TypeError for `not` of an empty yes/no cell (see the next test)
    assert evaluate_mask(rows, expr) == pandas_mask(rows, expr)


def test_not_of_an_empty_cell_is_true_where_pandas_failed() -> None:
    with pytest.raises(TypeError):
        pandas_mask(GAPPY_ROWS, "not flag")
    assert evaluate_mask(GAPPY_ROWS, "not flag") == [False, True, False, True]  # empty counts as False


AGGREGATE_EXPRESSIONS = [
    "sum(power) == 8", "sum(cost) == 3.5", "min(cost) == 0", "max(gap) == 4", "count(cost) == 3",
    "count(note) == 3", "rows() == 4", "distinct(kind) == 3", "distinct(kind, note) == 3",
    "distinct(tier) == 3 and distinct(flag) == 2", "sum(gap) >= 6 and rows() > 2", "min(power) < 0 or max(power) > 5",
    "not sum(power) > 10", "max(name) == 'Gamma'", "min(note) == ''", "sum(flag) == 2", "distinct(name) == rows()",
]


@pytest.mark.parametrize("expr", AGGREGATE_EXPRESSIONS)
@pytest.mark.parametrize("rows", [ROWS, ROWS[1:2], []], ids=["all", "gaps", "none"])
def test_aggregates_are_what_pandas_gave(expr: str, rows: list[dict[str, Any]]) -> None:
    holds, values = evaluate_aggregate(rows, expr, ROWS[0])
    expected_holds, expected = pandas_aggregate(rows, expr)
    assert holds == expected_holds
    assert values.keys() == expected.keys()
    for label, value in values.items():  # an empty selection's min is NaN in both
        assert value == expected[label] or math.isnan(value) and math.isnan(expected[label]), label


def test_arithmetic_on_aggregates_works_where_pandas_failed() -> None:
    # pandas' python engine refused `object * int` on aggregate values, and raised ZeroDivisionError for 0 / 0.
    assert evaluate_aggregate(ROWS, "10 <= sum(power) * 2 <= 20") == (True, {"sum(power)": 8})
    holds, values = evaluate_aggregate([], "sum(tier) / rows() > 1", ROWS[0])
    assert not holds and values == {"sum(tier)": 0, "rows()": 0}


@pytest.mark.parametrize("expr", ["power > 'a'", "name < 3", "name + 1 > 0", "-name == 'x'", "name * 2 == 'x'",
                                  "kind <= power"])
def test_a_number_against_a_text_cannot_be_evaluated_in_either(expr: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - pandas raises TypeError or its own errors
        pandas_mask(ROWS, expr)
    with pytest.raises(EvaluationError, match="cannot (compare|compute)"):
        evaluate_mask(ROWS, expr)


def test_the_error_says_which_values_met_and_on_which_row() -> None:
    with pytest.raises(EvaluationError) as caught:
        evaluate_mask(ROWS, "kind == 'Item' and name > 3")
    assert str(caught.value) == "cannot compare 'Delta' (a text) > 3 (a number)" and caught.value.row == 3
    with pytest.raises(EvaluationError, match=r"sum\(name\) needs numbers; a card has 'Alpha' \(a text\)"):
        evaluate_aggregate(ROWS, "sum(name) > 0")
    with pytest.raises(EvaluationError, match="'power' is a column: a total compares aggregates of it"):
        evaluate_aggregate(ROWS, "power > 0")


def test_huge_powers_and_long_lists_stay_cheap() -> None:
    rows = [{"n": 10**18}, {"n": 3}]
    assert evaluate_mask(rows, "((n ** 100) ** 100) ** 100 > 0") == [True, True]  # floats: inf, not 10**10**6
    names = [f"'Card {i}'" for i in range(20_000)]
    assert evaluate_mask([{"name": "Card 19999"}, {"name": "Other"}], f"name in [{', '.join(names)}]") == [True, False]


def test_a_backtracking_pattern_stays_fast_on_a_long_name() -> None:
    """`([A-Za-z]+ ?)+` against 41 letters and a `!` took Python's `re` 103 s (twice as long for every letter more);
    RE2 matches in time linear in the text. 36 letters: ~3 s with `re`."""
    started = time.monotonic()
    rows = [{"name": "a" * 36 + "!"}, {"name": "Scrap Bot"}]
    assert evaluate_mask(rows, "matches(name, '([A-Za-z]+ ?)+')") == [False, True]
    assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)a", "(?<!b)a"])
def test_patterns_that_need_backtracking_are_refused_when_checked(pattern: str) -> None:
    with pytest.raises(ExpressionError, match="no backreferences or lookarounds"):
        check_expression(f"matches(name, '{pattern}')", {"name"})


def test_a_cell_holding_a_list_can_be_searched_with_in() -> None:
    rows = [{"tags": ["fire", "air"]}, {"tags": []}, {"tags": None}]
    assert evaluate_mask(rows, "'fire' in tags") == [True, False, False]
    assert evaluate_mask(rows, "'fire' not in tags") == [False, True, True]
    with pytest.raises(EvaluationError, match="'in' needs a list on its right"):
        evaluate_mask([{"name": "Fireball"}], "'Fire' in name")


def test_len_counts_a_lists_items_a_texts_characters_and_nothing_in_an_empty_cell() -> None:
    rows = [{"names": ["Left", "Center", "Right"], "lanes": 3}, {"names": ["Left", "Right"], "lanes": 3},
            {"names": None, "lanes": 0}, {"names": "abc", "lanes": 3}, {"names": [], "lanes": 1}]
    assert evaluate_mask(rows, "len(names) == lanes") == [True, False, True, True, False]
    with pytest.raises(EvaluationError, match=r"len\(\) counts the items of a list .* got 3 \(a number\)") as raised:
        evaluate_mask([*rows, {"names": 3, "lanes": 1}], "len(names) > 0")
    assert raised.value.row == 5
    with pytest.raises(ExpressionError, match=r"len\(\) takes one column name"):
        check_expression("len('abc') == 3", {"names"})


def test_every_aggregate_is_in_the_differential_table() -> None:
    used = {n.func.id for e in AGGREGATE_EXPRESSIONS for n in ast.walk(ast.parse(e)) if isinstance(n, ast.Call)}
    assert used == set(AGGREGATES)


RULES = """\
rules:
  - {id: strong, message: "Power is at most 2", severity: warning, where: "count >= 1", check: "power <= 2"}
  - {id: size, message: "Five cards with copies", severity: warning, total: "sum(count) == 5", per: power}
"""


def test_building_and_validating_a_game_with_filters_and_rules_imports_neither_pandas_nor_numpy(
        tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("source: cards.csv", "source: cards.csv\n"
                                                     "    filter: \"name != 'Beta' and filled(text)\"") + RULES)
    code = ("import sys; from cardgen.commands.cli import main\n"
            "for args in (['validate'], ['build', '-j', '1']):\n"
            f"    try: main(['--root', {str(tiny_game)!r}, *args], standalone_mode=False)\n"
            "    except SystemExit: pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'numpy'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "card 'na' has power = 3 (strong)" in done.stderr, done.stderr  # the rules were evaluated
    assert "sum(count) = 2 for power = 1 (size)" in done.stderr, done.stderr
    assert "tiny: 2 cards" in done.stdout, done.stdout  # the filter left out Beta
    assert done.stdout.strip().endswith("[]"), done.stdout

"""Designer-written expressions (deck filters, rules), checked before pandas evaluates them.

pandas' `DataFrame.eval` is no sandbox (attributes, `@locals` and dunder chains get through),
so an expression is parsed with `ast` first and only a small, harmless vocabulary is allowed.
"""
from __future__ import annotations

import ast
import re

import pandas as pd

_ALLOWED_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
    ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple,
)


class ExpressionError(ValueError):
    """An expression that is not allowed or does not parse."""


def check_expression(expr: str, columns: set[str] | None = None) -> ast.Expression:
    """Parse an expression and refuse anything beyond columns, literals, comparisons and arithmetic."""
    if "@" in expr:
        raise ExpressionError("'@' (reading Python variables) is not allowed")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse '{expr}': {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            part = ast.get_source_segment(expr.strip(), node) or type(node).__name__
            raise ExpressionError(f"'{part}' is not allowed; use column names, literals, "
                                  "comparisons, and/or/not, arithmetic and `in [...]`")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ExpressionError(f"'{node.id}' is not allowed: names starting with _ are refused")
        if isinstance(node, ast.Name) and columns is not None and node.id not in columns | {"True", "False"}:
            raise ExpressionError(f"unknown column '{node.id}'")
    return tree


def _quote_backticks(expr: str, columns: set[str]) -> str:
    """Wrap column names that are not identifiers in pandas' backticks."""
    for column in sorted(columns, key=len, reverse=True):
        if not column.isidentifier() and column in expr:
            expr = re.sub(re.escape(column), f"`{column}`", expr)
    return expr


def evaluate_mask(frame: pd.DataFrame, expr: str) -> pd.Series:
    """Evaluate a checked boolean expression row by row; missing values count as False."""
    check_expression(expr, set(frame.columns))
    result = frame.eval(_quote_backticks(expr, set(frame.columns)), engine="python")
    if not isinstance(result, pd.Series):
        result = pd.Series([bool(result)] * len(frame), index=frame.index)
    return result.fillna(False).astype(bool)

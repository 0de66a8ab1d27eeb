"""Designer-written expressions (deck filters, rules), checked before pandas evaluates them.

pandas' `DataFrame.eval` is no sandbox (attributes, `@locals` and dunder chains get through),
so an expression is parsed with `ast` first and only a small, harmless vocabulary is allowed:
column names, literals, comparisons, and/or/not, arithmetic, `in [...]`, and a few named helpers
that cardgen itself turns into pandas code after the check.
"""
from __future__ import annotations

import ast
import math
import re
import warnings
from typing import Any, Callable, Iterator

import pandas as pd

_ALLOWED_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
    ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple,
)

# Row helpers: name -> the pandas method called on the column (cardgen writes that call, not the designer).
ROW_HELPERS = {"filled": "notna", "empty": "isna"}
# Row helpers taking a column and a quoted pattern: matches(code, '[JQKA]+') is true where the whole text matches.
PATTERN_HELPERS = {"matches"}
MAX_PATTERN_CHARS = 200
# Bounds a designer never reaches, so that no expression can hang or exhaust memory.
MAX_EXPRESSION_CHARS = 500_000  # a list of 20,000 names fits
MAX_DEPTH = 100  # nesting of operations: a chain of 20,000 additions is refused
MAX_EXPONENT = 100

# Aggregates over the rows a rule selects: name -> (number of column arguments, -1 for one or more, how it is
# computed).
AGGREGATES: dict[str, tuple[int, Callable[..., Any]]] = {
    "rows": (0, lambda frame: len(frame)),
    "count": (1, lambda column: int(column.notna().sum())),
    "sum": (1, lambda column: _number(column.sum(min_count=0))),
    "min": (1, lambda column: _number(column.min())),
    "max": (1, lambda column: _number(column.max())),
    "distinct": (-1, lambda *columns: _distinct(columns)),
}


def _distinct(columns: tuple[pd.Series, ...]) -> int:
    """How many different values (or combinations of values, for several columns) the filled rows have."""
    if len(columns) == 1:
        return int(columns[0].dropna().nunique())
    rows = pd.concat(columns, axis=1).dropna()
    return len({tuple(map(str, row)) for row in rows.itertuples(index=False)})


class ExpressionError(ValueError):
    """An expression that is not allowed or does not parse."""


def _number(value: Any) -> Any:
    """A plain Python number from a pandas result (NaN stays NaN: an empty selection has no min)."""
    if isinstance(value, float) and math.isnan(value):
        return value
    return value.item() if hasattr(value, "item") else value


def parse_expression(expr: str) -> ast.Expression:
    """Python's syntax tree of an expression (raises SyntaxError).

    '\\d' in a quoted pattern is no Python escape; matches() takes patterns as written, so the warning
    Python gives for it is silenced.
    """
    with warnings.catch_warnings(action="ignore"):
        try:
            return ast.parse(expr.strip(), mode="eval")
        except (RecursionError, MemoryError):  # Python's parser gives up on a chain of 20,000 terms
            raise SyntaxError(f"the expression is nested more than {MAX_DEPTH} levels deep; split it") from None


def check_expression(expr: str, columns: set[str] | None = None,
                     calls: dict[str, int] | None = None) -> ast.Expression:
    """Parse an expression and refuse anything beyond columns, literals, comparisons, arithmetic and helpers.

    `calls` maps the helper names allowed here to their number of column arguments
    (default: the row helpers `filled(column)` and `empty(column)`).
    """
    calls = {**{name: 1 for name in ROW_HELPERS}, **{name: 2 for name in PATTERN_HELPERS}} if calls is None \
        else calls
    if "@" in expr:
        raise ExpressionError("'@' (reading Python variables) is not allowed")
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"the expression is {len(expr):,} characters long; the limit is "
                              f"{MAX_EXPRESSION_CHARS:,}")
    source = expr.strip()
    try:
        tree = parse_expression(source)
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse '{_shorten(expr)}': {exc.msg}") from None
    helper_names = set()
    for node, depth in _walk(tree):
        if depth > MAX_DEPTH:
            raise ExpressionError(f"the expression is nested more than {MAX_DEPTH} levels deep (a long chain of "
                                  "operations); split it")
        if isinstance(node, ast.Call):
            _check_call(node, _part(source, node), calls)
            if node.func.id in PATTERN_HELPERS:  # type: ignore[attr-defined]
                node.args[1] = ast.Constant(_raw_text(source, node.args[1]))
            helper_names.add(id(node.func))
            continue
        if not isinstance(node, _ALLOWED_NODES):
            raise ExpressionError(f"'{_part(source, node)}' is not allowed; use column names, literals, comparisons, "
                                  f"and/or/not, arithmetic, `in [...]`{_helper_hint(calls)}")
        if isinstance(node, ast.BinOp):
            _check_size(node, source)
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ExpressionError(f"'{node.id}' is not allowed: names starting with _ are refused")
        if (isinstance(node, ast.Name) and id(node) not in helper_names and columns is not None
                and node.id not in columns | {"True", "False"}):
            raise ExpressionError(f"unknown column '{node.id}'")
    return tree


def _walk(tree: ast.AST) -> Iterator[tuple[ast.AST, int]]:
    """Every node of a tree with its depth, without recursion (a deep tree cannot overflow the stack)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _part(source: str, node: ast.AST) -> str:
    """The text of a node, for a message (computed only then: it costs the length of the source)."""
    return _shorten(ast.get_source_segment(source, node) or type(node).__name__)


def _shorten(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _number_constant(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _number_constant(node.operand)
    is_number = isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
    return node.value if is_number and not isinstance(node.value, bool) else None  # type: ignore[attr-defined]


def _check_size(node: ast.BinOp, source: str) -> None:
    """Refuse operations that make a huge value: a power with an exponent that is not a small number
    (9**9**9), and repeating a text or a list ('a' * 10**10)."""
    if isinstance(node.op, ast.Pow):
        exponent = _number_constant(node.right)
        if exponent is None or abs(exponent) > MAX_EXPONENT:
            raise ExpressionError(f"'{_part(source, node)}': an exponent must be a plain number of at most "
                                  f"{MAX_EXPONENT}")
    if isinstance(node.op, ast.Mult):
        for side in (node.left, node.right):
            if isinstance(side, (ast.List, ast.Tuple)) or (isinstance(side, ast.Constant)
                                                            and isinstance(side.value, str)):
                raise ExpressionError(f"'{_part(source, node)}': repeating a text or a list is not allowed")


def _helper_hint(calls: dict[str, int]) -> str:
    return f" and {', '.join(f'{n}()' for n in sorted(calls))}" if calls else ""


def _check_call(node: ast.Call, part: str, calls: dict[str, int]) -> None:
    """A call is allowed only to a named helper, with plain column names as its arguments."""
    if not isinstance(node.func, ast.Name) or node.func.id not in calls:
        raise ExpressionError(f"'{part}' is not allowed: the only functions here are"
                              f"{_helper_hint(calls)[4:] or ' none'}")
    arity = calls[node.func.id]
    if node.func.id in PATTERN_HELPERS:
        _check_pattern_call(node, part)
        return
    count_ok = len(node.args) >= 1 if arity < 0 else len(node.args) == arity
    if node.keywords or not count_ok or not all(isinstance(a, ast.Name) for a in node.args):
        wanted = {0: "no arguments", 1: "one column name"}.get(arity, "one or more column names")
        raise ExpressionError(f"'{part}': {node.func.id}() takes {wanted}")


def _raw_text(source: str, node: ast.expr) -> str:
    """A quoted pattern as written, backslashes kept (like a raw string): matches(code, '\\d+') is digits."""
    written = ast.get_source_segment(source, node) or ""
    return written[1:-1] if len(written) >= 2 and written[0] == written[-1] and written[0] in "'\"" \
        else node.value  # type: ignore[attr-defined]


def _check_pattern_call(node: ast.Call, part: str) -> None:
    """matches(column, 'pattern'): a column name and a quoted regular expression that compiles."""
    args = node.args
    if node.keywords or len(args) != 2 or not isinstance(args[0], ast.Name) or \
            not (isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)):
        raise ExpressionError(f"'{part}': matches() takes a column name and a quoted pattern, "
                              "as in matches(combo, '[JQKA]+')")
    pattern = args[1].value
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ExpressionError(f"'{part}': the pattern is longer than {MAX_PATTERN_CHARS} characters")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ExpressionError(f"'{part}': the pattern is not a regular expression: {exc}") from None


def _quote_backticks(expr: str, columns: set[str]) -> str:
    """Wrap column names that are not identifiers in pandas' backticks."""
    for column in sorted(columns, key=len, reverse=True):
        if not column.isidentifier() and column in expr:
            expr = re.sub(re.escape(column), f"`{column}`", expr)
    return expr


class _RowHelpers(ast.NodeTransformer):
    """Turn checked helper calls into the pandas calls they stand for: filled(x) -> x.notna(),
    matches(x, 'p') -> x.astype('str').str.fullmatch('p').where(x.notna(), False) (empty never matches)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        column = node.args[0]
        if node.func.id in PATTERN_HELPERS:  # type: ignore[attr-defined]
            text = ast.Call(ast.Attribute(column, "astype", ast.Load()), [ast.Constant("str")], [])
            matched = ast.Call(ast.Attribute(ast.Attribute(text, "str", ast.Load()), "fullmatch", ast.Load()),
                               [node.args[1]], [])
            filled = ast.Call(ast.Attribute(column, "notna", ast.Load()), [], [])
            # One call chain, no `&`: pandas reads `not a & b` as `(not a) & b`.
            return ast.Call(ast.Attribute(matched, "where", ast.Load()), [filled, ast.Constant(False)], [])
        method = ROW_HELPERS[node.func.id]  # type: ignore[attr-defined]
        return ast.Call(ast.Attribute(column, method, ast.Load()), [], [])


def evaluate_mask(frame: pd.DataFrame, expr: str) -> pd.Series:
    """Evaluate a checked boolean expression row by row; missing values count as False."""
    tree = check_expression(expr, set(frame.columns))
    text = ast.unparse(_RowHelpers().visit(tree)) if "(" in expr else expr
    frame = frame.infer_objects()  # typed columns held as objects: `count * 2` needs numbers, not objects
    result = frame.eval(_quote_backticks(text, set(frame.columns)), engine="python")
    if not isinstance(result, pd.Series):
        result = pd.Series([bool(result)] * len(frame), index=frame.index)
    return result.fillna(False).astype(bool)


def columns_in(expr: str) -> list[str]:
    """The column names an (already checked) expression reads, in order of appearance."""
    tree = parse_expression(expr)
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs]
    return list(dict.fromkeys(n.id for n in sorted(names, key=lambda n: n.col_offset)))


def check_aggregate(expr: str, columns: set[str] | None = None) -> ast.Expression:
    """Check an aggregate expression such as `sum(count) == 20` or `3 <= rows() <= 10`."""
    return check_expression(expr, columns, {name: arity for name, (arity, _) in AGGREGATES.items()})


def evaluate_aggregate(frame: pd.DataFrame, expr: str) -> tuple[bool, dict[str, Any]]:
    """Whether an aggregate expression holds over a frame's rows, and the value of each aggregate in it."""
    tree = check_aggregate(expr, set(frame.columns))
    values: dict[str, Any] = {}
    names: dict[str, str] = {}

    class Replace(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            label = ast.unparse(node)
            if label not in names:
                _, compute = AGGREGATES[node.func.id]  # type: ignore[attr-defined]
                args = [frame[a.id] for a in node.args] or [frame]  # type: ignore[attr-defined]
                names[label] = f"agg{len(names)}"
                values[label] = compute(*args)
            return ast.Name(names[label], ast.Load())

    text = ast.unparse(Replace().visit(tree))
    scalars = pd.DataFrame([{names[label]: value for label, value in values.items()}] or [{}], dtype=object)
    if not len(scalars.columns):
        scalars = pd.DataFrame(index=[0])
    result = scalars.eval(text, engine="python")
    holds = bool(result.iloc[0]) if isinstance(result, pd.Series) else bool(result)
    return holds, values

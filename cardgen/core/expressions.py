"""Designer-written expressions (deck filters, rules): checked with `ast`, then evaluated by cardgen itself.

An expression is parsed with `ast` and only a small, harmless vocabulary is allowed: column names, literals,
comparisons, and/or/not, arithmetic, `in [...]`, and a few named helpers. The checked tree is then compiled
once into Python functions of a row (a dict of column -> value): designer text never reaches Python's
eval or compile, and no dataframe library is imported (pandas cost half a second of every build).

Values behave as they did when pandas evaluated these expressions: an empty cell (None or NaN) is False as
a condition, equals nothing, makes arithmetic empty and is skipped by the aggregates; `x / 0` is inf.
"""
from __future__ import annotations

import ast
import functools
import math
import operator
import warnings
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

# RE2, not Python's `re`: it matches in time linear in the text, so no pattern a downloaded game's rules hold can
# backtrack for minutes over a cell (`([A-Za-z]+ ?)+` against 41 letters and a `!` took Python's `re` 103 s). It has
# no backreferences or lookarounds; a pattern using one is refused with RE2's own message when it is checked.
import re2

Row = Mapping[str, Any]  # one card or data row: column name -> value
Evaluate = Callable[[Row], Any]

_ALLOWED_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
    ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple,
)

# Row helpers taking a column: filled(damage) is true where the cell has a value, empty(damage) where not;
# len(lane_names) is how many items a list cell holds (how many characters a text holds; 0 for an empty cell).
ROW_HELPERS = {"filled", "empty", "len"}
PATTERN_HELPERS = {"matches"}
MAX_PATTERN_CHARS = 200
# Bounds a designer never reaches, so that no expression can hang or exhaust memory.
MAX_EXPRESSION_CHARS = 500_000  # a list of 20,000 names fits
MAX_DEPTH = 100  # nesting of operations: a chain of 20,000 additions is refused
MAX_EXPONENT = 100



class ExpressionError(ValueError):
    """An expression that is not allowed or does not parse."""


class EvaluationError(ValueError):
    """An allowed expression that cannot be evaluated on the values it meets (a number compared with a text).

    `row` is the position of the row it met them on, when it was evaluated row by row.
    """

    row: int | None = None


def _filled(rows: Sequence[Row], column: str) -> list[Any]:
    return [value for row in rows if not is_missing(value := row.get(column))]


def _sum(rows: Sequence[Row], columns: list[str]) -> Any:
    """The sum of a column's filled cells (0 for none)."""
    values = _filled(rows, columns[0])
    text = next((v for v in values if not _is_number(v)), None)
    if text is not None:
        raise EvaluationError(f"sum({columns[0]}) needs numbers; a card has {_shown(text)}")
    return sum(values)


def _extreme(pick: Callable[[list[Any]], Any], name: str) -> Callable[[Sequence[Row], list[str]], Any]:
    """min() or max() of a column's filled cells (NaN, shown as empty, for none)."""
    def compute(rows: Sequence[Row], columns: list[str]) -> Any:
        values = _filled(rows, columns[0])
        try:
            return pick(values) if values else math.nan
        except TypeError:
            raise EvaluationError(f"{name}({columns[0]}) cannot order its values: the column mixes numbers and "
                                  "texts") from None
    return compute


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _distinct(rows: Sequence[Row], columns: list[str]) -> int:
    """How many different values (or combinations of values, for several columns) the filled rows have."""
    if len(columns) == 1:
        return len({_hashable(v) for v in _filled(rows, columns[0])})
    combinations = (tuple(row.get(c) for c in columns) for row in rows)
    return len({tuple(map(str, values)) for values in combinations if not any(map(is_missing, values))})


# Aggregates over the rows a rule selects: name -> (number of column arguments, -1 for one or more, how it is
# computed from the rows and the column names).
AGGREGATES: dict[str, tuple[int, Callable[[Sequence[Row], list[str]], Any]]] = {
    "rows": (0, lambda rows, columns: len(rows)),
    "count": (1, lambda rows, columns: len(_filled(rows, columns[0]))),
    "sum": (1, _sum),
    "min": (1, _extreme(min, "min")),
    "max": (1, _extreme(max, "max")),
    "distinct": (-1, _distinct),
}


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
    (default: the row helpers `filled(column)` and `empty(column)`). The tree is shared by every check of the same
    expression (see KEPT_CHARS): read it, never change it.
    """
    calls = {**{name: 1 for name in ROW_HELPERS}, **{name: 2 for name in PATTERN_HELPERS}} if calls is None \
        else calls
    if "@" in expr:
        raise ExpressionError("'@' (reading Python variables) is not allowed")
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"the expression is {len(expr):,} characters long; the limit is "
                              f"{MAX_EXPRESSION_CHARS:,}")
    known = None if columns is None else frozenset(columns)
    if len(expr) > KEPT_CHARS:
        return _checked(expr, known, tuple(calls.items()))
    return _kept_check(expr, known, tuple(calls.items()))


def _checked(expr: str, columns: frozenset[str] | None, calls: tuple[tuple[str, int], ...]) -> ast.Expression:
    """`check_expression`'s work, once its bounds are checked (the tree it returns is not changed after)."""
    allowed = dict(calls)
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
            _keep_pattern_as_written(node, source)
            _check_call(node, _part(source, node), allowed)
            helper_names.add(id(node.func))
            continue
        if not isinstance(node, _ALLOWED_NODES):
            raise ExpressionError(f"'{_part(source, node)}' is not allowed; use column names, literals, comparisons, "
                                  f"and/or/not, arithmetic, `in [...]`{_helper_hint(allowed)}")
        if isinstance(node, ast.BinOp):
            _check_size(node, source)
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ExpressionError(f"'{node.id}' is not allowed: names starting with _ are refused")
        if (isinstance(node, ast.Name) and id(node) not in helper_names and columns is not None
                and node.id not in columns | {"True", "False"}):
            raise ExpressionError(f"unknown column '{node.id}'")
    return tree


# The rules and deck filters are checked (and compiled) again at every rebuild of a watch, with the same expressions
# and columns: parsing and walking them was ~60% of the rule layer's time (deebz's 26 rules: ~7 of its ~11 ms). Each
# is done once a process, by its text, columns and helpers; an expression refused is not kept (checked again, it
# is refused again), nor one longer than KEPT_CHARS (no rule is; a 500,000-character list would hold megabytes).
KEPT_CHARS = 2_000
_kept_check = functools.lru_cache(maxsize=256)(_checked)


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


def _keep_pattern_as_written(node: ast.Call, source: str) -> None:
    """The quoted pattern of matches() as written (checked and used so: `'(a)\\1'` is no `\\x01`)."""
    if isinstance(node.func, ast.Name) and node.func.id in PATTERN_HELPERS and len(node.args) == 2 and \
            isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        node.args[1] = ast.Constant(_raw_text(source, node.args[1]))


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
        _compile_pattern(pattern)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ExpressionError(f"'{part}': the pattern is not a regular expression matches() can use (no "
                              f"backreferences or lookarounds): {reason}") from None


def _compile_pattern(pattern: str) -> Any:
    """A pattern compiled by RE2 (linear time), which reports a bad pattern by its exception only."""
    options = re2.Options()
    options.log_errors = False  # else RE2 writes every refused pattern to stderr too
    return re2.compile(pattern, options)


# ---------------------------------------------------------------- evaluation over plain rows

def is_missing(value: Any) -> bool:
    """Whether a cell is empty: None, or NaN (a number column with a gap)."""
    return value is None or (isinstance(value, float) and value != value)  # only NaN differs from itself


def _truth(value: Any) -> bool:
    """A value as a condition: a missing value is False (a row with an empty cell is not selected)."""
    return value is not None and value == value and bool(value)  # (NaN is the value not equal to itself)


def _kind(value: Any) -> str:
    if is_missing(value):
        return "empty"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, list):
        return "a list"
    return "true/false" if isinstance(value, bool) else "a number"


def _shown(value: Any) -> str:
    return f"{_shorten(repr(value))} ({_kind(value)})"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))  # bool is an int: True + 1 == 2, as in pandas


def _constant(value: Any) -> Evaluate:
    return lambda row: value


def _column(name: str) -> Evaluate:
    return lambda row: row.get(name)


def _divide(a: Any, b: Any) -> Any:
    """a / b, and by zero what pandas gave: inf or -inf, and NaN for 0 / 0."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, math.copysign(1, a) * math.copysign(1, float(b)))
    return a / b


def _floor_divide(a: Any, b: Any) -> Any:
    return _divide(a, b) if b == 0 else a // b


def _modulo(a: Any, b: Any) -> Any:
    return math.nan if b == 0 else a % b


def _power(a: Any, b: Any) -> Any:
    """a ** b; a huge whole-number power becomes a float (the exponent is at most 100, but powers can nest)."""
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and b * math.log2(abs(a)) > 63:
        a = float(a)
    try:
        result = a ** b
    except ZeroDivisionError:  # 0 ** -1
        return math.inf
    except OverflowError:
        return math.inf if a > 0 or b % 2 == 0 else -math.inf
    return math.nan if isinstance(result, complex) else result  # (-8) ** 0.5 has no real value


_ARITHMETIC: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.Div: ("/", _divide), ast.FloorDiv: ("//", _floor_divide), ast.Mod: ("%", _modulo), ast.Pow: ("**", _power),
}
_ORDER: dict[type, tuple[str, Callable[[Any, Any], bool]]] = {
    ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
}


def _binary(node: ast.BinOp, left: Evaluate, right: Evaluate) -> Evaluate:
    symbol, function = _ARITHMETIC[type(node.op)]

    def apply(row: Row) -> Any:
        a, b = left(row), right(row)
        if is_missing(a) or is_missing(b):
            return math.nan  # arithmetic with an empty cell is empty
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            try:
                return function(a, b)
            except OverflowError:
                raise EvaluationError(f"{_shown(a)} {symbol} {_shown(b)} is too large a number") from None
        if symbol == "+" and isinstance(a, str) and isinstance(b, str):
            return a + b  # texts are joined, as pandas joined them
        raise EvaluationError(f"cannot compute {_shown(a)} {symbol} {_shown(b)}: arithmetic needs numbers")
    return apply


def _unary(node: ast.UnaryOp, operand: Evaluate) -> Evaluate:
    if isinstance(node.op, ast.Not):
        return lambda row: not _truth(operand(row))
    negate = isinstance(node.op, ast.USub)

    def apply(row: Row) -> Any:
        value = operand(row)
        if is_missing(value):
            return math.nan
        if not _is_number(value):
            raise EvaluationError(f"cannot compute {'-' if negate else '+'}{_shown(value)}: it is not a number")
        return -value if negate else +value
    return apply


def _boolean(node: ast.BoolOp, operands: list[Evaluate]) -> Evaluate:
    # and/or of conditions; an empty cell counts as False, as pandas' `&` and `|` counted it.
    if len(operands) == 2:  # the usual case, without a generator per row
        first, second = operands
        if isinstance(node.op, ast.And):
            return lambda row: _truth(first(row)) and _truth(second(row))
        return lambda row: _truth(first(row)) or _truth(second(row))
    if isinstance(node.op, ast.And):
        return lambda row: all(_truth(operand(row)) for operand in operands)
    return lambda row: any(_truth(operand(row)) for operand in operands)


def _membership(items: Evaluate, constant: tuple | None) -> Callable[[Any, Row], bool]:
    """`value in [...]`: against a list written in the expression (looked up in a set: 20,000 names stay fast),
    or against a cell that holds a list."""
    hashed: frozenset | None = None
    if constant is not None:
        try:
            hashed = frozenset(constant)
        except TypeError:  # a list inside the list
            hashed = None

    def contains(value: Any, row: Row) -> bool:
        if is_missing(value):
            return False
        if hashed is not None:
            try:
                return value in hashed
            except TypeError:  # a cell holding a list is not hashable: compare it item by item
                pass
        collection = constant if constant is not None else items(row)
        if is_missing(collection):
            return False  # an empty cell holds no items
        if not isinstance(collection, (list, tuple)):
            raise EvaluationError(f"'in' needs a list on its right, as in kind in ['Unit', 'Spell']; "
                                  f"got {_shown(collection)}")
        return value in collection
    return contains


def _comparison(op: ast.cmpop, right_node: ast.expr, right: Evaluate) -> Callable[[Any, Any, Row], bool]:
    if isinstance(op, (ast.In, ast.NotIn)):
        literal = isinstance(right_node, (ast.List, ast.Tuple)) and _is_literal(right_node)
        contains = _membership(right, tuple(right({})) if literal else None)
        if isinstance(op, ast.In):
            return lambda a, b, row: contains(a, row)
        return lambda a, b, row: not contains(a, row)
    # An empty cell equals nothing and differs from everything (NaN does so by itself); a number never equals a
    # text.
    if isinstance(op, ast.Eq):
        return lambda a, b, row: a is not None and b is not None and bool(a == b)
    if isinstance(op, ast.NotEq):
        return lambda a, b, row: a is None or b is None or bool(a != b)
    symbol, function = _ORDER[type(op)]

    def order(a: Any, b: Any, row: Row) -> bool:
        if a is None or b is None:  # an empty cell is in no order (NaN compares False by itself)
            return False
        try:
            return bool(function(a, b))
        except TypeError:
            raise EvaluationError(f"cannot compare {_shown(a)} {symbol} {_shown(b)}") from None
    return order


def _compare(node: ast.Compare, parts: list[Evaluate]) -> Evaluate:
    """A comparison, chained ones included: `1 <= power <= 5` is `1 <= power and power <= 5`."""
    tests = [_comparison(op, right, parts[i + 1]) for i, (op, right) in enumerate(zip(node.ops, node.comparators))]
    if len(tests) == 1:
        left, right, test = parts[0], parts[1], tests[0]
        return lambda row: test(left(row), right(row), row)

    def chain(row: Row) -> bool:
        a = parts[0](row)
        for test, part in zip(tests, parts[1:]):
            b = part(row)
            if not test(a, b, row):
                return False
            a = b
        return True
    return chain


def _is_literal(node: ast.expr) -> bool:
    """Whether a node is made of literals only (its value is the same on every row)."""
    return not any(isinstance(n, ast.Call) or isinstance(n, ast.Name) and n.id not in ("True", "False")
                   for n in ast.walk(node))


def _length(value: Any) -> int:
    """len() of a cell: a list's items, a text's characters, 0 for an empty cell."""
    if is_missing(value):
        return 0
    if not isinstance(value, (str, list)):
        raise EvaluationError(f"len() counts the items of a list or the characters of a text; got {_shown(value)}")
    return len(value)


def _row_helper(node: ast.Call) -> Evaluate:
    """filled(x), empty(x), len(x) and matches(x, 'pattern') (the whole text; an empty cell never matches)."""
    column = _column(node.args[0].id)  # type: ignore[attr-defined]
    if node.func.id == "filled":  # type: ignore[attr-defined]
        return lambda row: not is_missing(column(row))
    if node.func.id == "empty":  # type: ignore[attr-defined]
        return lambda row: is_missing(column(row))
    if node.func.id == "len":  # type: ignore[attr-defined]
        return lambda row: _length(column(row))
    fullmatch = _compile_pattern(node.args[1].value).fullmatch  # type: ignore[attr-defined]
    return lambda row: not is_missing(value := column(row)) and fullmatch(str(value)) is not None


def _aggregate_value(node: ast.Call) -> Evaluate:
    label = ast.unparse(node)
    return lambda values: values[label]


def _column_in_total(node: ast.Name) -> Evaluate:
    def refuse(row: Row) -> Any:
        raise EvaluationError(f"'{node.id}' is a column: a total compares aggregates of it, such as "
                              f"sum({node.id}), max({node.id}) or count({node.id})")
    return refuse


def _compile(node: ast.AST, call: Callable[[ast.Call], Evaluate],
             name: Callable[[ast.Name], Evaluate]) -> Evaluate:
    """A checked tree as a function of a row (recursion is bounded: check_expression refuses deep trees)."""
    def sub(child: ast.AST) -> Evaluate:
        return _compile(child, call, name)

    if isinstance(node, ast.Expression):
        return sub(node.body)
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.Name):
        return _constant(node.id == "True") if node.id in ("True", "False") else name(node)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [sub(e) for e in node.elts]
        if _is_literal(node):
            return _constant([item({}) for item in items])  # made once, not once per row
        return lambda row: [item(row) for item in items]
    if isinstance(node, ast.Call):
        return call(node)
    if isinstance(node, ast.BinOp):
        return _binary(node, sub(node.left), sub(node.right))
    if isinstance(node, ast.UnaryOp):
        return _unary(node, sub(node.operand))
    if isinstance(node, ast.BoolOp):
        return _boolean(node, [sub(v) for v in node.values])
    if isinstance(node, ast.Compare):
        return _compare(node, [sub(node.left), *(sub(c) for c in node.comparators)])
    raise ExpressionError(f"'{type(node).__name__}' is not allowed")  # check_expression refused it already


def _columns_of(rows: Sequence[Row], columns: Iterable[str] | None) -> set[str]:
    return set(columns) if columns is not None else {name for row in rows for name in row}


def compile_mask(expr: str, columns: set[str] | None = None) -> Evaluate:
    """A checked row expression as a function of a row giving True or False (made once a process for an
    expression `check_expression` keeps: the function keeps nothing of the rows it is given)."""
    tree = check_expression(expr, columns)
    if len(expr) > KEPT_CHARS:
        return _mask_of(tree)
    return _kept_mask(tree)


def _mask_of(tree: ast.Expression) -> Evaluate:
    evaluate = _compile(tree, _row_helper, lambda node: _column(node.id))
    return lambda row: _truth(evaluate(row))


_kept_mask = functools.lru_cache(maxsize=256)(_mask_of)  # by the kept tree's identity: made of the same text


def evaluate_mask(rows: Sequence[Row], expr: str, columns: Iterable[str] | None = None) -> list[bool]:
    """Evaluate a checked boolean expression on every row; missing values count as False.

    `columns` are the names an expression may read (by default every key of the rows). An expression that
    cannot be evaluated on a row raises EvaluationError with that row's position in `row`.
    """
    test = compile_mask(expr, _columns_of(rows, columns))
    mask = []
    for position, row in enumerate(rows):
        try:
            mask.append(test(row))
        except EvaluationError as exc:
            exc.row = position
            raise
    return mask


def columns_in(expr: str) -> list[str]:
    """The column names an (already checked) expression reads, in order of appearance."""
    return list(_columns_in(expr) if len(expr) > KEPT_CHARS else _kept_columns(expr))


def _columns_in(expr: str) -> tuple[str, ...]:
    tree = parse_expression(expr)
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs]
    return tuple(dict.fromkeys(n.id for n in sorted(names, key=lambda n: n.col_offset)))


_kept_columns = functools.lru_cache(maxsize=256)(_columns_in)  # (see KEPT_CHARS)


def _aggregates_of(tree: ast.Expression) -> list[tuple[str, str, tuple[str, ...]]]:
    """The aggregates a checked total computes, in the order written: their text, name and columns."""
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    return [(ast.unparse(node), node.func.id, tuple(a.id for a in node.args))  # type: ignore[attr-defined]
            for node in calls]


_kept_aggregates = functools.lru_cache(maxsize=256)(_aggregates_of)  # by the kept tree (see KEPT_CHARS)


def check_aggregate(expr: str, columns: set[str] | None = None) -> ast.Expression:
    """Check an aggregate expression such as `sum(count) == 20` or `3 <= rows() <= 10`."""
    return check_expression(expr, columns, {name: arity for name, (arity, _) in AGGREGATES.items()})


def evaluate_aggregate(rows: Sequence[Row], expr: str, columns: Iterable[str] | None = None,
                       constants: Mapping[str, Any] | None = None) -> tuple[bool, dict[str, Any]]:
    """Whether an aggregate expression holds over some rows, and the value of each aggregate in it
    (by its text, in the order written: {'sum(count)': 20}). `constants` are names that are no column (a game's
    values), each the same on every row."""
    tree = check_aggregate(expr, _columns_of(rows, columns))
    values: dict[str, Any] = {}
    for label, name, arguments in _aggregates_of(tree) if len(expr) > KEPT_CHARS else _kept_aggregates(tree):
        if label not in values:
            values[label] = AGGREGATES[name][1](rows, list(arguments))
    known = constants or {}
    holds = _compile(tree, _aggregate_value, lambda node: _constant(known[node.id]) if node.id in known
                     else _column_in_total(node))(values)
    return _truth(holds), values

"""The Jinja sandbox card templates run in, so that rendering (and validating) a downloaded game is safe.

Jinja's immutable sandbox stops a template from reaching Python's internals (`cycler.__init__.__globals__`,
`__builtins__`) or changing the data it is given. On top of it, one render has a budget: loop iterations,
calls and attribute reads are counted, values and the SVG it writes have a size limit, and powers,
repetitions and format widths that would make a huge value are refused before they are computed.
A designer's template stays far below every limit; crossing one is a finding, not a hang.

Whatever can multiply sizes (`replace`, `format`, `%`, `join`, `indent`, `wordwrap`, `expandtabs`, `translate`,
`string`/`tojson`/`pprint` of a structure holding one text many times, `lipsum`) is sized from its arguments
first (`text_size` and the `_SIZE_OF` table) and refused before it runs: checking the value afterwards would
let one call build gigabytes. No single call can then run long, so the deadline is checked at every step.
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

from jinja2 import Template, TemplateSyntaxError, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.parser import Parser
from jinja2.runtime import BlockReference, Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Namespace, generate_lorem_ipsum
from markupsafe import Markup

MAX_STEPS = 2_000_000  # loop iterations, calls, attribute reads and operators of one render
MAX_SECONDS = 20.0  # wall time of one render
MAX_SIZE = 5_000_000  # characters of a text (or items of a list) a template makes, the SVG included
MAX_INT_BITS = 100_000  # about 30,000 digits
MAX_BLOCKS = 16  # blocks ({% for %}, {% if %}, {% macro %}, ...) inside each other: Python allows 20 nested loops
MAX_DEPTH = 100  # parts of a template inside each other: blocks, and operations, calls and filters in an expression
_HUGE_WIDTH = re.compile(r"\d{7,}")  # a format width or precision of a million or more
STEP_FILTER = "_cardgen_steps"


class TemplateLimit(Exception):
    """A template went past one of the sandbox's bounds; the message says which."""


class Budget:
    """The work one render may do: a count of steps and a deadline."""

    def __init__(self) -> None:
        self.steps = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def step(self) -> None:
        """Count one step; raise TemplateLimit past the step limit or the deadline."""
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TemplateLimit(f"the template does more than {MAX_STEPS:,} steps (loop turns, calls) for one "
                                "card; loop over less")
        if time.monotonic() > self.deadline:  # every step: ~0.1 s over 2,000,000 steps, and no call runs long
            raise TemplateLimit(f"the template takes longer than {MAX_SECONDS:g} s for one card")


def check_size(value: Any) -> Any:
    """`value`, or TemplateLimit when it is a text, list or number too large for a card."""
    if isinstance(value, (str, list, tuple, dict, set)) and len(value) > MAX_SIZE:
        raise TemplateLimit(f"the template makes a value of {len(value):,} characters or items (the limit is "
                            f"{MAX_SIZE:,})")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise TemplateLimit("the template makes a number with more than 30,000 digits")
    return value


def refuse_size(size: int, what: str) -> None:
    """Raise TemplateLimit when an operation would make a text of `size` characters (worked out before it runs)."""
    if size > MAX_SIZE:
        raise TemplateLimit(f"{what} would make a text of more than {MAX_SIZE:,} characters")


_ESCAPED = 12  # characters one character can become: in a repr or JSON (U+1F600 is `\ud83d\ude00`), escaped HTML
_FLOAT_TEXT = 420  # a float as text: %f of 1e308 is 309 digits, with `,` separators, sign and point
_OBJECT_TEXT = 1_000  # the repr of anything else a template reaches (a macro, a helper, a loop, a range)
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines breaks


def _own_text(value: Any, quoted: bool) -> int:
    """The characters a value's text takes itself, its items left out (see `text_size`)."""
    if isinstance(value, (str, bytes)):
        return _ESCAPED * len(value) + 3 if quoted else len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() * 5 // 4 + 3  # in binary with `_` every four digits, the longest way
    if isinstance(value, float):
        return _FLOAT_TEXT
    if isinstance(value, (list, tuple, set, frozenset, dict, Namespace)) or type(value).__name__.startswith("dict_"):
        return 20  # brackets, and the name of a Namespace or a dict view
    return _OBJECT_TEXT


def _children(value: Any) -> Iterator[tuple[Any, int]]:
    """The items a value's text shows, each with how much further it can be indented by `pprint`."""
    if isinstance(value, Namespace):
        value = object.__getattribute__(value, "_Namespace__attrs")
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, 1
            yield item, 3 + text_size(key, quoted=True)
    elif isinstance(value, (list, tuple, set, frozenset)) or type(value).__name__ in ("dict_keys", "dict_values",
                                                                                       "dict_items"):
        yield from ((item, 1) for item in value)


def text_size(value: Any, quoted: bool = False, pretty: bool = False) -> int:
    """An upper bound of the length of `str(value)`, its repr, its JSON or escaped HTML (`quoted`: a text shown with
    quotes and escapes), or its `pprint` (`pretty`), worked out without making it.

    It walks the items without recursion (a list nested 100,000 deep cannot overflow the stack) and stops once past
    the size limit: a list holding one list a thousand times, itself holding it a thousand times, is not walked a
    million times.
    """
    total = _own_text(value, quoted)
    stack = [(_children(value), 0)]
    while stack and total <= MAX_SIZE:
        items, indent = stack[-1]
        child = next(items, None)
        if child is None:
            stack.pop()
            continue
        item, further = child
        own = _own_text(item, True)
        # pprint puts an item on a line of its own, indented, and cuts a long text into pieces, one a line
        total += own + 2 + (indent + further + (own * (indent + further) if isinstance(item, str) else 0)) * pretty
        stack.append((_children(item), indent + further))
    return total


def _total(sizes: Iterable[int]) -> int:
    """The sum of sizes, stopping once past the size limit (each may take a walk through a structure)."""
    total = 0
    for size in sizes:
        total += size
        if total > MAX_SIZE:
            break
    return total


_SIZED_KINDS = frozenset({str, list, tuple, dict, set, range})  # (exactly these: a subclass is asked `isinstance`)


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, dict, set, range)) else 0


def _check_operands(operator: str, left: Any, right: Any) -> None:
    """Refuse an operation whose result would be too large, before it is computed."""
    if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 0:
        if abs(left).bit_length() * right > MAX_INT_BITS:
            raise TemplateLimit(f"{left} ** {right} is too large a number for a card")
    if operator == "*":
        count = right if isinstance(left, (str, list, tuple)) else left
        if isinstance(count, int) and (_sized(left) or _sized(right)) * count > MAX_SIZE:
            raise TemplateLimit(f"repeating a text or list {count:,} times makes more than {MAX_SIZE:,} "
                                "characters or items")
    if operator == "%" and isinstance(left, str):
        _check_format(left, right if isinstance(right, tuple) else (right,))
        refuse_size(percent_size(left, right), "a % format")


def _check_format(pattern: str, args: Iterable[Any]) -> None:
    """Refuse a format with a width or precision of a million or more (it would make a text that long)."""
    if _HUGE_WIDTH.search(pattern) or any(isinstance(a, int) and abs(a) >= 10**6 for a in args):
        raise TemplateLimit("a format width of a million characters or more is not allowed in a template")


_PERCENT = re.compile(r"%(?:\(([^)]*)\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.?)", re.DOTALL)


def _widths(*numbers: str | None) -> int:
    return sum(int(n) for n in numbers if n and n.isdigit())


def percent_size(pattern: str, right: Any) -> int:
    """An upper bound of the length of `pattern % right`: the pattern, every width and precision, and the text of
    every value it takes (once for each conversion naming it: `%(a)s%(a)s` takes `a` twice)."""
    values = right if isinstance(right, tuple) else (right,)
    size = len(pattern) + _total(text_size(v) + (abs(v) if isinstance(v, int) else 0) for v in values)  # `*` widths
    for match in _PERCENT.finditer(pattern):
        key, width, precision, _ = match.groups()
        size += _widths(width, precision)
        if key is not None and isinstance(right, Mapping):
            size += text_size(right.get(key))
        if size > MAX_SIZE:
            break
    return size


def _format_size(value: Any, spec: str) -> int:
    """An upper bound of `format(value, spec)`: the value's text, padded to a width, with a precision's digits."""
    return text_size(value) + _widths(*re.findall(r"\d+", spec))


class _BoundedFormatter(SandboxedFormatter):
    """Jinja's sandboxed `str.format` that sizes each field before making it and keeps a running total."""

    def __init__(self, environment: TemplateSandbox, pattern: str, **kwargs: Any) -> None:
        super().__init__(environment, **kwargs)
        self.budget, self.made = environment.budget, len(pattern)
        self.factor = 6 if isinstance(pattern, Markup) else 1  # escaped HTML: `"` is `&#34;`

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        """`{x!r}` and `{x!a}` are sized before the repr is made."""
        if conversion in ("r", "a"):
            refuse_size(self.made + text_size(value, quoted=True), "a format's field")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        """Each field is a step (so the deadline is kept) and is sized, with the fields before it, first."""
        self.budget.step()
        self.made += self.factor * _format_size(value, format_spec)
        refuse_size(self.made, "a format")
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, SandboxedEscapeFormatter):
    """`_BoundedFormatter` for a Markup pattern (its fields are escaped)."""


def _replace_size(s: Any, old: Any = "", new: Any = "", count: Any = None, eval_ctx: Any = None, **_: Any) -> int:
    """`s.replace(old, new, count)`: each occurrence of `old` grows the text by the difference (a Markup escapes
    `old` and `new` first; the filter escapes all three when autoescaping and one is Markup)."""
    escaped = isinstance(s, Markup) or eval_ctx is not None and eval_ctx.autoescape and \
        (isinstance(old, Markup) or isinstance(new, Markup))
    s, old, new = (Markup.escape(v) if escaped else str(v) for v in (s, old, new))
    occurrences = s.count(old) if old else len(s) + 1
    if isinstance(count, int) and count >= 0:
        occurrences = min(occurrences, count)
    return len(s) + occurrences * max(len(new) - len(old), 0)


def _join_size(value: Any, d: Any = "", eval_ctx: Any = None, **_: Any) -> int:
    """`d.join(value)`: every item's text (escaped, when autoescaping or `d` is Markup) and `d` between each two."""
    items = list(value)  # `value` is a collection here (see `_listed`)
    factor = 6 if isinstance(d, Markup) or eval_ctx is not None and eval_ctx.autoescape else 1
    return factor * (_total(text_size(item) for item in items) + max(len(items) - 1, 0) * text_size(d))


def _indent_size(s: Any, width: Any = 4, **_: Any) -> int:
    """Every line of `s` (as str.splitlines breaks them) gets `width` spaces, or the text `width`, in front."""
    text = str(s)
    lines = 1 + sum(text.count(mark) for mark in _LINE_BREAKS)
    return len(text) + 1 + lines * (text_size(width) if isinstance(width, str) else max(int(width), 0))


def _wordwrap_size(s: Any, wrapstring: Any = None, **_: Any) -> int:
    """At most one line a character, each ended by `wrapstring` (a line break by default)."""
    return len(str(s)) * (2 + text_size(wrapstring))


def _urlize_size(value: Any, target: Any = None, rel: Any = None, **_: Any) -> int:
    """Every word may be a link: twice its escaped text and the `target` and `rel` attributes."""
    text = str(value)
    return 2 * _ESCAPED * len(text) + (len(text) // 2 + 1) * (text_size(target) + text_size(rel) + 60)


def _sum_size(iterable: Any, start: Any = 0, **_: Any) -> int:
    """Adding up lists makes one list of all their items; numbers stay small."""
    if not isinstance(start, (list, tuple, str)):
        return 0
    return len(start) + _total(text_size(item) for item in iterable)


# The filters whose result can be a product of their inputs' sizes, and an upper bound of its size from their
# arguments (by name, as the filter's own signature names them).
_FILTER_SIZES: dict[str, Callable[..., int]] = {
    "replace": _replace_size,
    "join": _join_size,
    "indent": _indent_size,
    "wordwrap": _wordwrap_size,
    "urlize": _urlize_size,
    "sum": _sum_size,
    "format": lambda value, args=(), kwargs=None, **_: percent_size(str(value), kwargs or args),
    "string": lambda s, **_: text_size(s),
    "tojson": lambda value, indent=None, **_: text_size(value, quoted=True, pretty=bool(indent)) * max(indent or 1, 1),
    "pprint": lambda value, **_: text_size(value, quoted=True, pretty=True),
}
_LISTED = ("value", "iterable")  # arguments of join and sum that may be generators: listed once, then sized


def _longest_replacement(table: Any) -> int:
    """The longest text a `str.translate` table puts in for one character."""
    values = table.values() if isinstance(table, dict) else table if isinstance(table, (list, tuple)) else None
    if values is None:
        return 1 if isinstance(table, (str, bytes)) else _OBJECT_TEXT
    return max((len(v) for v in values if isinstance(v, (str, bytes))), default=1)


# The same for methods of a text (str, Markup or bytes): (the text, the call's arguments) -> size.
_METHOD_SIZES: dict[str, Callable[..., int]] = {
    "replace": lambda s, old="", new="", count=-1: _replace_size(s, old, new, count),
    "join": lambda s, items: _join_size(items, s),
    "expandtabs": lambda s, tabsize=8: len(s) + s.count("\t" if isinstance(s, str) else b"\t") * max(tabsize, 0),
    "translate": lambda s, table: len(s) * _longest_replacement(table),
}


def _listed(value: Any) -> Any:
    """A collection as is, anything else iterable (a generator) as a list, so that it can be sized and used."""
    return value if isinstance(value, (list, tuple, set, frozenset, dict, str, range)) else list(value)


_LIPSUM = inspect.signature(generate_lorem_ipsum)
_JINJA_ONLY = ("_loop_vars", "_block_vars")  # what Jinja passes to every call in a loop or block (and takes off)


def _lipsum_size(*args: Any, **kwargs: Any) -> int:
    """lipsum(n, html, min, max) writes n paragraphs of fewer than max words (each of at most 12 letters and a
    comma or a stop and a space), as HTML (`<p>` and `</p>`) or apart by blank lines."""
    called = _LIPSUM.bind(*args, **kwargs)
    called.apply_defaults()
    paragraphs, most = called.arguments["n"], called.arguments["max"]
    return max(paragraphs, 0) * (max(most, 0) * 15 + 10)


def _check_arguments(args: tuple, kwargs: dict) -> None:
    """Refuse filter arguments that would make a huge text: a width of a million, or a join or replace whose
    result could exceed the size limit."""
    # One pass keeping the two largest sizes, a value's exact type looked at first, not a list, a generator, a sort
    # and four isinstance calls a value (~13 calls of ~7 values a gen1000 card's render: ~4-5 us each, ~1.5 now)
    values = (*args, *kwargs.values()) if kwargs else args
    largest = second = 0
    for value in values:
        kind = type(value)
        if kind is int or kind not in _SIZED_KINDS and isinstance(value, int) and kind is not bool:
            if abs(value) > MAX_SIZE:
                raise TemplateLimit(f"a number argument larger than {MAX_SIZE:,} is not allowed in a template")
            continue
        size = len(value) if kind in _SIZED_KINDS else _sized(value)
        if size > largest:
            largest, second = size, largest
        elif size > second:
            second = size
    if len(values) >= 2 and largest * max(second, 1) > 10 * MAX_SIZE:
        raise TemplateLimit(f"a filter would make a text of more than {MAX_SIZE:,} characters")


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """A Jinja filter whose arguments and result are checked against the size limits; one that can multiply sizes
    (`_FILTER_SIZES`) is sized from its arguments before it runs."""
    size_of = _FILTER_SIZES.get(name)
    signature = inspect.signature(func) if size_of else None

    @functools.wraps(func)  # keeps Jinja's pass_context / pass_eval_context marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args, kwargs)
        if size_of is not None and signature is not None:
            called = signature.bind(*args, **kwargs)
            called.apply_defaults()
            for listed in set(_LISTED) & called.arguments.keys():
                called.arguments[listed] = _listed(called.arguments[listed])
            refuse_size(size_of(**called.arguments), f"the filter {name}")
            args, kwargs = called.args, called.kwargs
        return check_size(func(*args, **kwargs))

    return bounded


_BLOCKS = (nodes.For, nodes.If, nodes.Macro, nodes.CallBlock, nodes.FilterBlock, nodes.With, nodes.Block,
           nodes.AssignBlock, nodes.EvalContextModifier, nodes.Scope)


def _too_deep(what: str, lineno: int, name: str | None, filename: str | None) -> TemplateSyntaxError:
    return TemplateSyntaxError(f"the template nests {what} inside each other here; split it up (with {{% set %}}, "
                               "a macro or a template of its own)", lineno, name, filename)


def _check_nesting(tree: nodes.Template, name: str | None, filename: str | None) -> None:
    """Refuse a template nested deeper than MAX_BLOCKS blocks or MAX_DEPTH parts, at the line where it is: Jinja
    compiles a template by recursion and Python refuses code with more than 20 nested loops, so either would be
    a RecursionError or a SyntaxError about code the designer never wrote. Walked without recursion."""
    stack: list[tuple[nodes.Node, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, blocks = stack.pop()
        if blocks > MAX_BLOCKS:
            raise _too_deep(f"more than {MAX_BLOCKS} blocks ({{% for %}}, {{% if %}}, ...)", node.lineno, name,
                            filename)
        if depth > MAX_DEPTH:
            raise _too_deep(f"more than {MAX_DEPTH} operations, calls or blocks", node.lineno, name, filename)
        stack.extend((child, depth + 1, blocks + isinstance(child, _BLOCKS)) for child in node.iter_child_nodes())


def _written(part: Any) -> int:
    """The characters a part of a template's output holds (a `{% filter %}` block may put in a number, which
    joining the parts refuses later, as Jinja does)."""
    return len(part) if isinstance(part, str) else 0


class OutputBuffer(list):
    """What a macro, a `{% call %}`, `{% filter %}` or `{% set %}` block writes, bounded as a render's SVG is: a
    macro writing a long text in a loop built gigabytes before its value was checked."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def append(self, part: Any) -> None:
        """Write one part."""
        self._count(_written(part))
        super().append(part)

    def extend(self, parts: Iterable[Any]) -> None:
        """Write several parts."""
        parts = tuple(parts)
        self._count(sum(_written(part) for part in parts))
        super().extend(parts)

    def _count(self, size: int) -> None:
        self.size += size
        if self.size > MAX_SIZE:
            raise TemplateLimit(f"a macro or block of the template writes more than {MAX_SIZE:,} characters")


def _bounded_block(block: BlockReference) -> str:
    """`self.name()` or `super()`: the block rendered as Jinja's BlockReference renders it, into a bounded buffer
    (Jinja joins the block's whole output first: 400,000,000 characters before a check)."""
    written = OutputBuffer()
    for part in block._stack[block._depth](block._context):  # Jinja's own way, private: pinned in pyproject.toml
        written.append(part)
    text = "".join(written)
    return Markup(text) if block._context.eval_ctx.autoescape else text


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles every loop to count its turns, every `~` concatenation to check its size and every buffer (of a
    macro or a block) to bound what is written into it."""

    def buffer(self, frame: Frame) -> None:
        """A bounded buffer (`OutputBuffer`) instead of a list."""
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.output_buffer()")

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        """Every for loop iterates through the step filter (added before the filters in use are collected)."""
        for loop in node.find_all(nodes.For):
            if not (isinstance(loop.iter, nodes.Filter) and loop.iter.name == STEP_FILTER):
                loop.iter = nodes.Filter(loop.iter, STEP_FILTER, [], [], None, None, lineno=loop.iter.lineno)
        super().visit_Template(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        """`a ~ b` is checked against the size limit, and joins None (an empty data cell) as nothing."""
        join = "markup_join" if frame.eval_ctx.volatile or frame.eval_ctx.autoescape else "str_join"
        self.write(f"environment.checked({join}((")  # as Jinja's own visit_Concat, each operand through `shown`
        for operand in node.nodes:
            self.write("environment.shown(")
            self.visit(operand, frame)
            self.write("), ")
        self.write(")))")


# Trees `TemplateSandbox.parse` made, each taken by the first compiling of the same text (`TemplateSandbox._parse`).
_PARSED: dict[tuple[object, ...], nodes.Template] = {}
_PARSED_AT_MOST = 64
_PARSED_LOCK = threading.Lock()


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with a budget per render (call `start_render` before each render)."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+", "//"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, finalize=self.shown, **kwargs)
        self.budget = Budget()
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        self.filters[STEP_FILTER] = self._steps

    def parse(self, source: str, name: str | None = None, filename: str | None = None) -> nodes.Template:
        """Jinja's parse, its tree kept for the compiling of the same text (`_parse`): validation scans a game's
        templates, then compiles them to render its cards (each parse ~1-3 ms of a cold build's serial path)."""
        tree = super().parse(source, name, filename)
        with _PARSED_LOCK:  # the output stages' threads compile templates too
            if len(_PARSED) >= _PARSED_AT_MOST:
                _PARSED.pop(next(iter(_PARSED)))  # the oldest: a scanned template whose compiling was never asked
            _PARSED[self._parsing(source, name, filename)] = tree
        return tree

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """Jinja's parse (for compiling and for `parse` alike), with its nesting bounded (`_check_nesting`); Jinja's
        parser recurses into brackets, so 70 nested parentheses are a syntax error at their line too. A tree `parse`
        kept for the same text, in an environment that parses alike, is taken (once) instead."""
        with _PARSED_LOCK:
            kept = _PARSED.pop(self._parsing(source, name, filename), None)
        if kept is not None:
            kept.set_environment(self)
            return kept
        parser = Parser(self, source, name, filename)
        try:
            tree = parser.parse()
        except RecursionError:
            raise _too_deep("too many brackets or blocks", parser.stream.current.lineno, name, filename) from None
        _check_nesting(tree, name, filename)
        return tree

    def _parsing(self, source: str, name: str | None, filename: str | None) -> tuple[object, ...]:
        """What a parse of `source` follows from: the text, its names, and this environment's syntax (its class,
        delimiters, whitespace options and extensions)."""
        return (type(self), self.block_start_string, self.block_end_string, self.variable_start_string,
                self.variable_end_string, self.comment_start_string, self.comment_end_string,
                self.line_statement_prefix, self.line_comment_prefix, self.trim_blocks, self.lstrip_blocks,
                self.newline_sequence, self.keep_trailing_newline, tuple(self.extensions), source, name, filename)

    def start_render(self) -> None:
        """A fresh budget for the next render."""
        self.budget = Budget()

    @staticmethod
    def shown(value: Any) -> Any:
        """A value as `{{ }}` and `~` print it: None (an empty number cell) is nothing, not the word None."""
        return "" if value is None else value

    def output_buffer(self) -> OutputBuffer:
        """A buffer for a macro or a block to write into (the compiled template calls this)."""
        return OutputBuffer()

    def checked(self, value: Any) -> Any:
        """A value the template made, checked against the size limit."""
        return check_size(value)

    def _steps(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.budget.step()
            yield item

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """Operators that can make huge values are checked before and after."""
        self.budget.step()
        _check_operands(operator, left, right)
        return check_size(super().call_binop(context, operator, left, right))

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Every call is a step; its arguments and result are checked, and a call that can multiply sizes is
        sized from its arguments before it runs."""
        self.budget.step()
        _check_arguments(args, kwargs)
        named = {k: v for k, v in kwargs.items() if k not in _JINJA_ONLY}
        if obj is generate_lorem_ipsum:
            refuse_size(_lipsum_size(*args, **named), "lipsum()")
        name = getattr(obj, "__name__", "")
        if isinstance(getattr(obj, "__self__", None), (str, bytes)) and name in _METHOD_SIZES:
            if name == "join" and args:
                args = (_listed(args[0]), *args[1:])
            refuse_size(_METHOD_SIZES[name](obj.__self__, *args, **named), f"{name}()")
        if isinstance(obj, BlockReference) and not args and not named:
            return _bounded_block(obj)
        return check_size(super().call(context, obj, *args, **kwargs))

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Every attribute read is a step."""
        self.budget.step()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """Every subscript is a step."""
        self.budget.step()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """`'{:>1000000000}'.format(x)` is refused like `%` with a huge width, and every field of a format is sized
        before it is made (`'{0}{0}{0}'.format(text)` takes the text three times)."""
        if super().wrap_str_format(value) is None:  # not the format or format_map of a text
            return None
        pattern = value.__self__
        is_map = value.__name__ == "format_map"

        def bounded(*args: Any, **kwargs: Any) -> str:
            if is_map:
                (kwargs,), args = args, ()  # format_map(mapping): one argument, as Jinja's wrapper takes it
            _check_format(pattern, [*args, *kwargs.values()])
            formatter = _BoundedEscapeFormatter(self, pattern, escape=pattern.escape) \
                if isinstance(pattern, Markup) else _BoundedFormatter(self, pattern)
            return check_size(type(pattern)(formatter.vformat(pattern, args, kwargs)))

        return bounded


def render_bounded(environment: TemplateSandbox, template: Template, context: dict[str, Any]) -> str:
    """Render a template with a fresh budget; the text it writes is bounded too."""
    environment.start_render()
    parts, size = [], 0
    for part in template.generate(context):
        size += len(part)
        if size > MAX_SIZE:
            raise TemplateLimit(f"the template writes more than {MAX_SIZE:,} characters for one card")
        parts.append(part)
    return "".join(parts)

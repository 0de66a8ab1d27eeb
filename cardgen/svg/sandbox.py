"""The Jinja sandbox card templates run in, so that rendering (and validating) a downloaded game is safe.

Jinja's immutable sandbox stops a template from reaching Python's internals (`cycler.__init__.__globals__`,
`__builtins__`) or changing the data it is given. On top of it, one render has a budget: loop iterations,
calls and attribute reads are counted, values and the SVG it writes have a size limit, and powers,
repetitions and format widths that would make a huge value are refused before they are computed.
A designer's template stays far below every limit; crossing one is a finding, not a hang.
"""
from __future__ import annotations

import functools
import re
import time
from typing import Any, Callable, Iterable, Iterator

from jinja2 import Template, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_STEPS = 2_000_000  # loop iterations, calls, attribute reads and operators of one render
MAX_SECONDS = 20.0  # wall time of one render
MAX_SIZE = 5_000_000  # characters of a text (or items of a list) a template makes, the SVG included
MAX_INT_BITS = 100_000  # about 30,000 digits
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
        if self.steps % 4096 == 0 and time.monotonic() > self.deadline:
            raise TemplateLimit(f"the template takes longer than {MAX_SECONDS:g} s for one card")


def check_size(value: Any) -> Any:
    """`value`, or TemplateLimit when it is a text, list or number too large for a card."""
    if isinstance(value, (str, list, tuple, dict, set)) and len(value) > MAX_SIZE:
        raise TemplateLimit(f"the template makes a value of {len(value):,} characters or items (the limit is "
                            f"{MAX_SIZE:,})")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise TemplateLimit("the template makes a number with more than 30,000 digits")
    return value


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


def _check_format(pattern: str, args: Iterable[Any]) -> None:
    """Refuse a format with a width or precision of a million or more (it would make a text that long)."""
    if _HUGE_WIDTH.search(pattern) or any(isinstance(a, int) and abs(a) >= 10**6 for a in args):
        raise TemplateLimit("a format width of a million characters or more is not allowed in a template")


def _check_arguments(args: tuple, kwargs: dict) -> None:
    """Refuse filter arguments that would make a huge text: a width of a million, or a join or replace whose
    result could exceed the size limit."""
    values = [*args, *kwargs.values()]
    if any(isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_SIZE for v in values):
        raise TemplateLimit(f"a number argument larger than {MAX_SIZE:,} is not allowed in a template")
    sizes = sorted((_sized(v) for v in values), reverse=True)
    if len(sizes) >= 2 and sizes[0] * max(sizes[1], 1) > 10 * MAX_SIZE:
        raise TemplateLimit(f"a filter would make a text of more than {MAX_SIZE:,} characters")


def _bounded_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    """A Jinja filter whose arguments and result are checked against the size limits."""

    @functools.wraps(func)  # keeps Jinja's pass_context / pass_eval_context marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args, kwargs)
        return check_size(func(*args, **kwargs))

    return bounded


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles every loop to count its turns and every `~` concatenation to check its size."""

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


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with a budget per render (call `start_render` before each render)."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+", "//"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, finalize=self.shown, **kwargs)
        self.budget = Budget()
        self.filters = {name: _bounded_filter(f) for name, f in self.filters.items()}
        self.filters[STEP_FILTER] = self._steps

    def start_render(self) -> None:
        """A fresh budget for the next render."""
        self.budget = Budget()

    @staticmethod
    def shown(value: Any) -> Any:
        """A value as `{{ }}` and `~` print it: None (an empty number cell) is nothing, not the word None."""
        return "" if value is None else value

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

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Every call is a step; its arguments and result are checked."""
        self.budget.step()
        _check_arguments(args, kwargs)
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
        """`'{:>1000000000}'.format(x)` is refused like `%` with a huge width."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        pattern = value.__self__

        def bounded(*args: Any, **kwargs: Any) -> str:
            _check_format(pattern, [*args, *kwargs.values()])
            return check_size(wrapped(*args, **kwargs))

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

"""The template sandbox sizes what a call would make before the call runs: values that multiply sizes are refused
from their arguments, with little memory and time spent, and one slow call cannot carry a render past its
deadline."""
from __future__ import annotations

import os
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardgen.svg import sandbox
from cardgen.svg.sandbox import MAX_SIZE, TemplateLimit, TemplateSandbox, render_bounded

PEAK_MB = 100  # far above what a refused call may cost (its arguments), far below what it would make (>= 100 MB)
# A value allowed near the bound may cost more than its characters: indent() splits 5,000,000 characters into a
# list of a million lines (~50 bytes each) on its way. Far below the gigabytes of an unsized call all the same.
PEAK_ALLOWED_MB = 300

MULTIPLIERS = [  # each would make 100,000,000 characters or more before a check of the value made
    "{{ (('a\\n' * 250) | indent(4000000)) | length }}",
    "{{ ('a' * 1000).replace('a', 'b' * 100000) }}",
    "{{ ('a' * 1000) | replace('a', 'b' * 100000) }}",
    "{{ ('{0}' * 1000).format('x' * 100000) }}",
    "{{ (('{0}' * 1000) | safe).format('x' * 100000) }}",
    "{{ ('{a}' * 1000).format_map({'a': 'x' * 100000}) }}",
    "{{ ('{0!r}' * 1000).format('x' * 100000) }}",
    "{{ ('%(a)s' * 1000) % {'a': 'x' * 100000} }}",
    "{{ ('%s' * 1000) | format(*(['x' * 100000] * 1000)) }}",
    "{{ (['x' * 100000] * 1000) | join }}",
    "{{ ''.join(['x' * 100000] * 1000) }}",
    "{{ (['x' * 100000] * 1000) | map('upper') | join }}",
    "{{ ('\\t' * 1000).expandtabs(4000000) }}",
    "{{ ('a ' * 100000) | wordwrap(1, wrapstring='x' * 1000) }}",
    "{{ (['x' * 100000] * 1000) | string }}",
    "{{ (['x' * 100000] * 1000) | tojson }}",
    "{{ ([['x' * 1000] * 1000] * 100) | pprint }}",
    "{{ ('a' * 1000).translate({97: 'x' * 100000}) }}",
    "{{ ('a.com ' * 1000) | urlize(target='x' * 100000) }}",
    "{{ ([['x'] * 100000] * 1000) | sum(start=[]) }}",
    "{{ lipsum(50, false, 3999999, 4000000) }}",
]


def _render(source: str) -> str:
    environment = TemplateSandbox(autoescape=True)
    return render_bounded(environment, environment.from_string(source), {})


def _peak_mb(source: str) -> tuple[BaseException | None, float]:
    """Render a template; what it raised and the peak of Python's memory meanwhile, in MB."""
    tracemalloc.start()
    try:
        _render(source)
    except Exception as exc:  # noqa: BLE001 - the caller asserts which
        return exc, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return None, 0.0


@pytest.mark.parametrize("source", MULTIPLIERS)
def test_a_multiplying_call_is_refused_before_it_makes_its_value(source: str) -> None:
    started = time.monotonic()
    raised, peak = _peak_mb(source)
    assert isinstance(raised, TemplateLimit), raised
    assert "would make a text of more than 5,000,000 characters" in str(raised)
    assert peak < PEAK_MB and time.monotonic() - started < 10


BLOCKS = [  # each wrote 120,000,000 characters into a macro's or a block's buffer before a value was checked
    "{% macro m() %}{% for i in range(30) %}{{ big }}{% endfor %}{% endmacro %}{{ m() | length }}",
    "{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{% for i in range(30) %}{{ big }}{% endfor %}"
    "{% endcall %}",
    "{% set x %}{% for i in range(30) %}{{ big }}{% endfor %}{% endset %}{{ x | length }}",
    "{% filter length %}{% for i in range(30) %}{{ big }}{% endfor %}{% endfilter %}",
    "{% if false %}{% block b %}{% for i in range(30) %}{{ big }}{% endfor %}{% endblock %}{% endif %}"
    "{{ self.b() | length }}",
]


@pytest.mark.parametrize("source", BLOCKS)
def test_what_a_macro_or_block_writes_is_bounded_as_it_is_written(source: str) -> None:
    raised, peak = _peak_mb("{% set big = 'x' * 4000000 %}" + source)
    assert isinstance(raised, TemplateLimit) and "writes more than 5,000,000 characters" in str(raised), raised
    assert peak < PEAK_MB


def test_the_same_calls_at_a_designer_s_size_still_work() -> None:
    out = _render("{{ ('a\\nb' | indent(2)) }}|{{ 'a-b'.replace('-', '+') }}|{{ '{0}{0}'.format('x') }}|"
                  "{{ '{a}'.format_map({'a': 1}) }}|{{ '%(a)s%(a)s' % {'a': 'y'} }}|{{ '%s=%d' % ('n', 3) }}|"
                  "{{ '%s' | format('f') }}|{{ [1, 'b'] | join(',') }}|{{ 'a\\tb'.expandtabs(2) }}|"
                  "{{ 'ab cd' | wordwrap(2) }}|{{ [1] | string }}|{{ {'k': 1} | tojson }}|"
                  "{{ 'ab'.translate({97: 'z'}) }}|{{ [[1], [2]] | sum(start=[]) }}|"
                  "{{ lipsum(1, false, 3, 4) | wordcount }}")
    assert out.split("|") == ["a\n  b", "a+b", "xx", "1", "yy", "n=3", "f", "1,b", "a b", "ab\ncd", "[1]",
                              '{"k": 1}', "zb", "[1, 2]", "3"]


def test_one_slow_call_after_another_cannot_pass_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lipsum() here takes ~0.1 s and the loop a few steps a turn: a deadline looked at every 4,096 steps
    was never looked at (the render ran on, for minutes with more turns)."""
    monkeypatch.setattr(sandbox, "MAX_SECONDS", 0.5)
    started = time.monotonic()
    with pytest.raises(TemplateLimit, match="longer than 0.5 s"):
        _render("{% for i in range(60) %}{{ lipsum(1, false, 30000, 30001) | length }}{% endfor %}")
    assert time.monotonic() - started < 3


# The property: any chain of the operations that multiply sizes, with any sizes, either makes a value within the
# 5,000,000-character bound or is refused, and never costs the memory of the value it would make.
TEXT = "('x\\n\\t' * {n})"
STEPS = [
    "({s}).replace('x', 'y' * {k})",
    "({s}) | replace('\\n', 'y' * {k})",
    "({s}) | indent({k})",
    "({s}) | indent('y' * {k})",
    "({s}).center({k})",
    "({s}) | join('y' * {k})",
    "('{{0}}' * {k}).format({s})",
    "('%(a)s' * {k}) % {{'a': {s}}}",
    "([{s}] * {k}) | join",
    "([{s}] * {k}) | string",
    "([{s}] * {k}) | tojson",
    "({s}).expandtabs({k})",
    "({s}) | wordwrap(3, wrapstring='y' * {k})",
    "({s}) * {k}",
    "({s}) ~ ({s})",
]
SIZES = st.one_of(st.integers(0, 20), st.integers(0, 3000), st.integers(0, 10**6))


@settings(max_examples=int(os.environ.get("PROPS", 50)), deadline=None)
@given(n=SIZES, chain=st.lists(st.tuples(st.sampled_from(STEPS), SIZES), min_size=1, max_size=3))
def test_any_chain_of_multiplying_operations_stays_bounded_or_is_refused(n: int, chain: list) -> None:
    expression = TEXT.format(n=n)
    for step, k in chain:
        expression = step.format(s=expression, k=k)
    tracemalloc.start()
    try:
        length = int(_render("{{ (" + expression + ") | length }}"))
    except TemplateLimit:
        length = 0
    finally:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    assert length <= MAX_SIZE
    assert peak < PEAK_ALLOWED_MB, expression


def test_arguments_of_subclassed_types_are_sized_as_their_base_types() -> None:
    """A call's arguments are looked at by their exact type first (int, str, list...): a subclass of one (a Markup
    text, an int enum) is sized as its base type all the same, and a bool is no number."""
    import enum

    from markupsafe import Markup

    class Big(enum.IntEnum):
        HUGE = MAX_SIZE + 1

    with pytest.raises(TemplateLimit, match="would make a text of more than"):
        sandbox._check_arguments((Markup("x" * 4_000_000), range(100_000)), {})
    with pytest.raises(TemplateLimit, match="number argument larger"):
        sandbox._check_arguments(("x",), {"width": Big.HUGE})
    with pytest.raises(TemplateLimit, match="number argument larger"):
        sandbox._check_arguments((-MAX_SIZE - 1,), {})
    sandbox._check_arguments((True, "x" * 1000, ["y"] * 1000), {"z": 1.5, "w": None})  # within the bounds

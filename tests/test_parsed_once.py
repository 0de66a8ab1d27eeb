"""A template's text is parsed once a process: the tree validation's scan parsed is the one compiled to render the
cards (`TemplateSandbox.parse` keeps it for `_parse`), and it compiles to the same code as a tree parsed anew."""
from __future__ import annotations

import collections
from pathlib import Path

import jinja2.parser
import pytest

from cardgen.build.build import BuildOptions, build_game
from cardgen.svg import sandbox
from cardgen.svg.sandbox import TemplateSandbox

SOURCE = ('{% set n = 2 + 3 %}<svg>{% for i in range(n) %}<rect x="{{ i * 10 }}"/>{% endfor %}'
          '{{ "a" ~ name | upper }}{% if n > 4 %}big{% endif %}</svg>')


def _parses(monkeypatch: pytest.MonkeyPatch) -> collections.Counter:
    """How many times Jinja parses each template name from now on."""
    parsed: collections.Counter = collections.Counter()
    parse = jinja2.parser.Parser.parse
    monkeypatch.setattr(jinja2.parser.Parser, "parse", lambda self: parsed.update([self.name]) or parse(self))
    return parsed


def test_a_first_build_parses_each_template_once(tiny_game: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With empty caches (no kept scans, no compiled templates), the face and back are each parsed once: by
    validation's scan, whose trees the renders compile."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(sandbox, "_PARSED", {})
    parsed = _parses(monkeypatch)
    build_game(tiny_game, "tiny", BuildOptions(out_root=tmp_path / "out", jobs=1), None, ["gallery"])
    assert (tmp_path / "out" / "tiny" / "index.html").is_file()
    named = {name: count for name, count in parsed.items() if name is not None}
    assert named == {"face.svg": 1, "back.svg": 1}, parsed


def test_a_kept_tree_compiles_as_a_new_parse_and_is_taken_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree one environment parsed compiles in another alike to the code of the text parsed anew, once: the next
    compiling parses again; and an environment of another syntax does not take it."""
    monkeypatch.setattr(sandbox, "_PARSED", {})
    fresh = TemplateSandbox().compile(SOURCE, "t.svg", "/t.svg", raw=True)
    parsed = _parses(monkeypatch)
    TemplateSandbox().parse(SOURCE, "t.svg", "/t.svg")
    other = TemplateSandbox(trim_blocks=True)
    other.compile(SOURCE, "t.svg", "/t.svg", raw=True)
    assert parsed["t.svg"] == 2  # the other syntax parsed its own
    compiling = TemplateSandbox()
    assert compiling.compile(SOURCE, "t.svg", "/t.svg", raw=True) == fresh
    assert parsed["t.svg"] == 2  # the kept tree, not parsed again
    assert compiling.compile(SOURCE, "t.svg", "/t.svg", raw=True) == fresh
    assert parsed["t.svg"] == 3
    assert compiling.from_string(SOURCE).render(name="x") == '<svg><rect x="0"/><rect x="10"/><rect x="20"/>' \
        '<rect x="30"/><rect x="40"/>aXbig</svg>'

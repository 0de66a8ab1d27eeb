"""Hostile templates in a downloaded game: validating it runs no Python, reads no file and does not hang."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.hostile_example import GAME, run

ESCAPES = [  # each would run a command or read a file without the sandbox
    "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}",
    "{{ joiner.__init__.__globals__.__builtins__.open('PWNED', 'w').write('x') }}",
    "{{ lipsum.__globals__['os'].system('touch PWNED') }}",
    "{{ cycler.__init__.__globals__.__builtins__.open('/etc/passwd').read() }}",  # reads any file
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% set d = {} %}{{ d.update({'x': 1}) }}",  # the immutable sandbox: data cannot be changed
]
BOMBS = [  # each would hang or take gigabytes without the sandbox's bounds
    ("{% for i in range(10**12) %}{% endfor %}", "larger than 5,000,000"),
    ("{% for i in range(200000) %}{% endfor %}", "Range too big"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "steps"),
    ("{{ 'a' * 10**10 }}", "repeating a text"),
    ("{{ 9 ** (9 ** 9) }}", "too large a number"),  # Jinja's ** is left-associative: 9**9**9 is small
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
     "makes a value of"),
    ("{{ 'x' | center(10**9) }}", "number argument"),
    ("{{ range(100000) | join('x' * 4000000) }}", "filter would make"),
    ("{{ '%1000000000s' % 'a' }}", "format width"),
    ("{{ '{:>1000000000}'.format('a') }}", "format width"),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    ("{% for i in range(99999) %}{{ 'y' * 99 }}{% endfor %}", "writes more than"),
]


def _with_back(root: Path, snippet: str, name: str = "back.svg") -> Path:
    back = root / "templates" / GAME / name
    lines = back.read_text().splitlines(keepends=True)
    back.write_text("".join([*lines[:2], snippet + "\n", *lines[2:]]))
    return back


@pytest.mark.parametrize("snippet", ESCAPES)
def test_template_cannot_reach_python(fresh_example: Path, snippet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_back(fresh_example, snippet)
    result = run(fresh_example, "validate", GAME, monkeypatch=monkeypatch)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not (fresh_example / "PWNED").exists()
    lines = [line for line in result.output.splitlines() if f"templates/{GAME}/back.svg:3" in line]
    assert lines and all("error:" in line for line in lines), result.output


@pytest.mark.parametrize("snippet, words", BOMBS)
def test_template_bombs_are_findings_in_seconds(fresh_example: Path, snippet: str, words: str) -> None:
    _with_back(fresh_example, snippet)
    started = time.monotonic()
    result = run(fresh_example, "validate", GAME)
    assert time.monotonic() - started < 30
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith(f"templates/{GAME}/back.svg")]
    assert lines and words in lines[0] and "error:" in lines[0], result.output
    assert ":3:" in lines[0] or words == "writes more than"  # the line is known unless the total is too long


NESTED = [  # Jinja's parser recursed past Python's limit on the first; Python refused Jinja's code for the second
    ("back.svg", "{{ " + "(" * 70 + "1" + ")" * 70 + " }}", "too many brackets or blocks inside each other"),
    ("wound.svg", "{% for i in [1] %}" * 25 + "{% endfor %}" * 25, "more than 16 blocks"),
    ("back.svg", "{{ 1" + " + 1" * 500 + " }}", "more than 100 operations"),
]


@pytest.mark.parametrize("name, snippet, words", NESTED)
def test_deep_nesting_is_a_syntax_error_at_the_template_s_line(fresh_example: Path, name: str, snippet: str,
                                                               words: str) -> None:
    _with_back(fresh_example, snippet, name)
    result = run(fresh_example, "validate", GAME)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if "error:" in line]
    assert errors and all(line.startswith(f"templates/{GAME}/{name}:3: error: template syntax error: the template "
                                          f"nests {words}") for line in errors), result.output


def test_designers_loops_and_filters_still_work(fresh_example: Path) -> None:
    _with_back(fresh_example, "{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}"
                              "{% endfor %}<!-- {{ ns.n }} {{ card is defined }} {{ 'ab' * 3 }} {{ 2 ** 10 }} "
                              "{{ ['a', 'b'] | join(', ') }} {{ '%05.1f' % 3.14159 }} {{ '{:>4}'.format(7) }} "
                              "{{ game.title | upper | replace('S', '$') }} -->")
    result = run(fresh_example, "validate", GAME)
    assert result.exit_code == 0, result.output


@pytest.fixture
def compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The templates Jinja compiles (by name), with the user's cache folder of the test's own."""
    from cardgen.svg.templates import SVGEnvironment

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    names: list[str] = []
    compile_template = SVGEnvironment.compile
    monkeypatch.setattr(SVGEnvironment, "compile", lambda self, source, name=None, *rest, **named:
                        names.append(name) or compile_template(self, source, name, *rest, **named))
    return names


@pytest.mark.parametrize("snippet, words", [(ESCAPES[0], "error:"), (BOMBS[3][0], BOMBS[3][1])])
def test_templates_compiled_by_an_earlier_run_keep_the_sandbox(fresh_example: Path, compiled: list[str],
                                                               snippet: str, words: str) -> None:
    back = _with_back(fresh_example, snippet)
    first = run(fresh_example, "validate", GAME)
    assert "back.svg" in compiled
    compiled.clear()
    again = run(fresh_example, "validate", GAME)
    assert compiled == []  # every template came compiled from the user's cache
    assert again.output == first.output and again.exit_code == 1
    assert words in again.output and "back.svg:3" in again.output and not (fresh_example / "PWNED").exists()
    back.write_text(back.read_text().replace(snippet, snippet + " "))  # an edited template is compiled again
    run(fresh_example, "validate", GAME)
    assert "back.svg" in compiled


def test_templates_compiled_by_an_earlier_run_keep_autoescape(fresh_example: Path, compiled: list[str]) -> None:
    from cardgen.load.manifest import load_game
    from cardgen.svg.templates import make_environment

    (fresh_example / "templates" / "said.svg").write_text("<text>{{ said }}</text>")
    for _ in range(2):  # compiled, then kept
        template = make_environment(load_game(fresh_example, GAME)).get_template("said.svg")
        assert template.render(said="A & B < C") == "<text>A &amp; B &lt; C</text>"
    assert compiled == ["said.svg"]


def test_templates_compiled_ahead_are_those_a_build_takes(fresh_example: Path, compiled: list[str]) -> None:
    """A first build's worker compiles the game's own templates ahead into the user's cache (`compile_ahead`): the
    build then takes every one from there, compiled with the same environment (autoescape here); one that does not
    compile is left to the build, which says why."""
    from cardgen.load.manifest import load_game
    from cardgen.svg.templates import compile_ahead, make_environment

    folder = fresh_example / "templates" / GAME
    (folder / "said.svg").write_text("<text>{{ said }}</text>")
    (folder / "broken.svg").write_text("{% if %}")
    compile_ahead(fresh_example, folder)
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.svg"))
    assert sorted(compiled) == names and len(names) > 3  # each once (the broken one tried)
    environment = make_environment(load_game(fresh_example, GAME))
    for name in names:
        if name != "broken.svg":
            environment.get_template(name)
    assert environment.get_template("said.svg").render(said="A & B") == "<text>A &amp; B</text>"
    assert sorted(compiled) == names  # nothing compiled again
    result = run(fresh_example, "validate", GAME)
    assert result.exit_code == 0, result.output  # (broken.svg is no card's)


def test_damaged_compiled_templates_are_compiled_again(fresh_example: Path, tmp_path: Path,
                                                       compiled: list[str]) -> None:
    from cardgen.load.manifest import load_game
    from cardgen.svg.templates import make_environment

    (fresh_example / "templates" / "said.svg").write_text("<text>{{ said }}</text>")
    make_environment(load_game(fresh_example, GAME)).get_template("said.svg")
    [entry] = (tmp_path / "home" / "cardgen" / "templates-compiled").rglob("*.bc")
    entry.write_bytes(entry.read_bytes().replace(b"said", b"sa1d"))  # same size: the seal's digest tells
    template = make_environment(load_game(fresh_example, GAME)).get_template("said.svg")
    assert template.render(said="x") == "<text>x</text>" and compiled == ["said.svg", "said.svg"]


def test_a_change_of_cardgen_s_code_compiles_every_template_again(fresh_example: Path, compiled: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core import bundled
    from cardgen.load.manifest import load_game
    from cardgen.svg.templates import make_environment

    (fresh_example / "templates" / "said.svg").write_text("<text>{{ said }}</text>")
    make_environment(load_game(fresh_example, GAME)).get_template("said.svg")
    monkeypatch.setattr(bundled, "code_digest", lambda *modules: "0" * 32)  # the sandbox (say) edited: a new digest
    make_environment(load_game(fresh_example, GAME)).get_template("said.svg")
    assert compiled == ["said.svg", "said.svg"]

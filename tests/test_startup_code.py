"""The code Python compiles from text at start-up, compiled once and kept in a table (cardgen/core/startup_code.py):
the code a table keeps is what runs (a dataclass's methods, a forward reference), a table that is damaged or another
Python's is not used, and the table `write_table` makes leaves nothing to compile on the way to a build."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, Iterator

import pytest

from cardgen.core import startup_code
from cardgen.core.startup_code import TABLE, install, read_table, save_table


@pytest.fixture(autouse=True)
def table_restored() -> Iterator[None]:
    """Each test installs tables of its own: the process's own is put back after."""
    yield
    install(TABLE)


def card_class() -> Any:
    """A frozen dataclass with real types (not the strings of a module with future annotations)."""
    return dataclasses.make_dataclass("Card", [("name", str), ("cost", int, dataclasses.field(default=1))],
                                      frozen=True)


def texts_of(make: Any) -> dict[tuple[str, str], Any]:
    """The texts compiled to make something, by mode and text, with their code."""
    startup_code._SEEN.clear()
    make()
    return {(mode, text): compile(text, "<string>", mode, dont_inherit=True) for mode, text in startup_code._SEEN}


def test_a_tables_code_is_what_runs_for_its_text(tmp_path: Path) -> None:
    install(tmp_path / "none.bin")
    codes = texts_of(card_class)
    repr_text = next(key for key in codes if "def __repr__" in key[1])
    codes[repr_text] = compile("def __create_fn__(**kw):\n def __repr__(self): return 'kept'\n return __repr__",
                               "<string>", "exec")
    save_table(tmp_path / "table.bin", codes)
    install(tmp_path / "table.bin")
    card = card_class()("Scout")
    assert repr(card) == "kept"
    assert all(kept is not None for kept in startup_code._SEEN.values())


@pytest.mark.parametrize("kept", [True, False])
def test_methods_are_those_python_makes(tmp_path: Path, kept: bool) -> None:
    install(tmp_path / "none.bin")
    save_table(tmp_path / "table.bin", texts_of(card_class))
    install(tmp_path / ("table.bin" if kept else "none.bin"))
    card_type = card_class()
    assert all((code is not None) is kept for code in startup_code._SEEN.values())
    card = card_type("Scout")
    assert (card.cost, repr(card)) == (1, "Card(name='Scout', cost=1)")
    assert card == card_type("Scout", 1) and card != card_type("Scout", 2)
    assert hash(card) == hash(card_type("Scout"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        card.cost = 2  # type: ignore[misc]
    # compiled as `dataclasses` compiles them: not with this module's (or startup_code's) future annotations
    assert card_type.__init__.__annotations__ == {"name": str, "cost": int, "return": None}


def damaged(path: Path, at: int, byte: bytes) -> None:
    data = bytearray(path.read_bytes())
    data[at:at + 1] = byte
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["content", "magic number"])
def test_a_damaged_or_foreign_table_is_not_used(tmp_path: Path, where: str) -> None:
    install(tmp_path / "none.bin")
    table = tmp_path / "table.bin"
    save_table(table, texts_of(card_class))
    assert read_table(table) is not None
    head = len(startup_code._head())
    at = table.stat().st_size - 40 if where == "content" else head - 2  # a byte of the code / of the magic number
    damaged(table, at, bytes([table.read_bytes()[at] ^ 0x5A]))
    assert read_table(table) is None
    install(table)
    startup_code._SEEN.clear()
    assert card_class()("Scout").cost == 1  # compiled as without a table
    assert set(startup_code._SEEN.values()) == {None}


def test_the_table_written_leaves_nothing_to_compile_on_a_builds_way(tmp_path: Path) -> None:
    table = tmp_path / "table.bin"
    run = [sys.executable, "-c"]
    start = "from pathlib import Path; from cardgen.core import startup_code as d; "
    subprocess.run([*run, f"{start}d.write_table(Path({str(table)!r}))"], check=True, cwd=tmp_path)
    build = (f"{start}"
             f"d.install(Path({str(table)!r})); d._SEEN.clear(); "
             "import cardgen.commands.cli, cardgen.build.build, cardgen.outputs.pdf, cardgen.outputs.tts.stage; "
             "print(len(d._SEEN), sum(kept is None for kept in d._SEEN.values()))")
    seen, compiled = map(int, subprocess.run([*run, build], check=True, cwd=tmp_path, capture_output=True,
                                             text=True).stdout.split())
    assert seen > 300 and compiled == 0


def test_a_forward_reference_takes_the_tables_code(tmp_path: Path) -> None:
    def hinted(x: list[int]) -> None:  # (a string: this module has future annotations)
        """A function with a forward reference."""

    install(tmp_path / "none.bin")
    codes = texts_of(lambda: typing.get_type_hints(hinted))
    assert list(codes) == [("eval", "list[int]"), ("eval", "None")]
    assert typing.get_type_hints(hinted)["x"] == list[int]  # compiled now
    codes[("eval", "list[int]")] = compile("dict[str, int]", "<string>", "eval")
    save_table(tmp_path / "table.bin", codes)
    install(tmp_path / "table.bin")
    assert typing.get_type_hints(hinted)["x"] == dict[str, int]  # the table's

"""The code Python compiles from text while cardgen's modules are imported, compiled once and kept beside cardgen's
bytecode: dataclasses' methods and typing's forward references.

Python 3.11's `dataclasses` writes each class's `__init__`, `__repr__`, `__eq__` (and for a frozen one `__hash__`,
`__setattr__`, `__delattr__`) as source text and compiles each with its own `exec`: ~65 us a method, 521 of them as
a build imports cardgen, pydantic and annotated_types, ~34 ms of every command's start. `typing` compiles each
forward reference (an annotation written as a string: 1,062 of them, 305 different, mostly pydantic-core's) with
`compile`, ~8 ms more. Both on the way to a cold build's first card (measured: thread CPU of the wrapped calls).

Compiled code for the same text is the same code, so the table `TABLE` keeps it by its text (and mode), marshalled
as `.pyc` files keep a module's. `install` gives `dataclasses` an `exec` and `typing` a `compile` of their own (a
module's global comes before the builtin) that take the kept code for a text the table holds (~1.5 us; the table
is read at the first text) and compile any other as the builtin would. Measured: a cold build's process reached its
render workers' fork ~30 ms sooner.

The table lives in the package's `__pycache__` (it is bytecode of the installed Python, named with its cache tag,
and holds its magic number): `write_table` (tools/startup_code.py) writes it from every text seen while importing
all of cardgen; `make install` and the benchmarks run it, as they compile cardgen's modules. A text it lacks (a
dataclass edited since) is compiled as before; a table of another Python, or whose digest does not match its
content, is not used at all. It is never read from anywhere a build writes to.
"""
from __future__ import annotations

import dataclasses
import marshal
import sys
import typing
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parent.parent / "__pycache__" / f"startup-code.{sys.implementation.cache_tag}.bin"
_DIGEST = 32  # bytes of SHA-256 after the head
_SOURCE = "<string>"  # the file name both compile with (exec's own for a text)

Key = tuple[str, str]  # a text's mode ("exec", "eval") and the text
# Every text compiled in this process since `install`, with its code when the table held it.
_SEEN: dict[Key, bytes | None] = {}


def _compiled(key: Key) -> Any:
    """A text compiled as `dataclasses` and `typing` compile it: with no future statement inherited (from this
    module, every dataclass method's annotations would be strings)."""
    mode, text = key
    return compile(text, _SOURCE, mode, dont_inherit=True)


def _head() -> bytes:
    """What a table begins with: its kind and the magic number of this Python's bytecode."""
    import importlib.util

    return b"cardgen start-up code\n" + importlib.util.MAGIC_NUMBER


class _Table:
    """The table at a path, read when the first text is compiled (a command that makes no dataclass, such as
    `cardgen --version`, never reads it: ~1.8 ms)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.codes: dict[Key, bytes] | None = None

    def code(self, key: Key) -> Any:
        """The code of a text: the table's (read from a table whose digest matched), or compiled now."""
        if self.codes is None:
            self.codes = read_table(self.path) or {}
        kept = self.codes.get(key)
        _SEEN[key] = kept
        return _compiled(key) if kept is None else marshal.loads(kept)  # noqa: S302  cardgen's own, as its .pyc


def _exec_with(table: _Table) -> Any:
    """An `exec` for `dataclasses` that runs the code `table` keeps for a text, and compiles any other."""
    def exec_kept(source: Any, globals: Any = None, locals: Any = None) -> None:  # noqa: A002  exec's own names
        exec(table.code(("exec", source)) if isinstance(source, str) else source, globals, locals)  # noqa: S102

    return exec_kept


def _compile_with(table: _Table) -> Any:
    """A `compile` for `typing` (its forward references: `compile(text, "<string>", "eval")`) that takes the code
    `table` keeps for a text; any other call is the builtin's, as `typing` would make it (with no future statement
    inherited: typing has none)."""
    def compile_kept(source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                     optimize: int = -1) -> Any:
        if isinstance(source, str) and filename == _SOURCE and mode == "eval" and not flags and optimize == -1:
            return table.code((mode, source))
        return compile(source, filename, mode, flags, True, optimize)

    return compile_kept


def read_table(path: Path = TABLE) -> dict[Key, bytes] | None:
    """The table at `path`: None when there is none, or it is another Python's, or its digest does not match."""
    import hashlib

    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = _head()
    body = data[len(head) + _DIGEST:]
    if not data.startswith(head) or data[len(head):len(head) + _DIGEST] != hashlib.sha256(body).digest():
        return None
    try:
        table = marshal.loads(body)  # noqa: S302  (its digest matched: the bytes written)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(table, dict) or not all(isinstance(key, tuple) and isinstance(code, bytes)
                                              for key, code in table.items()):
        return None
    return table


def install(path: Path = TABLE) -> None:
    """Give `dataclasses` and `typing` the `exec` and `compile` that take their code from the table at `path`
    (without one, or none usable, that compile every text), noting each text for `write_table`."""
    table = _Table(path)
    dataclasses.exec = _exec_with(table)  # type: ignore[attr-defined]
    typing.compile = _compile_with(table)  # type: ignore[attr-defined]


def write_table(path: Path = TABLE) -> int:
    """Import every module of cardgen, so that every dataclass and forward reference it makes is made, and write
    the table of the texts seen in this process; the number of texts."""
    import importlib
    import pkgutil

    import cardgen  # (which installed the `exec` and `compile` that note the texts)

    for module in pkgutil.walk_packages(cardgen.__path__, "cardgen."):
        if not module.name.endswith(".__main__"):  # (which runs the command line)
            importlib.import_module(module.name)
    save_table(path, {key: _compiled(key) for key in _SEEN})
    return len(_SEEN)


def save_table(path: Path, codes: dict[Key, Any]) -> None:
    """Write a table of these texts' code (atomically: a build starting meanwhile reads the old table or the new)."""
    import hashlib

    from cardgen.core.storage import write_atomic

    body = marshal.dumps({key: marshal.dumps(codes[key]) for key in sorted(codes)})
    write_atomic(path, lambda temp: temp.write_bytes(_head() + hashlib.sha256(body).digest() + body))

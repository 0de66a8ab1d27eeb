"""The methods that `dataclasses` writes for each dataclass, compiled once and kept beside cardgen's bytecode.

Python 3.11's `dataclasses` writes each class's `__init__`, `__repr__`, `__eq__` (and for a frozen one
`__hash__`, `__setattr__`, `__delattr__`) as source text and compiles each with its own `exec`: ~65 us a method,
521 of them as a build imports cardgen, pydantic and annotated_types, ~34 ms of every command's start, on the way
to a cold build's first card (measured: thread CPU, `dataclasses._create_fn` wrapped). Compiled code for the same
text is the same code, so the table `TABLE` keeps it by its text, marshalled as `.pyc` files keep a module's:
`install` gives `dataclasses` an `exec` of its own (a module's global comes before the builtin) that runs the kept
code for a text it holds (~1.5 us) and compiles any other text as `exec` would: measured, a cold build's process
reached its render workers' fork ~30 ms sooner.

The table lives in the package's `__pycache__` (it is bytecode of the installed Python, named with its cache tag,
and holds its magic number): `write_table` (tools/dataclass_code.py) writes it from every text seen while
importing all of cardgen; `make install` and the benchmarks run it, as they compile cardgen's modules. A text
it lacks (a dataclass edited since) is compiled as before; a table of another Python, or whose digest does not match
its content, is not used at all. It is never read from anywhere a build writes to.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import marshal
import sys
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parent.parent / "__pycache__" / f"dataclass-code.{sys.implementation.cache_tag}.bin"
_HEAD = b"cardgen dataclass code\n" + importlib.util.MAGIC_NUMBER
_DIGEST = 32  # bytes of SHA-256 after the head

# Every text `dataclasses` compiled in this process since `install`, with its code when the table held it.
_SEEN: dict[str, bytes | None] = {}


def _compiled(text: str) -> Any:
    """`text` compiled as `exec(text)` in `dataclasses` compiles it: no future statement of this module inherited
    (with `annotations`, every method's annotations would be strings)."""
    return compile(text, "<string>", "exec", dont_inherit=True)


def _exec_with(table: dict[str, bytes]) -> Any:
    """An `exec` for `dataclasses` that runs the code `table` keeps for a source text, and compiles any other."""
    def exec_kept(source: Any, globals: Any = None, locals: Any = None) -> None:  # noqa: A002  exec's own names
        if isinstance(source, str):
            kept = table.get(source)
            _SEEN[source] = kept
            source = _code(kept) if kept is not None else _compiled(source)
        exec(source, globals, locals)  # noqa: S102  the text dataclasses made, or its code compiled at install

    return exec_kept


def _code(kept: bytes) -> Any:
    """A kept text's code (read from a table whose digest matched)."""
    return marshal.loads(kept)  # noqa: S302  cardgen's own bytecode, as a .pyc file beside it


def read_table(path: Path = TABLE) -> dict[str, bytes] | None:
    """The table at `path`: None when there is none, or it is another Python's, or its digest does not match."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    body = data[len(_HEAD) + _DIGEST:]
    if not data.startswith(_HEAD) or data[len(_HEAD):len(_HEAD) + _DIGEST] != hashlib.sha256(body).digest():
        return None
    try:
        table = marshal.loads(body)  # noqa: S302  (its digest matched: the bytes written)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, bytes) for k, v in table.items()):
        return None
    return table


def install(path: Path = TABLE) -> bool:
    """Give `dataclasses` the `exec` that runs the code of the table at `path` (with none, or none usable, an
    `exec` that compiles every text, noting it for `write_table`); whether the table was usable."""
    table = read_table(path)
    dataclasses.exec = _exec_with(table or {})  # type: ignore[attr-defined]
    return table is not None


def write_table(path: Path = TABLE) -> int:
    """Import every module of cardgen, so that every dataclass it makes is made, and write the table of the texts
    seen in this process; the number of texts."""
    import importlib
    import pkgutil

    import cardgen  # (which installed the `exec` that notes the texts)

    for module in pkgutil.walk_packages(cardgen.__path__, "cardgen."):
        if not module.name.endswith(".__main__"):  # (which runs the command line)
            importlib.import_module(module.name)
    save_table(path, {text: _compiled(text) for text in _SEEN})
    return len(_SEEN)


def save_table(path: Path, codes: dict[str, Any]) -> None:
    """Write a table of these texts' code (atomically: a build starting meanwhile reads the old table or the new)."""
    from cardgen.core.storage import write_atomic

    body = marshal.dumps({text: marshal.dumps(codes[text]) for text in sorted(codes)})
    write_atomic(path, lambda temp: temp.write_bytes(_HEAD + hashlib.sha256(body).digest() + body))

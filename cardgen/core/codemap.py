"""cardgen's own code as a map, read from its files without importing them: which of cardgen's modules each module
imports and which folders of `assets/` it names, with each file's content hash. From it `bundled.code_digest`
hashes the code that makes a cache's entries: the import closure of the modules that make them.

The imports are read as `tools/import_graph.py` reads them (it uses `imports_of`): every `import` and `from ...
import` of a cardgen module at any level, lazy and type-checking ones included, so a closure holds more than runs
rather than less. A module named as text and imported by name (an output stage from the registry, a data source's
reader) is no import: its own caches are salted with its own closure.

The map is kept in the user's cache folder by each file's path, size and modification time, so a process reads
one small file instead of parsing ~130 modules: only the files edited since are read again, and a file missing
from it is read when a closure first reaches it (a cold build no longer parses the modules it does not run).
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import signal
import threading
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from cardgen.core import bundled

if TYPE_CHECKING:
    from cardgen.core.storage import Cache

INIT = "__init__"  # the module name of cardgen/__init__.py (`from cardgen import __version__`)
RACY_NS = 2_000_000_000  # a file changed this recently is not kept: an edit in the same clock tick keeps its time


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of a syntax tree, at any depth (in functions, classes, branches, handlers): where imports
    are. Expressions are not entered: walking them all took most of reading the package."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo += [child for child in ast.iter_child_nodes(node)
                 if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))]


def imports_of(tree: ast.AST, package: Path) -> set[str]:
    """The cardgen modules a module's syntax tree imports (at any level, lazy imports included), named relative to
    the package (`outputs.pdf`; `__init__` for the package itself); `package` is the folder of cardgen's modules."""
    found = set()
    for node in _statements(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cardgen":
            base = node.module.removeprefix("cardgen").lstrip(".")
            for alias in node.names:
                candidate = f"{base}.{alias.name}" if base else alias.name
                path = os.path.join(package, *candidate.split("."))  # not pathlib's: ~4x the time, ~1,000 a build
                is_module = os.path.isfile(path + ".py") or os.path.isdir(path)
                found.add(candidate if is_module else base or INIT)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("cardgen").lstrip(".") or INIT for a in node.names
                      if a.name.split(".")[0] == "cardgen"}
    return found


def assets_named(tree: ast.AST, data: bytes) -> set[str]:
    """The folders of cardgen's `assets/` a module reads, as it names them: `ASSETS / "gallery"` (or
    `bundled.ASSETS / ...`), in its syntax tree; `data` is its source. Only the expressions of statements that span
    a line naming ASSETS are walked: walking all of a module's took most of reading it."""
    lines = [number for number, line in enumerate(data.split(b"\n"), 1) if b"ASSETS" in line]
    found = set()
    for statement in _statements(tree):
        start, end = getattr(statement, "lineno", None), getattr(statement, "end_lineno", None)
        if start is None or end is None or not any(start <= line <= end for line in lines):
            continue
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                continue  # walked as a statement of its own
            found |= {node.right.value for node in ast.walk(child)
                      if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_assets(node.left)
                      and isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)}
    return found


def _is_assets(node: ast.AST) -> bool:
    """Whether an expression names `bundled.ASSETS`."""
    return (isinstance(node, ast.Name) and node.id == "ASSETS") or \
        (isinstance(node, ast.Attribute) and node.attr == "ASSETS")


@dataclass(frozen=True)
class FileFacts:
    """What the map holds of one file of the package: its content hash and, for a module, what it imports and the
    asset folders it names."""

    digest: str
    imports: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()


# Where a statement importing cardgen modules begins: at a line's start, or after `;` or `:` (`if x: import ...`).
# `tests/test_code_digest.py` checks that this reading finds what the whole syntax tree holds, module by module.
_IMPORT = re.compile(rb"(?:^[ \t]*|[;:][ \t]*)(?:from[\s\\]+cardgen[\w.]*[\s\\]+import\b|import[\s\\]+cardgen\b)",
                     re.MULTILINE)
_START = re.compile(rb"(?:^[ \t]*|[;:][ \t]*)(?:from|import)\b", re.MULTILINE)  # where an `_IMPORT` may begin


def _imports_in(data: bytes) -> Iterator[re.Match[bytes]]:
    """Each `_IMPORT` in a module's source, looked for only from the start of the lines that name cardgen (with the
    lines a backslash joins to them): searching the whole text took ~0.3 ms a module, most of its reading."""
    at, searched, ended = data.find(b"cardgen"), -1, 0
    while at >= 0:
        line = data.rfind(b"\n", 0, at) + 1
        while line > 1 and data[line - 2:line] == b"\\\n":  # `from \` on the line before: the statement starts there
            line = data.rfind(b"\n", 0, line - 2) + 1
        line_end = data.find(b"\n", at)
        line_end = len(data) if line_end < 0 else line_end
        for start in _START.finditer(data, max(line, searched + 1), line_end):  # each line once
            match = _IMPORT.match(data, start.start())  # which may end on a later line
            if match and match.start() >= ended:
                ended = match.end()
                yield match
        searched = line_end
        at = data.find(b"cardgen", line_end)


def import_statements(data: bytes) -> ast.Module:
    """The statements of a module's source that import cardgen modules (at any level), parsed: each from where it
    begins to its end (its brackets closed, no backslash ending a line), not the whole module (parsing ~140
    modules took ~0.3 s of a process whose user cache was empty, each render worker's included). What does not
    parse so (`import` in a string after a colon) is read from the whole module."""
    statements = []
    for match in _imports_in(data):
        end = match.start()
        depth, more = 0, True
        while more and end < len(data):
            line_end = data.find(b"\n", end)
            line_end = len(data) if line_end < 0 else line_end
            code = data[end:line_end].split(b"#")[0]
            depth += code.count(b"(") - code.count(b")")
            more = depth > 0 or code.rstrip().endswith(b"\\")
            end = line_end + 1
        statements.append(data[match.start():end].lstrip(b" \t;:").decode("utf-8"))
    try:
        return ast.parse("\n".join(statements))
    except SyntaxError:
        return ast.parse(data)


def read_facts(path: Path) -> FileFacts:
    """A file's facts, read from its content now."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:32]
    if path.suffix != ".py":
        return FileFacts(digest)
    # walking every expression is slow: few name the assets, and only their whole tree is read
    tree = ast.parse(data, str(path)) if b"ASSETS" in data else import_statements(data)
    assets = assets_named(tree, data) if b"ASSETS" in data else set()
    return FileFacts(digest, tuple(sorted(imports_of(tree, bundled.PACKAGE))), tuple(sorted(assets)))


class CodeMap:
    """The facts of cardgen's package (`bundled.code_files`), by each file's name in an installed package
    (`outputs/pdf.py`, `assets/gallery/gallery.js`): those kept in the user's cache while the file's path, size and
    time are as kept, the others read when a closure first reaches them (a build reaches ~60% of the package), and
    kept in turn."""

    def __init__(self, stamps: dict[str, list], kept: dict[str, list], store: Cache | None, store_key: str) -> None:
        self.stamps = stamps  # name -> [path, size, modification time]
        self.kept = kept  # name -> the row kept in the user's cache (see `_row`)
        self.store, self.store_key = store, store_key
        self.known: dict[str, FileFacts] = {}
        self.renewed = False  # facts read that the kept copy lacks
        self.lock = threading.RLock()  # the output stages' threads key their caches too

    def facts(self, name: str) -> FileFacts:
        """One file's facts: known, kept, or read now."""
        with self.lock:
            return self._facts(name)

    def _facts(self, name: str) -> FileFacts:
        if name not in self.known:
            row = self.kept.get(name)
            if isinstance(row, list) and len(row) == 4 and row[0] == self.stamps[name]:
                self.known[name] = FileFacts(row[1], tuple(row[2]), tuple(row[3]))
            else:
                self.known[name], self.renewed = read_facts(Path(self.stamps[name][0])), True
        return self.known[name]

    @property
    def files(self) -> dict[str, FileFacts]:
        """The facts of every file of the package (all read now)."""
        found = {name: self.facts(name) for name in self.stamps}
        self.save()
        return found

    def closure(self, modules: Iterable[str]) -> list[str]:
        """The files that make up `modules` (`cardgen.outputs.pdf`): theirs and those of every cardgen module they
        import, at any depth, with the asset files each names; sorted."""
        todo = [m.removeprefix("cardgen").lstrip(".") or INIT for m in modules]
        seen: set[str] = set()
        names: set[str] = set()
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            name = self._file_of(module)
            names.add(name)
            facts = self.facts(name)
            todo += facts.imports
            names.update(f for asset in facts.assets for f in self.stamps if f.startswith(f"assets/{asset}/"))
        self.save()
        return sorted(names)

    def _file_of(self, module: str) -> str:
        """The file name of a module: `outputs/pdf.py`, or the `__init__.py` of a package."""
        path = module.replace(".", "/")
        for name in (f"{path}.py", f"{path}/__init__.py"):
            if name in self.stamps:
                return name
        raise KeyError(f"cardgen has no module {module}")

    def digest(self, names: Iterable[str]) -> str:
        """A hash of these files: their names and contents."""
        digest = hashlib.sha256()
        for name in names:
            digest.update(f"{name}:{self.facts(name).digest}\0".encode())
        return digest.hexdigest()[:32]

    def save(self) -> None:
        """Keep the facts read since the last save in the user's cache, with the kept ones still current (a file
        changed in the last RACY_NS is not kept: an edit in the same clock tick keeps its time)."""
        with self.lock:
            if self.store is not None and self.renewed:
                self._save(self.store)

    def _save(self, store: Cache) -> None:
        racy_after = time.time_ns() - RACY_NS
        rows = {name: row for name, row in self.kept.items() if name in self.stamps and row[0] == self.stamps[name]}
        rows.update({name: _row(self.stamps[name], facts) for name, facts in self.known.items()
                     if self.stamps[name][2] <= racy_after})
        store.put_json(self.store_key, rows)
        self.kept, self.renewed = rows, False


def _row(stamp: list, facts: FileFacts) -> list:
    """A file's facts as the user's cache keeps them: its stamp, digest, imports and asset folders."""
    return [stamp, facts.digest, list(facts.imports), list(facts.assets)]


@lru_cache(maxsize=1)
def code_map() -> CodeMap:
    """The map of cardgen's package as it is on disk now, its facts kept in the user's cache by each file's path,
    size and time (`bundled.code_stamp`). Once per process: one small file read, 2-6 ms with the stats. Reading
    a module costs ~2-3 ms (parsing it): each is read once after an install or upgrade, when a closure first
    reaches it (or all at once beside a first build: `read_aside`), or in every process when there is no user cache
    folder that can be written."""
    store, store_key = _kept_maps()
    kept = store.read_json(store_key) if store is not None else None
    stamps = {name: [path, size, mtime_ns] for name, path, size, mtime_ns in bundled.code_stamp()}
    return CodeMap(stamps, kept if isinstance(kept, dict) else {}, store, store_key)


def _kept_maps() -> tuple[Cache | None, str]:
    """The user's cache of code maps (None when there is none that can be written) and the key of this package's."""
    from cardgen.core.storage import user_store

    here = Path(__file__).stat()  # a new way of reading is a new map
    key = hashlib.sha256(repr((str(bundled.PACKAGE), here.st_size, here.st_mtime_ns)).encode()).hexdigest()[:32]
    return user_store("code-map", ".json"), key


@contextmanager
def read_aside() -> Iterator[None]:
    """Within the block, when no map of this package is kept in the user's cache (a first run, or the first after an
    upgrade), read the whole map and the bundled files' digest (`bundled.bundle_digest`) in a process forked for it,
    and keep them there, while this one goes on: a build imports its pipeline meanwhile (~0.15 s), and its cache
    keys, from the first (the validated manifest's, on loading the game), then find every module's facts kept
    instead of reading ~110 modules (~40 ms of CPU) on its way to the first card. Leaving the block waits for that
    process (done long before).

    Nothing is forked when the map is kept, with no user cache folder, another thread running (forking then is not
    safe), or no `fork`. A reader that fails keeps nothing: the build reads what it needs itself, as without one."""
    store, key = _kept_maps()
    try:
        reader = None if store is None or store.has(key) or threading.active_count() > 1 else os.fork()
    except (AttributeError, OSError):  # no fork here, or no process to be had: the build reads the map itself
        reader = None
    if reader is None:
        yield
        return
    if reader == 0:  # the reader: it exits here, whatever happens
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle
            _ = code_map().files  # every file's facts, read and kept
            bundled.bundle_digest()
        finally:
            os._exit(0)
    try:
        yield
    finally:
        with suppress(ChildProcessError):  # waited for already (by a handler of this process's children)
            os.waitpid(reader, 0)

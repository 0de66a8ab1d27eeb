"""cardgen's own code as a map, read from its files without importing them: which of cardgen's modules each module
imports and which folders of `assets/` it names, with each file's content hash. From it `bundled.code_digest`
hashes the code that makes a cache's entries: the import closure of the modules that make them.

The imports are read as `tools/import_graph.py` reads them (it uses `imports_of`): every `import` and `from ...
import` of a cardgen module at any level, lazy and type-checking ones included, so a closure holds more than runs
rather than less. A module named as text and imported by name (an output stage from the registry, a data source's
reader) is no import: its own caches are salted with its own closure.

The map is kept in the user's cache folder by each file's path, size and modification time, so a process reads
one small file instead of parsing ~130 modules: only the files edited since are read again.
"""
from __future__ import annotations

import ast
import hashlib
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from cardgen.core import bundled

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
                is_module = (package / (candidate.replace(".", "/") + ".py")).is_file() or \
                    (package / candidate.replace(".", "/")).is_dir()
                found.add(candidate if is_module else base or INIT)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("cardgen").lstrip(".") or INIT for a in node.names
                      if a.name.split(".")[0] == "cardgen"}
    return found


def assets_named(tree: ast.AST) -> set[str]:
    """The folders of cardgen's `assets/` a module reads, as it names them: `ASSETS / "gallery"` (or
    `bundled.ASSETS / ...`)."""
    return {node.right.value for node in ast.walk(tree)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_assets(node.left)
            and isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)}


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


def read_facts(path: Path) -> FileFacts:
    """A file's facts, read from its content now."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:32]
    if path.suffix != ".py":
        return FileFacts(digest)
    tree = ast.parse(data, str(path))
    assets = assets_named(tree) if b"ASSETS" in data else set()  # walking every expression is slow: few name it
    return FileFacts(digest, tuple(sorted(imports_of(tree, bundled.PACKAGE))), tuple(sorted(assets)))


class CodeMap:
    """The facts of every file of cardgen's package (`bundled.code_files`), by its name in an installed package
    (`outputs/pdf.py`, `assets/gallery/gallery.js`)."""

    def __init__(self, files: dict[str, FileFacts]) -> None:
        self.files = files

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
            facts = self.files[name]
            todo += facts.imports
            names.update(f for asset in facts.assets for f in self.files if f.startswith(f"assets/{asset}/"))
        return sorted(names)

    def _file_of(self, module: str) -> str:
        """The file name of a module: `outputs/pdf.py`, or the `__init__.py` of a package."""
        path = module.replace(".", "/")
        for name in (f"{path}.py", f"{path}/__init__.py"):
            if name in self.files:
                return name
        raise KeyError(f"cardgen has no module {module}")

    def digest(self, names: Iterable[str]) -> str:
        """A hash of these files: their names and contents."""
        digest = hashlib.sha256()
        for name in names:
            digest.update(f"{name}:{self.files[name].digest}\0".encode())
        return digest.hexdigest()[:32]


@lru_cache(maxsize=1)
def code_map() -> CodeMap:
    """The map of cardgen's package as it is on disk now: each file's facts from the copy kept in the user's cache
    when the file's path, size and time are those kept (`bundled.code_stamp`), else read again (and the copy
    renewed). Once per process: one small file read, 2-6 ms with the stats. Reading the whole package takes
    0.4-0.5 s (parsing ~130 modules): once after an install or upgrade, or in every process when there is no user
    cache folder that can be written."""
    from cardgen.core.storage import user_store

    store = user_store("code-map", ".json")
    here = Path(__file__).stat()  # a new way of reading is a new map
    store_key = hashlib.sha256(repr((str(bundled.PACKAGE), here.st_size, here.st_mtime_ns)).encode()).hexdigest()[:32]
    kept = store.read_json(store_key) if store is not None else None
    kept = kept if isinstance(kept, dict) else {}
    racy_after = time.time_ns() - RACY_NS
    files, rows, renewed = {}, {}, False
    for name, path, size, mtime_ns in bundled.code_stamp():
        stamp = [path, size, mtime_ns]
        row = kept.get(name)
        if isinstance(row, list) and len(row) == 4 and row[0] == stamp:
            facts = FileFacts(row[1], tuple(row[2]), tuple(row[3]))
        else:
            facts, renewed = read_facts(Path(path)), True
        files[name] = facts
        if mtime_ns <= racy_after:
            rows[name] = [stamp, facts.digest, list(facts.imports), list(facts.assets)]
    if store is not None and (renewed or rows.keys() != kept.keys()):
        store.put_json(store_key, rows)
    return CodeMap(files)

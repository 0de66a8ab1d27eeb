"""Read YAML while remembering the line of every key, so errors can name it."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import yaml

from cardgen.core.errors import CardgenError
from cardgen.core.keypaths import KeyPath, line_of
from cardgen.core.storage import read_noted

__all__ = ["KeyPath", "line_of", "load_yaml", "parse_yaml", "parse_yaml_bytes", "read_yaml"]
MAX_EXPANDED_NODES = 200_000  # a card file has thousands of values; a "billion laughs" file has billions


# libyaml's parser (PyYAML's wheels bundle it) reads ~7x faster than PyYAML's pure-Python one, into the same nodes
# with the same lines; the pure-Python one stands in where PyYAML was built without it.
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BASE_LOADER: type[yaml.BaseLoader] = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class _Located:
    """A constructor whose refusal of a tagged value (`!!int x`, `!!timestamp 2001-99-99`) is a YAML error at
    the value's line: PyYAML's SafeConstructor lets int(), float() and datetime() raise their own errors."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """The value of a node; a value its tag cannot hold is a ConstructorError at the node."""
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except (ValueError, TypeError, ArithmeticError, LookupError, AttributeError) as exc:  # `!!int` alone too
            tag = node.tag.removeprefix("tag:yaml.org,2002:")
            value = f"'{node.value[:40]}'" if isinstance(node, yaml.ScalarNode) else "this value"
            why = f" ({exc})" if tag == "timestamp" and type(exc) is ValueError else ""  # "month must be in 1..12"
            raise yaml.constructor.ConstructorError(None, None, f"{value} is not a valid {tag} value{why}",
                                                    node.start_mark) from None


class _Loader(_Located, SAFE_LOADER):  # type: ignore[valid-type,misc]
    """A safe loader (no Python objects) that keeps YAML anchors and merges working."""


class _PythonLoader(_Located, yaml.SafeLoader):
    """The same, with PyYAML's own parser: its error messages say more."""


def _index_lines(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], seen: set[int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in seen:  # an alias: its lines are those of the anchor, already indexed
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = path + (key.value,)
                lines[child] = key.start_mark.line + 1
                _index_lines(value, child, lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, path + (i,), lines, seen)


class _RecursiveAlias(ValueError):
    """A YAML node that holds itself through an alias (`&a [*a]`): data cannot be made of it."""

    def __init__(self, node: yaml.Node) -> None:
        super().__init__(f"line {node.start_mark.line + 1}")
        self.line = node.start_mark.line + 1


def expanded_size(node: yaml.Node, sizes: dict[int, int] | None = None) -> int:
    """How many nodes a YAML document becomes once every alias is expanded (each node counted once); a
    _RecursiveAlias for a node that holds itself."""
    sizes = {} if sizes is None else sizes
    if id(node) not in sizes:
        sizes[id(node)] = 0  # under way: met again below itself, it is recursive
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else \
            node.value if isinstance(node, yaml.SequenceNode) else []
        sizes[id(node)] = 1 + sum(expanded_size(child, sizes) for child in children)
    elif sizes[id(node)] == 0:
        raise _RecursiveAlias(node)
    return sizes[id(node)]


def load_yaml(path: Path, shown_as: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse a YAML file (its bytes noted: see `read_yaml`); return the data and a map from key path to line number."""
    return parse_yaml_bytes(read_yaml(path, shown_as), shown_as)


def read_yaml(path: Path, shown_as: str) -> bytes:
    """A YAML file's bytes, noted as read (`storage.read_noted`: the next build tells a save just before this one by
    content), or a CardgenError saying why it cannot be read."""
    try:
        return read_noted(path)
    except OSError as exc:
        raise CardgenError(f"cannot read the file: {exc}", file=shown_as) from None


def parse_yaml_bytes(data: bytes, shown_as: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse a YAML file's bytes as read (UTF-8, a BOM dropped, line ends made "\\n" as when read as text); see
    `parse_yaml`."""
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read()
    except UnicodeDecodeError as exc:
        raise CardgenError(f"cannot read the file: {exc}", file=shown_as) from None
    return parse_yaml(text, shown_as)


def parse_yaml(text: str, shown_as: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse YAML text (`shown_as` names it in errors); return the data and a map from key path to line number."""
    try:
        try:
            return _parsed(text, shown_as, _Loader)
        except yaml.YAMLError:
            # libyaml's messages are terser (an undefined alias without its name, a tab not named as the character
            # that cannot start a token): a file it refuses is read again by PyYAML's own parser, for its message.
            return _parsed(text, shown_as, _PythonLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise CardgenError(f"YAML syntax error: {problem}", file=shown_as, row=line) from None
    except RecursionError:
        raise CardgenError("the YAML is nested too deeply", file=shown_as) from None


def _parsed(text: str, shown_as: str, loader_class: type[yaml.SafeLoader]) -> tuple[Any, dict[KeyPath, int]]:
    """Parse once: the nodes are sized and indexed before they are built (building merges `<<:` keys in place)."""
    lines: dict[KeyPath, int] = {}
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        try:
            if node is not None and expanded_size(node) > MAX_EXPANDED_NODES:
                raise CardgenError(f"the YAML expands to more than {MAX_EXPANDED_NODES} values through aliases "
                                   "(*name); this is refused", file=shown_as)
        except _RecursiveAlias as exc:
            raise CardgenError("this value holds itself through an alias (an anchor &name used as *name inside "
                               "its own value); write the values out instead", file=shown_as, row=exc.line) from None
        if node is not None:
            _index_lines(node, (), lines, set())
        return loader.construct_document(node) if node is not None else None, lines
    finally:
        loader.dispose()

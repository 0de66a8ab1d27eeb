"""Where a key of a YAML file was written: key paths and their lines (`cardgen.core.yamlsource` makes the map).

Apart from the parser, so that what reads the lines (error messages of a manifest kept in the user's cache) does not
import PyYAML.
"""
from __future__ import annotations

KeyPath = tuple[str | int, ...]


def line_of(lines: dict[KeyPath, int], path: KeyPath) -> int | None:
    """The line of a key path, or of its nearest parent that has one."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())

"""The rulebook's numbers, kept once under `values:` in game.yaml and written into card text as `{name}`.

A placeholder is `{name}`, `{name.min}` or `{name.max}` (a list's smallest and largest item), where `name`
is a key of `values:` (lowercase letters, digits and `_`, starting with a letter). A list prints its items
joined by ", ". Any other brace is printed as written, so `{` in flavour text needs no escape. Placeholders
are filled in when a cell is read, before its type is converted: an `int` column may hold `{elite_damage}`.
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Mapping

VALUE_NAME = re.compile(r"[a-z][a-z0-9_]*")
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)(?:\.(min|max))?\}")

Value = int | float | str | list[int | float | str]


def checked(value: Any) -> Value:
    """A value as game.yaml may give it: a number, a text, or a non-empty list of them (not true/false or empty)."""
    def plain(item: Any) -> bool:
        return isinstance(item, (int, float, str)) and not isinstance(item, bool)
    if plain(value) or isinstance(value, list) and value and all(map(plain, value)):
        return value
    raise ValueError(f"{value!r} is not a value: write a number, a text or a list of them (2, \"two\", [1, 2])")


def shown(value: Any) -> str:
    """A value as card text prints it: 2, 2.5, a list as '1, 2'."""
    if isinstance(value, list):
        return ", ".join(shown(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def fill(text: str, values: Mapping[str, Value]) -> tuple[str, list[str]]:
    """The text with every placeholder replaced by its value, and the placeholders naming no value (as written)."""
    if "{" not in text:  # most cells: no work
        return text, []
    unknown: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, part = match.group(1), match.group(2)
        if name not in values:
            unknown.append(match.group())
            return match.group()
        value = values[name]
        if part and isinstance(value, list) and value:
            pick = min if part == "min" else max
            return shown(pick(value))
        if part:
            unknown.append(match.group())
            return match.group()
        return shown(value)
    return PLACEHOLDER.sub(replace, text), unknown


def unknown_message(placeholder: str, values: Mapping[str, Value]) -> str:
    """What a designer reads about a placeholder that names no value (or .min/.max of a value that is no list)."""
    name = PLACEHOLDER.fullmatch(placeholder).group(1)  # type: ignore[union-attr]
    if name in values:
        return f"{placeholder}: the value '{name}' is not a list; .min and .max pick from a list"
    close = difflib.get_close_matches(name, list(values), n=1)
    hint = f"; did you mean '{{{close[0]}}}'?" if close else ""
    known = f" (the values are {', '.join(values)})" if values else " (game.yaml has no `values:`)"
    return f"unknown value {placeholder}: add it under `values:` in game.yaml{known}{hint}"

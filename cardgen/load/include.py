"""Decks included from a definition kept elsewhere in the workspace: `include:` in a deck of game.yaml.

A deck definition is a YAML file under `data/` holding the keys of a deck (source, face, back, fields, ...)
plus `options:` (values its templates read as `deck.options.<name>` and its filter and rules use as names)
and `rules:` (game rules about this deck). Its data files are named relative to its own folder and its
templates live in the matching folder of `templates/` (`data/common/standard-deck/deck.yaml` ->
`templates/common/standard-deck/`). A deck that includes it may set any deck key beside `include:`:

- keys replace the definition's (`title`, `back`, `size`, ...); `fields` are merged column by column, and
  so are the `templates:` of a face or back chosen per card (`face: {templates: {joker: my-joker.svg}}`);
- `filter:` narrows the definition's filter (both must hold);
- `options:` sets the definition's options (only those it has, of the same type);
- `rules: false` leaves the definition's rules out (for a deck that keeps only some of its cards).

Everything is merged into plain deck mappings before the manifest schema checks them, and every key
remembers the file and line it came from, so errors name the included file and line.
"""
from __future__ import annotations

import ast
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.core.expressions import parse_expression
from cardgen.core.keypaths import KeyPath

TEMPLATE_KEYS = ("face", "back")


@dataclass
class Located:
    """A mapping merged from several files, with the line (and, when not the manifest, file) of each key."""

    value: dict
    lines: dict[KeyPath, int] = field(default_factory=dict)
    files: dict[KeyPath, str] = field(default_factory=dict)

    def sub(self, *path: str | int) -> "Located":
        """The part below a key path, its locations relative to it."""
        value: Any = self.value
        for key in path:
            value = value[key]
        n = len(path)
        return Located(value, {p[n:]: v for p, v in self.lines.items() if p[:n] == path},
                       {p[n:]: v for p, v in self.files.items() if p[:n] == path})

    def put(self, prefix: KeyPath, part: "Located") -> None:
        """Record the locations of a part placed at `prefix` (its earlier locations there are dropped)."""
        self.lines = {p: v for p, v in self.lines.items() if p[:len(prefix)] != prefix}
        self.files = {p: v for p, v in self.files.items() if p[:len(prefix)] != prefix}
        self.lines.update({prefix + p: v for p, v in part.lines.items()})
        self.files.update({prefix + p: v for p, v in part.files.items()})


def located_file(value: Any, lines: dict[KeyPath, int], shown: str) -> Located:
    """A freshly loaded file: every key's location is in that file."""
    return Located(value, dict(lines), {p: shown for p in lines})


class Includer:
    """Expands the `include:` of every deck of a manifest; collects the files it read."""

    def __init__(self, root: Path, manifest_shown: str) -> None:
        self.root = root.resolve()
        self.data_root = self.root / "data"
        self.manifest_shown = manifest_shown
        self.files: list[Path] = []

    def expand_decks(self, manifest: Located, base_dir: Path) -> Located:
        """The manifest with every included deck merged in and the rules of decks appended to `rules:`.

        Options become names in the deck's filter and rules (`jokers` reads the deck's option `jokers`).
        """
        decks = manifest.value.get("decks")
        if not isinstance(decks, dict):
            return manifest
        problems: list[Problem] = []
        extra_rules: list[tuple[str, Located]] = []
        for name, deck in decks.items():
            if not isinstance(deck, dict):
                continue
            try:
                merged = self.expand(manifest.sub("decks", name), base_dir, [])
            except CardgenError as exc:
                problems += exc.problems
                continue
            given = merged.value.get("options")
            options: dict[str, Any] = given if isinstance(given, dict) else {}
            if isinstance(merged.value.get("filter"), str):
                merged.value["filter"] = bind_options(merged.value["filter"], options)
            rules = merged.value.get("rules")
            if isinstance(rules, list):
                for i, rule in enumerate(rules):
                    for key in ("where", "check", "total"):
                        if isinstance(rule, dict) and isinstance(rule.get(key), str):
                            rule[key] = bind_options(rule[key], options)
                    extra_rules.append((str(name), merged.sub("rules", i)))
            merged.value.pop("rules", None)
            decks[name] = merged.value
            manifest.put(("decks", name), merged)
            manifest.put(("decks", name, "rules"), Located({}))
        if problems:
            raise CardgenError(problems)
        self._append_rules(manifest, extra_rules)
        return manifest

    def expand(self, deck: Located, base_dir: Path, stack: list[Path]) -> Located:
        """One deck mapping with its include (and the include's includes) merged in; sources relative to base_dir."""
        if "include" not in deck.value:
            if not isinstance(deck.value.get("rules", []), list):
                raise CardgenError("rules: beside a deck's keys is a list of rules; `rules: false` goes with "
                                   "include:", file=self._file(deck, ("rules",)), row=deck.lines.get(("rules",)))
            return deck
        target = self._target(deck, base_dir, stack)
        shown = relative(target, self.root)
        raw, lines = self._read(target, shown)
        if not isinstance(raw, dict):
            raise CardgenError("a deck definition must be a mapping of deck keys (source:, face:, ...)", file=shown)
        self.files.append(target)
        definition = located_file(raw, lines, shown)
        _qualify_templates(definition.value, target.parent.relative_to(self.data_root))
        definition = self.expand(definition, target.parent, [*stack, target])
        _rebase_source(definition.value, target.parent, base_dir)
        return _overlay(definition, deck)

    def _read(self, target: Path, shown: str) -> tuple[Any, dict[KeyPath, int]]:
        """An included file parsed, its bytes noted (`read_yaml`: the next build tells a save just before this one
        by content, and the game is kept by the content it was made of)."""
        from cardgen.core.yamlsource import load_yaml

        return load_yaml(target, shown)

    def _target(self, deck: Located, base_dir: Path, stack: list[Path]) -> Path:
        """The included file: inside the workspace's data/ folder, existing, not already being included."""
        text = deck.value["include"]
        where = {"file": self._file(deck, ("include",)), "row": deck.lines.get(("include",))}
        if not isinstance(text, str) or not text.strip():
            raise CardgenError("include: expected the path of a deck definition file, such as "
                               "../common/standard-deck/deck.yaml", **where)
        if "://" in text or Path(text).is_absolute():
            raise CardgenError(f"include: '{text}' must be a path relative to this file's folder, inside the "
                               "workspace", **where)
        target = (base_dir / text).resolve()
        if not target.is_relative_to(self.data_root):
            raise CardgenError(f"include: '{text}' leads outside the workspace's data/ folder; a deck definition "
                               "is kept under data/ (its templates under templates/)", **where)
        if not target.is_file():
            raise CardgenError(f"include: no file '{text}' (looked for {relative(target, self.root)})", **where)
        if target in stack:
            chain = " -> ".join(relative(p, self.root) for p in [*stack, target])
            raise CardgenError(f"include: '{text}' includes itself ({chain}); an include must not loop", **where)
        return target

    def _file(self, part: Located, path: KeyPath) -> str:
        while path and path not in part.files and path not in part.lines:
            path = path[:-1]
        return part.files.get(path, self.manifest_shown)

    def _append_rules(self, manifest: Located, extra: list[tuple[str, Located]]) -> None:
        """Rules of included decks join the game's rules, checked on that deck only."""
        if not extra:
            return
        rules = manifest.value.get("rules")
        if rules is None:
            rules = manifest.value["rules"] = []
        if not isinstance(rules, list):
            return  # the schema reports it
        for deck_name, rule in extra:
            value = rule.value
            if isinstance(value, dict):
                if "decks" in value:
                    raise CardgenError("rules of a deck apply to that deck: leave out `decks:`",
                                       file=self._file(rule, ("decks",)), row=rule.lines.get(("decks",)))
                value["decks"] = [deck_name]
                if isinstance(value.get("message"), str):
                    value["message"] = f"deck '{deck_name}': {value['message']}"
            manifest.put(("rules", len(rules)), rule)
            rules.append(value)


def _qualify_templates(definition: dict, folder: Path) -> None:
    """Template names of a definition are relative to its folder of templates/: make them workspace-wide."""
    prefix = folder.as_posix()
    for key in TEMPLATE_KEYS:
        choice = definition.get(key)
        if isinstance(choice, str):
            definition[key] = posixpath.join(prefix, choice)
        elif isinstance(choice, dict):
            templates = choice.get("templates")
            if isinstance(templates, dict):
                choice["templates"] = {k: posixpath.join(prefix, v) if isinstance(v, str) else v
                                       for k, v in templates.items()}
            if isinstance(choice.get("default"), str):
                choice["default"] = posixpath.join(prefix, choice["default"])


def _rebase_source(definition: dict, folder: Path, base_dir: Path) -> None:
    """A definition names its data files relative to its folder; the including deck, relative to its own."""
    source = definition.get("source")
    file = source.get("file") if isinstance(source, dict) else source
    if not isinstance(file, str) or Path(file).is_absolute() or "://" in file:  # a URL is the same from anywhere
        return
    rebased = Path(os.path.relpath(folder / file, base_dir)).as_posix()
    if isinstance(source, dict):
        source["file"] = rebased
    else:
        definition["source"] = rebased


def _overlay(definition: Located, deck: Located) -> Located:
    """The definition with the including deck's keys over it."""
    merged = Located(dict(definition.value), dict(definition.lines), dict(definition.files))
    for key, value in deck.value.items():
        if key == "include":
            continue
        below = deck.sub(key)
        if key == "options":
            value = _options(merged.value.get("options") or {}, value, deck)
        elif key == "fields" and isinstance(value, dict) and isinstance(merged.value.get("fields"), dict):
            value = {**merged.value["fields"], **value}
            below = _joined(definition.sub("fields"), below)  # each column located where it was written
        elif key in TEMPLATE_KEYS and isinstance(value, dict) and isinstance(merged.value.get(key), dict):
            value = _merged_choice(merged.value[key], value)
            below = _joined(definition.sub(key), below)
        elif key == "filter" and isinstance(value, str) and isinstance(merged.value.get("filter"), str):
            value = f"({merged.value['filter']}) and ({value})"
        elif key == "rules":
            value, below = _rules(definition, value, deck)
        merged.value[key] = value
        merged.put((key,), below)
    if merged.value.get("rules") is None:
        merged.value.pop("rules", None)
    return merged


def _merged_choice(included: dict, given: dict) -> dict:
    """A template chosen per card: the including deck's `templates:` replace the definition's one by one."""
    templates = given.get("templates")
    if isinstance(templates, dict) and isinstance(included.get("templates"), dict):
        templates = {**included["templates"], **templates}
    return {**included, **given, **({"templates": templates} if templates is not None else {})}


def _joined(first: Located, then: Located, shift: int = 0) -> Located:
    """The locations of two parts together; `then`'s list indexes shifted by `shift` (rules appended)."""
    def moved(path: KeyPath) -> KeyPath:
        return (path[0] + shift, *path[1:]) if shift and path and isinstance(path[0], int) else path
    return Located({}, {**first.lines, **{moved(p): v for p, v in then.lines.items()}},
                   {**first.files, **{moved(p): v for p, v in then.files.items()}})


def _options(defaults: Any, given: Any, deck: Located) -> Any:
    """The definition's options with the values the including deck gives (only known names, same types)."""
    if not isinstance(given, dict) or not isinstance(defaults, dict):
        return given  # the schema says what is wrong
    import difflib

    problems = []
    for name, value in given.items():
        row = deck.lines.get(("options", name))
        if name not in defaults:
            close = difflib.get_close_matches(str(name), [str(k) for k in defaults], n=1)
            known = ", ".join(map(str, defaults)) or "none"
            problems.append(Problem(f"options.{name}: the included deck has no option '{name}'"
                                    + (f"; did you mean '{close[0]}'?" if close else f" (its options: {known})"),
                                    file=deck.files.get(("options", name)), row=row))
        elif not _same_type(defaults[name], value):
            problems.append(Problem(f"options.{name}: expected {_type_name(defaults[name])} like the "
                                    f"definition's {defaults[name]!r}, got {value!r}",
                                    file=deck.files.get(("options", name)), row=row))
    if problems:
        raise CardgenError(problems)
    return {**defaults, **given}


def _same_type(default: Any, value: Any) -> bool:
    if default is None or value is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def _type_name(value: Any) -> str:
    return {bool: "true or false", int: "a number", float: "a number", str: "text"}.get(type(value), "a value")


def _rules(definition: Located, given: Any, deck: Located) -> tuple[Any, Located]:
    """`rules: false` drops the definition's rules, `true` keeps them, a list adds to them."""
    included = definition.value.get("rules")
    kept = definition.sub("rules") if isinstance(included, list) else Located({})
    if given is False:
        return None, Located({})
    if given is True:
        return included, kept
    if isinstance(given, list):
        return [*(included or []), *given], _joined(kept, deck.sub("rules"), len(included or []))
    raise CardgenError("rules: beside include: is true (check the included deck's rules, the default), false "
                       "(leave them out) or a list of more rules", file=deck.files.get(("rules",)),
                       row=deck.lines.get(("rules",)))


# ---------------------------------------------------------------- options as names in expressions

def bind_options(expr: str, options: dict[str, Any]) -> str:
    """An expression with each option name replaced by the option's value (`jokers` -> `True`).

    Only plain names that are options are replaced, never a helper's name or a column argument of one;
    the rest stays as written (a pattern's backslashes too). An expression that does not parse is returned
    as it is (checking it reports the problem).
    """
    if not options or not isinstance(expr, str):
        return expr
    source = expr.strip()
    try:
        tree = parse_expression(source)
    except SyntaxError:
        return expr
    skip = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)} | \
        {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) for a in n.args}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in options and id(n) not in skip
             and _literal(options[n.id])]
    lines = source.splitlines(keepends=True)
    starts = [sum(len(line) for line in lines[:i]) for i in range(len(lines))]

    def offset(line: int, column: int) -> int:  # ast counts columns in UTF-8 bytes
        return starts[line - 1] + len(lines[line - 1].encode()[:column].decode())

    for name in sorted(names, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        begin, end = offset(name.lineno, name.col_offset), offset(name.lineno, name.end_col_offset or 0)
        source = f"{source[:begin]}{options[name.id]!r}{source[end:]}"
    return source if names else expr


def _literal(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str))

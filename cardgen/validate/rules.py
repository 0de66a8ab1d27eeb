"""Layer 4, game rules declared under `rules:` in game.yaml: row, aggregate, expected-table and term rules.

Every expression goes through `cardgen.core.expressions` (checked with `ast`, then evaluated over plain rows),
never through Python's eval.
"""
from __future__ import annotations

import ast
import difflib
import functools
import math
import re
from typing import Any, Callable, Iterable

from cardgen.core.errors import Problem
from cardgen.core.expressions import (
    EvaluationError,
    ExpressionError,
    check_aggregate,
    check_expression,
    columns_in,
    compile_mask,
    evaluate_aggregate,
    evaluate_mask,
    is_missing,
    parse_expression,
)
from cardgen.load.data import Card, GameData, Row
from cardgen.load.manifest import ExpectSpec, Game, RefersSpec, RuleSpec, TermSpec, TextSpec
from cardgen.load.markup import parse, plain_text
from cardgen.load.values import fill, unknown_message

# A number as pandas.to_numeric read one from a text cell: 12, -3, 2.5, .5, 1e3, inf.
_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)\s*", re.IGNORECASE)
_WHOLE = re.compile(r"\s*[+-]?\d+\s*")


def _as_number(value: Any) -> int | float | None:
    """The number a cell holds or spells, or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not _NUMBER.fullmatch(value):
        return None
    return int(value) if _WHOLE.fullmatch(value) else float(value)


def card_rows(cards: list[Card], columns: list[str], declared: set[str]) -> list[dict[str, Any]]:
    """One row per card: its typed fields plus `id`, `deck` and `copies` (what a template's `card` holds).

    Every row has every column (None where a card has no such field), so an aggregate over no cards is 0,
    not an error.
    """
    names = list(dict.fromkeys([*columns, "id", "deck", "copies"]))
    rows = [{**{name: (card.original or card.fields).get(name) for name in names}, "id": card.id, "deck": card.deck,
             "copies": card.copies} for card in cards]
    for name in names:
        values = [row[name] for row in rows if not is_missing(row[name])]
        numbers = [] if name in declared else [_as_number(v) for v in values]
        if numbers and all(n is not None for n in numbers):
            # An undeclared column is text; a rule comparing `tier == 1` means its numbers. Whole numbers stay
            # whole only when every card has one (as pandas read them: a column with gaps is of floats).
            whole = len(values) == len(rows) and all(isinstance(n, int) for n in numbers)
            for row in rows:
                number = _as_number(row[name]) if not is_missing(row[name]) else math.nan
                row[name] = number if whole else float(number)  # type: ignore[arg-type]
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            # A declared column of numbers holds floats (NaN for a gap), as pandas held it for `health % 10`.
            for row in rows:
                row[name] = math.nan if is_missing(row[name]) else float(row[name])  # type: ignore[arg-type]
    return rows


class RuleChecker:
    """Checks a game's rules against its cards."""

    def __init__(self, game: Game, data: GameData, skip_rows: set[tuple[str, int]]) -> None:
        self.game, self.cards = game, data.cards
        declared = set().union(*(game.fields_of(deck) for deck in game.spec.decks.values()))
        headers = [h for table in data.tables.values() for h in table.header if h]
        self._row_columns = ([*declared, *headers], declared)
        self.columns = {*declared, *headers, "id", "deck", "copies"}
        self.skip_rows = skip_rows  # rows with data errors already: a rule would only repeat them
        self._tables = data.tables
        # The game's values are names in every expression, as constants beside the card's columns.
        self.values = {k: v for k, v in game.spec.values.items() if k not in self.columns}
        self.columns |= set(self.values)
        self._printed: dict[tuple[int, str], list[str]] = {}  # card text as printed, read once for all text rules

    @functools.cached_property
    def data_rows(self) -> dict[tuple[str, int], Row]:
        """Each card's data row, for the line of a column's value (its key's own line in a YAML record): made when a
        finding needs one (~6 ms at 10,000 cards)."""
        return {(row.file, row.line): row for table in self._tables.values() for row in table.rows}

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Each card's row as the rules read it, the game's values in it (made when a rule reads rows: a game
        without rules makes none, ~10 ms at 1,000 cards on every edit)."""
        rows = card_rows(self.cards, *self._row_columns)
        for row in rows:
            row.update(self.values)
        return rows

    def check(self) -> list[Problem]:
        """The findings of every rule (and of a value named like a column, which no rule could read)."""
        findings = [Problem(f"values.{name}: a column is called '{name}' too, so a rule could not tell them apart; "
                            "rename the value", *self.game.where("values", name), rule="value-name")
                    for name in self.game.spec.values if name not in self.values]
        for index, rule in enumerate(self.game.spec.rules):
            try:
                findings += self._rule(index, rule)
            except ExpressionError as exc:
                findings.append(self._at_rule(index, rule, f"rule '{rule.id}' cannot be checked: {exc}", "error"))
            except EvaluationError as exc:
                findings.append(self._at_rule(index, rule, f"rule '{rule.id}' cannot be evaluated: {exc}", "error"))
            except Exception as exc:  # a case the evaluator did not foresee: still a finding, not a traceback
                findings.append(self._at_rule(index, rule, f"rule '{rule.id}' cannot be evaluated: "
                                                           f"{type(exc).__name__}: {exc}", "error"))
        return findings

    def _at_rule(self, index: int, rule: RuleSpec, message: str, severity: str | None = None,
                 *key: str | int) -> Problem:
        file, row = self.game.where("rules", index, *key)
        return Problem(message, file=file, row=row, severity=severity or rule.severity, rule=rule.id)

    def _mask(self, positions: list[int], expr: str) -> list[bool]:
        """A row expression on the given cards; one that cannot be evaluated names the card it met."""
        try:
            return evaluate_mask([self.rows[i] for i in positions], expr, self.columns)
        except EvaluationError as exc:
            if exc.row is not None:
                raise EvaluationError(f"{exc} (card '{self.cards[positions[exc.row]].id}')") from None
            raise

    def _selected(self, index: int, rule: RuleSpec) -> list[int]:
        """The positions of the cards a rule looks at (its decks:, then its where:)."""
        for expr in (rule.where, rule.check):
            if expr:
                check_expression(expr, self.columns)
        if rule.total:
            check_aggregate(rule.total, self.columns)
        unknown = [d for d in rule.decks or [] if d not in self.game.spec.decks]
        if unknown:
            raise ExpressionError(f"unknown deck '{unknown[0]}' in decks:; the decks are "
                                  f"{', '.join(self.game.spec.decks)}")
        positions = [i for i, card in enumerate(self.cards) if not rule.decks or card.deck in rule.decks]
        if rule.where and positions:
            positions = [i for i, keep in zip(positions, self._mask(positions, rule.where)) if keep]
        return positions

    def _rule(self, index: int, rule: RuleSpec) -> list[Problem]:
        positions = self._selected(index, rule)
        if rule.check:
            return self._row_rule(rule, positions)
        if rule.total:
            return self._aggregate_rule(index, rule, positions)
        if rule.expect:
            return self._expect_rule(index, rule, rule.expect, positions)
        if rule.refers:
            return self._refers_rule(rule, rule.refers, positions)
        if rule.text:
            return self._text_rule(rule, rule.text, positions)
        return self._term_rule(index, rule, rule.terms, positions)  # type: ignore[arg-type]

    def _card_finding(self, rule: RuleSpec, position: int, message: str, column: str | None) -> Problem | None:
        card = self.cards[position]
        if (card.source_file, card.source_row) in self.skip_rows:
            return None
        row = self.data_rows.get((card.source_file, card.source_row))
        line = row.line_of(column) if row is not None and column is not None else card.source_row
        return Problem(message, file=card.source_file, row=line, column=column, severity=rule.severity,
                       rule=rule.id)

    def _blamed_column(self, position: int, check: str) -> str | None:
        """The column a failed check points at. In `a and b` the first part that fails; in `a or b` the last
        part, what an implication (`difficulty != 'easy' or hp <= 30`) says must hold; else the first column."""
        node = parse_expression(check).body
        while isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.Or):
                node = node.values[-1]
            else:
                node = next((part for part in node.values if not self._mask([position], ast.unparse(part))[0]),
                            node.values[0])
        # a finding is at a column's cell, not at a value's (the game's values are names beside the columns)
        columns = [c for c in columns_in(ast.unparse(node)) if c in self.columns and c not in self.values]
        return columns[0] if columns else None

    def _row_rule(self, rule: RuleSpec, positions: list[int]) -> list[Problem]:
        if not positions:
            return []
        mask = self._mask(positions, rule.check)  # type: ignore[arg-type]
        columns = [c for c in columns_in(rule.check) if c in self.columns]  # type: ignore[arg-type]
        findings = []
        for position in (p for p, holds in zip(positions, mask) if not holds):
            values = self.rows[position]
            shown = ", ".join(f"{c} = {_show(values[c])}" for c in columns)
            problem = self._card_finding(rule, position, f"{rule.message}; card '{values['id']}' has {shown}",
                                         self._blamed_column(position, rule.check))  # type: ignore[arg-type]
            if problem:
                findings.append(problem)
        return findings

    def _groups(self, rule: RuleSpec, positions: list[int]) -> list[tuple[Any, list[int]]]:
        """The cards of an aggregate rule, split by the value of its per: column (an empty cell is '')."""
        if rule.per is None:
            return [(None, positions)]
        if rule.per not in self.columns:
            raise ExpressionError(f"per: unknown column '{rule.per}'")
        groups: dict[Any, list[int]] = {}
        for position in positions:
            value = self.rows[position][rule.per]
            groups.setdefault("" if is_missing(value) else _group_key(value), []).append(position)
        return sorted(groups.items(), key=lambda item: _sort_key(item[0]))

    def _aggregate_rule(self, index: int, rule: RuleSpec, positions: list[int]) -> list[Problem]:
        findings = []
        for key, group in self._groups(rule, positions):
            holds, values = evaluate_aggregate([self.rows[i] for i in group], rule.total,  # type: ignore[arg-type]
                                               self.columns, self.values)
            if not holds:
                # the aggregates, then the game's values the total compares them with (`rows() >= easy_needed`)
                named = {name: self.values[name] for name in columns_in(rule.total)  # type: ignore[arg-type]
                         if name in self.values}
                shown = ", ".join(f"{label} = {_show(value)}" for label, value in {**values, **named}.items())
                scope = f" for {rule.per} = {_show(key)}" if rule.per else ""
                files = sorted({self.cards[i].source_file for i in group})
                at_rule = self.game.where("rules", index)
                findings.append(Problem(f"{rule.message}; {shown}{scope}", file=files[0] if len(files) == 1
                                        else at_rule[0], row=None if len(files) == 1 else at_rule[1],
                                        severity=rule.severity, rule=rule.id))
        return findings

    def _expect_rule(self, index: int, rule: RuleSpec, expect: ExpectSpec, positions: list[int]) -> list[Problem]:
        for column in (expect.key, expect.column):
            if column not in self.columns:
                raise ExpressionError(f"expect: unknown column '{column}'")
        findings = []
        keys = {i: str(self.rows[i][expect.key]) for i in positions}
        for key, wanted in expect.values.items():
            rows = [i for i in positions if keys[i] == key]
            if not rows:
                findings.append(self._at_rule(index, rule, f"{rule.message}; no card has {expect.key} '{key}'"
                                              + _suggest(key, keys.values()), None, "expect", "values", key))
                continue
            values = [self.rows[i][expect.column] for i in rows]
            got = _total(values) if isinstance(wanted, (int, float)) else values[0]
            if got != wanted:
                problem = self._card_finding(rule, rows[0], f"{rule.message}; '{key}' has "
                                             f"{expect.column} {_show(got)}, expected {_show(wanted)}",
                                             expect.column)
                findings += [problem] if problem else []
        if expect.complete:
            listed = {str(k) for k in expect.values}
            for position in (i for i in positions if keys[i] not in listed):
                problem = self._card_finding(rule, position, f"{rule.message}; '{keys[position]}' is not "
                                             f"listed" + _suggest(keys[position], list(expect.values)), expect.key)
                findings += [problem] if problem else []
        return findings

    def _texts(self, positions: Iterable[int], column: str) -> set[str]:
        """The filled values of a column on some cards, as texts."""
        return {str(v) for i in positions if not is_missing(v := self.rows[i].get(column))}

    def _refers_rule(self, rule: RuleSpec, refers: RefersSpec, positions: list[int]) -> list[Problem]:
        """Every value (or list item) of a column names a deck, or a card by the values of another column."""
        if refers.column not in self.columns:
            raise ExpressionError(f"refers: unknown column '{refers.column}'")
        if refers.to == "decks":
            targets, what = set(self.game.spec.decks), "deck"
        else:
            if refers.to not in self.columns:
                raise ExpressionError(f"refers: unknown column '{refers.to}'")
            pool = [i for i, card in enumerate(self.cards) if not refers.among or card.deck in refers.among]
            targets, what = self._texts(pool, refers.to), f"card {refers.to}"
        findings = []
        for position in positions:
            value = self.rows[position][refers.column]
            items = value if isinstance(value, list) else [] if is_missing(value) else [value]
            for item in items:
                if str(item) not in targets:
                    problem = self._card_finding(rule, position, f"{rule.message}; no {what} '{item}'"
                                                 + _suggest(str(item), targets), refers.column)
                    findings += [problem] if problem else []
        return findings

    def _term_rule(self, index: int, rule: RuleSpec, terms: TermSpec, positions: list[int]) -> list[Problem]:
        findings = []
        if terms.names and terms.column not in self.columns:
            raise ExpressionError(f"terms: unknown column '{terms.column}'")
        present = self._texts(positions, terms.column) if terms.names else set()
        for i, name in enumerate(terms.names):
            if name not in present:
                findings.append(self._at_rule(index, rule, f"{rule.message}; no card is called '{name}'"
                                              + _suggest(name, present), None, "terms", "names", i))
        known = _term_words(terms.known) | _term_words(self._texts(positions, "name"))
        for position in positions:
            card = self.cards[position]
            if (card.source_file, card.source_row) in self.skip_rows:
                continue
            for column in terms.text:
                for word in unknown_terms(self.rows[position].get(column), known):
                    problem = self._card_finding(rule, position, f"{rule.message}; '{word}' is neither a "
                                                 "term of the rulebook nor a card name"
                                                 + _suggest(word.lower(), known), column)
                    findings += [problem] if problem else []
        return findings


    def _text_rule(self, rule: RuleSpec, spec: TextSpec, positions: list[int]) -> list[Problem]:
        """The numbers a card's text writes (next to a term, or in a pattern's groups) hold `check` or equal the
        value or column their group is named after; the text holds the `require`d phrase."""
        unknown = [c for c in spec.columns if c not in self.columns]
        if unknown:
            raise ExpressionError(f"text: unknown column '{unknown[0]}'")
        named = [name for name in _group_names(spec.pattern) if name not in self.columns]
        if named:
            raise ExpressionError(f"text.pattern: the group '{named[0]}' names no value or column")
        test = compile_mask(spec.check, self.columns | {"number"}) if spec.check else None
        phrase = self._required_phrase(spec)
        finder = text_numbers(spec.term, spec.pattern)
        findings = []
        for position in positions:
            texts = [(column, plain) for column in spec.columns for plain in self._printed_text(position, column)]
            found = [self._wrong_number(rule, spec, position, column, said, number, name, test)
                     for column, plain in texts for said, number, name in finder(plain)]
            if phrase and not any(phrase in plain for _, plain in texts):
                found.append(self._card_finding(rule, position, f"{rule.message}; card '{self.cards[position].id}' "
                                                f"does not say '{phrase}'", spec.columns[0]))
            findings += [problem for problem in found if problem]
        return findings

    def _printed_text(self, position: int, column: str) -> list[str]:
        key = (position, column)
        if key not in self._printed:
            self._printed[key] = _plain_texts(self.rows[position][column])
        return self._printed[key]

    def _required_phrase(self, spec: TextSpec) -> str | None:
        if spec.require is None:
            return None
        phrase, unknown = fill(spec.require, self.game.spec.values)
        if unknown:
            raise ExpressionError(f"text.require: {unknown_message(unknown[0], self.game.spec.values)}")
        return " ".join(phrase.split())

    def _wrong_number(self, rule: RuleSpec, spec: TextSpec, position: int, column: str, said: str,
                      number: int | float, name: str | None, test: Any) -> Problem | None:
        """A finding when a number read from a card's text is not its group's value (or column), or fails the
        rule's check."""
        row = {**self.rows[position], "number": number}
        if name is not None:
            wanted = row[name]
            if number in wanted if isinstance(wanted, list) else number == wanted:
                return None
            shown = f", {name} = {_show(wanted)}"
        else:
            if test is None:
                return None
            try:
                if test(row):
                    return None
            except EvaluationError as exc:
                raise EvaluationError(f"{exc} (card '{self.cards[position].id}')") from None
            names = [c for c in columns_in(spec.check) if c != "number" and c in self.columns]  # type: ignore[arg-type]
            shown = "".join(f", {c} = {_show(row[c])}" for c in names)
        return self._card_finding(rule, position, f"{rule.message}; card '{self.cards[position].id}' says "
                                  f"'{said}': number = {_show(number)}{shown}", column)


_NUMBER_TEXT = r"\d+(?:\.\d+)?"


def _group_names(pattern: str | None) -> list[str]:
    """The values or columns a pattern's named groups stand for: `(?P<lanes>\\d+)`, and `lanes__2` for a second."""
    return [name.split("__")[0] for name in re.compile(pattern).groupindex] if pattern else []


def text_numbers(term: str | None, pattern: str | None) -> Callable[[str], list[tuple[str, int | float, str | None]]]:
    """A function finding the numbers of a text: next to a term (before it or after it, a range '1-2' giving
    both, plurals too), or the groups of a pattern; each with the words it was read from and the value or
    column its group is named after (None for an unnamed group)."""
    if term is not None:
        words = r"\s+".join(map(re.escape, term.split()))
        number = rf"({_NUMBER_TEXT})(?:\s*[-\u2013]\s*({_NUMBER_TEXT}))?"
        pattern = (rf"(?<!\w)(?<!\d\.){number}\s*{words}(?:e?s)?\b"
                   rf"|\b{words}(?:e?s)?\s*:?\s*\+?{number}(?!\w|\.\d)")
    regex = re.compile(pattern or "(?!)", re.IGNORECASE)
    names = {index: name.split("__")[0] for name, index in regex.groupindex.items()}

    def find(text: str) -> list[tuple[str, int | float, str | None]]:
        return [(match.group().strip(), _as_number(group), names.get(index))  # type: ignore[misc]
                for match in regex.finditer(text) for index, group in enumerate(match.groups(), 1)
                if group is not None and _as_number(group) is not None]
    return find


def _plain_texts(value: Any) -> list[str]:
    """A text cell (or each item of a list cell) as printed: markup and icons gone, spaces collapsed."""
    items = value if isinstance(value, list) else [value]
    return [_plain(item) for item in items if isinstance(item, str) and item]


# Of each text, by the text (a watch's every edit reads the rules text of every card again; ~1/3 of the rule layer)
@functools.lru_cache(maxsize=1 << 14)
def _plain(text: str) -> str:
    """A text as printed: markup and icons gone, spaces collapsed."""
    return " ".join(plain_text(parse(text), " ").split())


def _group_key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _sort_key(key: Any) -> tuple[int, Any]:
    """Groups in order, numbers before texts (as pandas sorted a column that mixes them)."""
    return (0, key) if isinstance(key, (int, float)) else (1, str(key))


def _total(values: list[Any]) -> Any:
    """The sum of filled cells that are all numbers; otherwise the first cell (what expect: shows)."""
    filled = [v for v in values if not is_missing(v)]
    return sum(filled) if all(isinstance(v, (int, float)) for v in filled) else values[0]


# ---------------------------------------------------------------- terms in rules text

_WORD = re.compile(r"[^\W\d_][\w'-]*")
_SENTENCE_END = re.compile(r"[.!?:;]\s+|\n")


def _term_words(names: Any) -> set[str]:
    """The lowercase words of a list of terms or names."""
    return {w.lower() for name in names for w in _WORD.findall(str(name))}


def _is_known(word: str, known: set[str]) -> bool:
    lower = word.lower()
    return any(form in known for form in (lower, lower.removesuffix("s"), lower.removesuffix("es")))


def unknown_terms(text: Any, known: set[str]) -> list[str]:
    """Words of a rules text that look like game terms but are not known.

    A game term is a **bold** word, or a capitalised word that does not start a sentence;
    italic text (flavour) and :icons: are skipped.
    """
    if not isinstance(text, str) or not text:
        return []
    return [word for word in _term_like(text) if not _is_known(word, known)]


@functools.lru_cache(maxsize=1 << 14)  # (see `_plain`)
def _term_like(text: str) -> tuple[str, ...]:
    """The words of a rules text that look like game terms: bold, or capitalised but not starting a sentence."""
    spans = parse(text)
    bold = [w for s in spans if s.kind == "text" and s.bold for w in _WORD.findall(s.text)]
    plain = "".join(" " if s.kind == "icon" or s.italic and s.kind == "text" else s.text for s in spans)
    capitals = []
    for sentence in _SENTENCE_END.split(plain):
        words = _WORD.findall(sentence)
        capitals += [w for w in words[1:] if w[0].isupper()]
    return tuple(dict.fromkeys(bold + capitals))


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _show(value: Any) -> str:
    if value is None or isinstance(value, float) and math.isnan(value):
        return "(empty)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)

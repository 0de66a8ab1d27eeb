"""Layer 4, game rules declared under `rules:` in game.yaml: row, aggregate, expected-table and term rules.

Every expression goes through `cardgen.expressions` (checked with `ast`, then evaluated by pandas),
never through Python's eval.
"""
from __future__ import annotations

import difflib
import math
import re
from typing import Any

import pandas as pd

from cardgen.data import Card, GameData
from cardgen.errors import Problem
from cardgen.expressions import (
    ExpressionError,
    check_aggregate,
    check_expression,
    columns_in,
    evaluate_aggregate,
    evaluate_mask,
)
from cardgen.manifest import ExpectSpec, Game, RefersSpec, RuleSpec, TermSpec
from cardgen.markup import parse


def card_frame(cards: list[Card], columns: list[str], declared: set[str]) -> pd.DataFrame:
    """One row per card: its typed fields plus `id`, `deck` and `copies` (what a template's `card` holds).

    Every column is there even without cards, so an aggregate over no cards is 0, not an error.
    """
    records = [{**card.fields, "id": card.id, "deck": card.deck, "copies": card.copies} for card in cards]
    names = list(dict.fromkeys([*columns, "id", "deck", "copies"]))
    frame = pd.DataFrame(records, index=range(len(cards)), columns=names, dtype=object)
    for column in frame.columns:
        values = frame[column].dropna()
        if column not in declared and len(values):
            # An undeclared column is text; a rule comparing `tier == 1` means its numbers.
            numbers = pd.to_numeric(values, errors="coerce")
            if numbers.notna().all():
                frame[column] = pd.to_numeric(frame[column], errors="coerce")
                continue
        # A column of numbers with gaps (or with no values at all) must be numeric for `health % 10`.
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            frame[column] = frame[column].astype(float)
    return frame


class RuleChecker:
    """Checks a game's rules against its cards."""

    def __init__(self, game: Game, data: GameData, skip_rows: set[tuple[str, int]]) -> None:
        self.game, self.cards = game, data.cards
        declared = set().union(*(game.fields_of(deck) for deck in game.spec.decks.values()))
        headers = [h for table in data.tables.values() for h in table.header if h]
        self.frame = card_frame(data.cards, [*declared, *headers], declared)
        self.skip_rows = skip_rows  # rows with data errors already: a rule would only repeat them

    def check(self) -> list[Problem]:
        """The findings of every rule."""
        findings = []
        for index, rule in enumerate(self.game.spec.rules):
            try:
                findings += self._rule(index, rule)
            except ExpressionError as exc:
                findings.append(self._at_rule(index, rule, f"rule '{rule.id}' cannot be checked: {exc}", "error"))
            except Exception as exc:  # pandas' own errors for an expression that passed the sandbox (types)
                findings.append(self._at_rule(index, rule, f"rule '{rule.id}' cannot be evaluated: "
                                                           f"{type(exc).__name__}: {exc}", "error"))
        return findings

    def _at_rule(self, index: int, rule: RuleSpec, message: str, severity: str | None = None,
                 *key: str | int) -> Problem:
        file, row = self.game.where("rules", index, *key)
        return Problem(message, file=file, row=row, severity=severity or rule.severity, rule=rule.id)

    def _selected(self, index: int, rule: RuleSpec) -> pd.DataFrame:
        columns = set(self.frame.columns)
        for expr in (rule.where, rule.check):
            if expr:
                check_expression(expr, columns)
        if rule.total:
            check_aggregate(rule.total, columns)
        frame = self.frame
        unknown = [d for d in rule.decks or [] if d not in self.game.spec.decks]
        if unknown:
            raise ExpressionError(f"unknown deck '{unknown[0]}' in decks:; the decks are "
                                  f"{', '.join(self.game.spec.decks)}")
        if rule.decks and len(frame):
            frame = frame[frame["deck"].isin(rule.decks)]
        if rule.where and len(frame):
            frame = frame[evaluate_mask(frame, rule.where)]
        return frame

    def _rule(self, index: int, rule: RuleSpec) -> list[Problem]:
        frame = self._selected(index, rule)
        if rule.check:
            return self._row_rule(rule, frame)
        if rule.total:
            return self._aggregate_rule(index, rule, frame)
        if rule.expect:
            return self._expect_rule(index, rule, rule.expect, frame)
        if rule.refers:
            return self._refers_rule(rule, rule.refers, frame)
        return self._term_rule(index, rule, rule.terms, frame)  # type: ignore[arg-type]

    def _card_finding(self, rule: RuleSpec, position: int, message: str, column: str | None) -> Problem | None:
        card = self.cards[position]
        if (card.source_file, card.source_row) in self.skip_rows:
            return None
        return Problem(message, file=card.source_file, row=card.source_row, column=column,
                       severity=rule.severity, rule=rule.id)

    def _row_rule(self, rule: RuleSpec, frame: pd.DataFrame) -> list[Problem]:
        if not len(frame):
            return []
        failing = frame[~evaluate_mask(frame, rule.check)]  # type: ignore[arg-type]
        columns = [c for c in columns_in(rule.check) if c in frame.columns]  # type: ignore[arg-type]
        findings = []
        for position, values in failing.iterrows():
            shown = ", ".join(f"{c} = {_show(values[c])}" for c in columns)
            problem = self._card_finding(rule, int(position), f"{rule.message}; card '{values['id']}' has {shown}",
                                         columns[0] if columns else None)
            if problem:
                findings.append(problem)
        return findings

    def _aggregate_rule(self, index: int, rule: RuleSpec, frame: pd.DataFrame) -> list[Problem]:
        groups = [(None, frame)] if rule.per is None else \
            [(key, group) for key, group in frame.groupby(frame[rule.per].fillna(""), sort=True)] \
            if rule.per in frame.columns else []
        if rule.per is not None and rule.per not in frame.columns:
            raise ExpressionError(f"per: unknown column '{rule.per}'")
        findings = []
        for key, group in groups:
            holds, values = evaluate_aggregate(group, rule.total)  # type: ignore[arg-type]
            if not holds:
                shown = ", ".join(f"{label} = {_show(value)}" for label, value in values.items())
                scope = f" for {rule.per} = {_show(key)}" if rule.per else ""
                files = sorted({self.cards[int(i)].source_file for i in group.index})
                at_rule = self.game.where("rules", index)
                findings.append(Problem(f"{rule.message}; {shown}{scope}", file=files[0] if len(files) == 1
                                        else at_rule[0], row=None if len(files) == 1 else at_rule[1],
                                        severity=rule.severity, rule=rule.id))
        return findings

    def _expect_rule(self, index: int, rule: RuleSpec, expect: ExpectSpec, frame: pd.DataFrame) -> list[Problem]:
        for column in (expect.key, expect.column):
            if column not in frame.columns:
                raise ExpressionError(f"expect: unknown column '{column}'")
        findings = []
        keys = frame[expect.key].astype(str)
        for key, wanted in expect.values.items():
            rows = frame[keys == key]
            if not len(rows):
                findings.append(self._at_rule(index, rule, f"{rule.message}; no card has {expect.key} '{key}'"
                                              + _suggest(key, list(keys)), None, "expect", "values", key))
                continue
            values = rows[expect.column]
            got = _number(values.sum()) if isinstance(wanted, (int, float)) else values.iloc[0]
            if got != wanted:
                problem = self._card_finding(rule, int(rows.index[0]), f"{rule.message}; '{key}' has "
                                             f"{expect.column} {_show(got)}, expected {_show(wanted)}",
                                             expect.column)
                findings += [problem] if problem else []
        if expect.complete:
            for position in frame.index[~keys.isin([str(k) for k in expect.values])]:
                problem = self._card_finding(rule, int(position), f"{rule.message}; '{keys[position]}' is not "
                                             f"listed" + _suggest(keys[position], list(expect.values)), expect.key)
                findings += [problem] if problem else []
        return findings

    def _refers_rule(self, rule: RuleSpec, refers: RefersSpec, frame: pd.DataFrame) -> list[Problem]:
        """Every value (or list item) of a column names a deck, or a card by the values of another column."""
        if refers.column not in frame.columns:
            raise ExpressionError(f"refers: unknown column '{refers.column}'")
        if refers.to == "decks":
            targets, what = set(self.game.spec.decks), "deck"
        else:
            if refers.to not in self.frame.columns:
                raise ExpressionError(f"refers: unknown column '{refers.to}'")
            pool = self.frame if not refers.among else self.frame[self.frame["deck"].isin(refers.among)]
            targets, what = set(pool[refers.to].dropna().astype(str)), f"card {refers.to}"
        findings = []
        for position, value in frame[refers.column].items():
            items = value if isinstance(value, list) else [] if _show(value) == "(empty)" else [value]
            for item in items:
                if str(item) not in targets:
                    problem = self._card_finding(rule, int(position), f"{rule.message}; no {what} '{item}'"
                                                 + _suggest(str(item), targets), refers.column)
                    findings += [problem] if problem else []
        return findings

    def _term_rule(self, index: int, rule: RuleSpec, terms: TermSpec, frame: pd.DataFrame) -> list[Problem]:
        findings = []
        if terms.names and terms.column not in frame.columns:
            raise ExpressionError(f"terms: unknown column '{terms.column}'")
        present = set(frame[terms.column].dropna().astype(str)) if terms.names else set()
        for i, name in enumerate(terms.names):
            if name not in present:
                findings.append(self._at_rule(index, rule, f"{rule.message}; no card is called '{name}'"
                                              + _suggest(name, present), None, "terms", "names", i))
        known = _term_words(terms.known) | _term_words(frame["name"].dropna().astype(str)
                                                       if "name" in frame.columns else [])
        for position, values in frame.iterrows():
            card = self.cards[int(position)]
            if (card.source_file, card.source_row) in self.skip_rows:
                continue
            for column in terms.text:
                for word in unknown_terms(values.get(column), known):
                    problem = self._card_finding(rule, int(position), f"{rule.message}; '{word}' is neither a "
                                                 "term of the rulebook nor a card name"
                                                 + _suggest(word.lower(), known), column)
                    findings += [problem] if problem else []
        return findings


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
    spans = parse(text)
    bold = [w for s in spans if s.kind == "text" and s.bold for w in _WORD.findall(s.text)]
    plain = "".join(" " if s.kind == "icon" or s.italic and s.kind == "text" else s.text for s in spans)
    capitals = []
    for sentence in _SENTENCE_END.split(plain):
        words = _WORD.findall(sentence)
        capitals += [w for w in words[1:] if w[0].isupper()]
    return list(dict.fromkeys(w for w in bold + capitals if not _is_known(w, known)))


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _number(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _show(value: Any) -> str:
    if value is None or isinstance(value, float) and math.isnan(value):
        return "(empty)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)

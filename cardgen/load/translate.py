"""A game's cards in another of its languages (`cardgen build GAME --lang fr`).

A card's translatable columns (its deck's `name:` and `text:` columns, and `languages.columns`) take their text
from a column `<column>_<lang>` of the card's own row, or from the translation sheet (`languages.translations`),
a row per card id and column as a translator receives it (a deck's title: its row '<deck>,title'). The original
stays in `Card.original` for the rules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from cardgen.core.errors import CardgenError, Problem
from cardgen.load.data import Card, DataSource, read_table
from cardgen.load.manifest import Game
from cardgen.load.values import fill, unknown_message

_ICON_MARKUP = re.compile(r":[a-z][a-z0-9_/-]*:")  # `:scrap:` names an icon; its word is no term of the text


@dataclass(frozen=True)
class Translation:
    """One translated text and the cell that holds it."""

    text: str
    file: str
    row: int
    column: str
    source: str | None = None  # the original text the translator was given (the sheet's column of the default)


def translate_cards(game: Game, cards: list[Card]) -> list[Problem]:
    """Put the text of `game.lang` into the cards' translatable columns (and the decks' titles) and return the
    findings for that language: a missing translation (the original is printed), a glossary term translated
    another way, a sheet row out of date or naming no card. Without a language, nothing changes."""
    if game.lang is None:
        return []
    sheet, problems = _sheet(game, game.lang)
    if game.spec.languages.translations is not None:
        problems += _titles(game, sheet)
    for card in cards:
        deck = game.spec.decks[card.deck]
        card.original = dict(card.fields)
        for column in dict.fromkeys([deck.name, *deck.text, *game.spec.languages.columns]):
            problems += _translate(game, card, column, sheet)
    known = {card.id for card in cards} | set(game.spec.decks)
    return problems + [Problem(f"the sheet translates '{key[0]}', which is no card id nor deck of the game (an "
                               "old id, or a typo?)", file=found.file, row=found.row, column="id", severity="warning",
                               rule="unknown-translation") for key, found in sheet.items() if key[0] not in known]


def _titles(game: Game, sheet: dict[tuple[str, str], Translation]) -> list[Problem]:
    """Translate the decks' titles (the print sheets' headers, Tabletop Simulator's deck names) from the sheet."""
    problems = []
    for deck_name, deck in game.spec.decks.items():
        found = sheet.get((deck_name, "title"))
        if found is not None:
            deck.title = found.text
        elif deck.title:
            file, row = game.where("decks", deck_name, "title")
            problems.append(Problem(f"no {game.lang} translation of the title '{deck.title}' of deck '{deck_name}'; "
                                    f"add a row '{deck_name},title' to {game.spec.languages.translations}",
                                    file=file, row=row, severity="warning", rule="missing-translation"))
    return problems


def _sheet(game: Game, lang: str) -> tuple[dict[tuple[str, str], Translation], list[Problem]]:
    """The translation sheet as (card id, column) -> its text in `lang`, and the findings of reading it."""
    name = game.spec.languages.translations
    if name is None:
        return {}, []
    table = read_table(game, DataSource(file=name))  # the data files' bounds and path checks
    absent = [c for c in ("id", "column", lang) if c not in table.header]
    if absent:
        raise CardgenError(f"the translation sheet has no column {', '.join(absent)}; expected the columns id, "
                           f"column and one per language ({lang})", file=table.file, row=table.header_line)
    sheet: dict[tuple[str, str], Translation] = {}
    problems = list(table.problems)
    default = game.spec.languages.default
    for row in table.rows:
        key = (row.values.get("id", "").strip(), row.values.get("column", "").strip())  # a YAML record may lack one
        text = row.values.get(lang, "").strip()
        if key in sheet:
            problems.append(Problem(f"card '{key[0]}' column '{key[1]}' is translated twice (also on row "
                                    f"{sheet[key].row}); keep one row", file=table.file, row=row.line,
                                    column=lang, rule="duplicate-translation"))
        elif text:
            sheet[key] = Translation(text, table.file, row.line_of(lang), lang, row.values.get(default))
    return sheet, problems


def _translate(game: Game, card: Card, column: str, sheet: dict[tuple[str, str], Translation]) -> list[Problem]:
    """Translate one column of a card in place; a finding when its translation is missing or strays from the
    glossary."""
    original, separator = _printed(game, card, column)
    if not original.strip():
        return []  # nothing printed, nothing to translate
    lang = str(game.lang)
    found = sheet.get((card.id, column)) or _own_column(card, column, lang)
    if found is None:
        sheet_name = game.spec.languages.translations
        where = f"a row '{card.id},{column}' of {sheet_name}" if sheet_name else f"a column {column}_{lang}"
        return [Problem(f"no {lang} translation of {column} '{original[:40]}' of card '{card.id}'; the "
                        f"{game.spec.languages.default} text is printed: add {where}", file=card.source_file,
                        row=card.source_row, column=column, severity="warning", rule="missing-translation")]
    text, unknown = fill(found.text, game.spec.values)  # the rulebook's numbers, in every language
    card.fields[column] = text if separator is None else [i.strip() for i in text.split(separator) if i.strip()]
    if column == game.spec.decks[card.deck].name:
        card.name = text
    card.translated_at[column] = (found.file, found.row, found.column)
    missing = [Problem(unknown_message(placeholder, game.spec.values), file=found.file, row=found.row,
                       column=found.column, rule="unknown-value") for placeholder in unknown]
    return missing + _stale(game, original, found) + _glossary(game, original, found)


def _printed(game: Game, card: Card, column: str) -> tuple[str, str | None]:
    """A translatable column's text, and its separator for a list column of texts: a list is translated as the
    text it was written as (`Left Lane;Center Lane;Right Lane`), then split again; anything else has no text."""
    value = card.fields.get(column)
    if isinstance(value, str):
        return value, None
    spec = game.fields_of(game.spec.decks[card.deck]).get(column)
    if isinstance(value, list) and spec is not None and spec.item == "str":
        return spec.separator.join(value), spec.separator
    return "", None


def _stale(game: Game, original: str, found: Translation) -> list[Problem]:
    """A finding when the sheet's original text is not the card's any more: the translation may be out of date."""
    if found.source is None or " ".join(found.source.split()) == " ".join(original.split()):
        return []
    default = game.spec.languages.default
    return [Problem(f"the card's text changed since it was translated: it is now '{original[:60]}'; check the "
                    f"translation and copy the new text into the {default} column", file=found.file, row=found.row,
                    column=default, severity="warning", rule="stale-translation")]


def _own_column(card: Card, column: str, lang: str) -> Translation | None:
    """The translation in the card's own row, column `<column>_<lang>` (name_fr)."""
    text = card.fields.get(f"{column}_{lang}")
    if not isinstance(text, str) or not text.strip():
        return None
    return Translation(text.strip(), card.source_file, card.source_row, f"{column}_{lang}")


def _glossary(game: Game, original: str, found: Translation) -> list[Problem]:
    """A finding per glossary term of the original text whose translation the translated text does not use."""
    problems = []
    for term, translations in game.spec.languages.glossary.items():
        wanted = translations.get(str(game.lang))
        if wanted and _says(original, term) and not _says(found.text, wanted):
            problems.append(Problem(f"the glossary translates '{term}' as '{wanted}', but this translation says "
                                    f"it otherwise: '{found.text[:60]}'", file=found.file, row=found.row,
                                    column=found.column, severity="warning", rule="glossary"))
    return problems


def _says(text: str, term: str) -> bool:
    """Whether a text uses a term as a word of its own (in any case, or with a plural ending), icons aside."""
    plain = _ICON_MARKUP.sub(" ", text)
    return re.search(rf"(?<!\w){re.escape(term)}(?:s|x|es)?(?!\w)", plain, re.IGNORECASE) is not None

"""Card text markup, parsed in one place for the card faces, the layout checks and Tabletop Simulator.

The markup (documented in README, "Card text markup"):

- `**bold**` and `*italic*` (nested as `***both***` or `**bold *and italic***`). A `*` opens only when the
  character after it is not a space and closes only when the character before it is not a space, so
  `2 * 3 * 4` stays as written; a star that finds no partner is printed as a star.
- `:name:` draws the icon `name` (a lowercase name: letters, digits, `_` and `-`, starting with a letter).
- a line break (a real one or written as `\\n`) starts a new line, also inside bold or italic text.
- `\\*`, `\\:` and `\\\\` print a literal `*`, `:` and backslash; any other backslash is printed as written.
- spaces are kept as written (two spaces print two spaces wide).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

ICON_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_ICON = re.compile(r":([a-z][a-z0-9_-]*(?:/[a-z0-9_-]+)?):")  # `:lorc/punch:`, game-icons.net's author/name too
_ESCAPABLE = "*:\\"
_BREAKS = ("\r\n", "\n", "\r", "\\n")  # longest first; "\\n" is the two characters a CSV cell can hold

SpanKind = Literal["text", "icon", "break"]


@dataclass(frozen=True)
class Span:
    """A run of text in one style, an inline icon (`text` is its name as written) or a line break."""

    kind: SpanKind
    text: str
    bold: bool = False
    italic: bool = False


@dataclass
class _Stars:
    """A run of `*` in the source and how many of its stars are still unmatched."""

    count: int
    can_open: bool
    can_close: bool
    length: int = 0  # the run's length as written

    def __post_init__(self) -> None:
        self.length = self.count

    def pairs_with(self, closer: _Stars) -> bool:
        """CommonMark's rule of three: `**a*b**` is bold, not italic `a` and then stray stars."""
        both = self.can_close or closer.can_open
        return not both or (self.length + closer.length) % 3 != 0 or \
            (self.length % 3 == 0 and closer.length % 3 == 0)


_Token = Span | _Stars


def parse(text: str) -> list[Span]:
    """Card text as spans (adjacent text of one style merged into one span)."""
    spans: list[Span] = []
    run: list[str] = []  # the text of the last span, while it may still grow

    def close_run() -> None:
        if run:
            last = spans.pop()
            spans.append(Span("text", last.text + "".join(run), last.bold, last.italic))
            run.clear()

    for token, bold, italic in _match_emphasis(_tokenize(text)):
        span = Span("text", "*" * token.count) if isinstance(token, _Stars) else token
        if span.kind == "text" and not span.text:
            continue
        if span.kind == "text" and spans and spans[-1].kind == "text" and \
                (spans[-1].bold, spans[-1].italic) == (bold, italic):
            run.append(span.text)
            continue
        close_run()
        spans.append(Span(span.kind, span.text, bold, italic))
    close_run()
    return spans


_PLAIN = re.compile(r"[^*:\\\r\n]+")


def _tokenize(text: str) -> list[_Token]:
    """Escapes, line breaks, icons and star runs; everything else is plain text."""
    tokens: list[_Token] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            tokens.append(Span("text", "".join(plain)))
            plain.clear()

    pos = 0
    while pos < len(text):
        char = text[pos]
        if match := _PLAIN.match(text, pos):
            plain.append(match.group())
            pos = match.end()
        elif brk := next((b for b in _BREAKS if text.startswith(b, pos)), None):
            flush()
            tokens.append(Span("break", "\n"))
            pos += len(brk)
        elif char == "\\" and pos + 1 < len(text) and text[pos + 1] in _ESCAPABLE:
            plain.append(text[pos + 1])
            pos += 2
        elif char == "*":
            end = pos
            while end < len(text) and text[end] == "*":
                end += 1
            before = text[pos - 1] if pos else " "
            after = text[end] if end < len(text) else " "
            flush()
            tokens.append(_Stars(end - pos, can_open=not after.isspace(), can_close=not before.isspace()))
            pos = end
        elif char == ":" and (icon := _ICON.match(text, pos)):
            flush()
            tokens.append(Span("icon", icon.group(1)))
            pos = icon.end()
        else:
            plain.append(char)
            pos += 1
    flush()
    return tokens


def _match_emphasis(tokens: list[_Token]) -> list[tuple[_Token, bool, bool]]:
    """Pair star runs as CommonMark does (two stars bold, one italic); say each token's style.

    Linear in the text's length: a closer never searches openers that failed a closer of its kind
    before (CommonMark's "openers bottom"), and styles are summed over the pairs in one pass.
    """
    depth = {"bold": [0] * (len(tokens) + 1), "italic": [0] * (len(tokens) + 1)}
    openers: list[int] = []
    bottom: dict[tuple[int, bool], int] = {}  # (closer length mod 3, closer can open) -> no opener below
    for i, token in enumerate(tokens):
        if not isinstance(token, _Stars):
            continue
        key = (token.length % 3, token.can_open)
        while token.can_close and token.count:
            lowest = min(bottom.get(key, 0), len(openers))
            found = next((k for k in range(len(openers) - 1, lowest - 1, -1)
                          if _stars(tokens[openers[k]]).pairs_with(token)), None)
            if found is None:
                bottom[key] = len(openers)
                break
            del openers[found + 1:]  # stars between a pair that found no partner stay literal
            bottom = {k: min(v, len(openers)) for k, v in bottom.items()}
            j = openers[found]
            opener = _stars(tokens[j])
            use = 2 if opener.count >= 2 and token.count >= 2 else 1
            opener.count -= use
            token.count -= use
            style = depth["bold" if use == 2 else "italic"]
            style[j + 1] += 1  # the tokens strictly between the pair
            style[i] -= 1
            if not opener.count:
                openers.pop()
        if token.can_open and token.count:
            openers.append(i)
    styled = []
    bold = italic = 0
    for i, token in enumerate(tokens):
        bold += depth["bold"][i]
        italic += depth["italic"][i]
        styled.append((token, bold > 0, italic > 0))
    return styled


def _stars(token: _Token) -> _Stars:
    assert isinstance(token, _Stars)
    return token


def icon_names(text: str) -> tuple[str, ...]:
    """The icons a card text draws, in order, each once."""
    if ":" not in text:  # no icon possible: skip parsing (a cell may be huge; validation reports that)
        return ()
    return _icon_names(text) if len(text) <= 4096 else _icon_names.__wrapped__(text)


# Validation asks of every text cell of every build; a running watch's rebuild, of the same texts again: each
# (short) text parsed once per process.
@functools.lru_cache(maxsize=1 << 14)
def _icon_names(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(span.text for span in parse(text) if span.kind == "icon"))


def escape(text: str) -> str:
    """Plain text written as markup that prints exactly that text (stars, colons and backslashes escaped)."""
    return re.sub(r"([*:\\])", r"\\\1", text)


def plain_text(spans: list[Span], icon: str = "") -> str:
    """The text of spans without styles; line breaks as newlines and each icon as `icon`."""
    return "".join(icon if s.kind == "icon" else s.text for s in spans)

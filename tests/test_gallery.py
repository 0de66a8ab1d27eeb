"""The HTML gallery lists every card of the build with working image links."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable

from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.core import storage


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "img":
            self.sources.append(dict(attrs)["src"])


def test_gallery_shows_every_card_and_back(tiny_game: Path) -> None:
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    out = tiny_game / "output" / "tiny"
    page = (out / "index.html").read_text()
    parser = _Images()
    parser.feed(page)
    assert sorted(parser.sources) == sorted(["backs/back.png", "cards/main/alpha.png", "cards/main/beta.png",
                                             "cards/main/na.png"])
    assert all((out / src).is_file() for src in parser.sources)
    assert "Fire & Ice <2>" not in page and "Fire &amp; Ice &lt;2&gt;" in page  # card text escaped
    assert "x3" in page and "3 cards, 6 with copies" in page
    assert "the first build of this output folder" in page and "since the previous build" not in page


def test_a_deck_of_one_card_is_counted_in_the_singular(tiny_game: Path) -> None:
    """The deck heading counts its cards as a person would write it: "1 card", never "1 cards"."""
    (tiny_game / "data" / "tiny" / "cards.csv").write_text("name,power,text,count\nAlpha,1,Plain,2\n")
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    page = (tiny_game / "output" / "tiny" / "index.html").read_text()
    assert "1 card, 2 with copies" in page and "1 cards" not in page


def test_gallery_says_when_nothing_changed_since_the_previous_build(tiny_game: Path) -> None:
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1", "--svg"]).exit_code == 0
    # built again (another setting), the cards the same
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    page = (tiny_game / "output" / "tiny" / "index.html").read_text()
    assert "no change since the previous build" in page and "first build" not in page


def test_gallery_shows_findings_at_the_top_and_on_their_card_and_marks_changes(tiny_game: Path) -> None:
    import re

    csv = tiny_game / "data" / "tiny" / "cards.csv"
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    csv.write_text(csv.read_text().replace("Plain", "Plain " + "very long words " * 60) + "Gamma,4,,0\n")
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1", "--force"])
    page = (tiny_game / "output" / "tiny" / "index.html").read_text()
    top = re.search(r'<section id="findings">(.*?)</section>', page, re.S)
    assert top is not None and "text does not fit" in top.group(1) and "gamma" in top.group(1), result.output
    card = re.search(r'<figure class="card changed[^"]*" id="card-na".*?</figure>', page, re.S)
    assert card is not None and "text does not fit" in card.group(0)  # the finding sits on its card too
    assert 'href="#card-na"' in top.group(1)
    assert 'src="previous/cards/main/na.png"' in card.group(0)
    assert (tiny_game / "output" / "tiny" / "previous" / "cards" / "main" / "na.png").is_file()


def test_a_finding_in_a_yaml_record_sits_on_the_card_whose_record_holds_its_line() -> None:
    from types import SimpleNamespace

    from cardgen.core.errors import Problem
    from cardgen.outputs.gallery import _card_of

    def card(file: str, row: int) -> SimpleNamespace:
        return SimpleNamespace(source=SimpleNamespace(file=file, row=row), id=f"{file}:{row}")

    cards = [card("data/g/monsters.yaml", 41), card("data/g/monsters.yaml", 53), card("data/g/monsters.yaml", 60),
             card("data/g/cards.csv", 3)]
    at = _card_of(Problem("hp too high", file="data/g/monsters.yaml", row=56, column="hp"), cards)  # type: ignore[arg-type]
    assert at is cards[1]  # the record starting at line 53 holds line 56
    # a CSV row names its card exactly: a finding on a row with no card sits on none
    assert _card_of(Problem("x", file="data/g/cards.csv", row=4), cards) is None  # type: ignore[arg-type]
    assert _card_of(Problem("x", file="data/g/monsters.yaml", row=2), cards) is None  # type: ignore[arg-type]


def test_the_gallery_page_is_written_in_pieces_that_do_not_grow_with_the_game(tiny_game: Path) -> None:
    """The page of a 10,000-card game (~35 MB) is never held whole by the build's process: it is written a piece
    of about a card at a time, and no piece grows with the number of cards (the figures, the table's data)."""
    from cardgen.outputs.gallery import gallery_parts
    from cardgen.record.record import BuildRecord

    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    out = tiny_game / "output" / "tiny"
    record = BuildRecord.read(out / "build.json")
    many = record.model_copy(update={"cards": [card.model_copy(update={"id": f"{card.id}-{n}"})
                                               for n in range(200) for card in record.cards]})
    small, large = list(gallery_parts(record)), list(gallery_parts(many))
    # (a block of RUN_ITEMS cards' figures or table entries is one run: spliced as one part, see storage.KeptRuns)
    assert all(len(part.parts) <= 2 * storage.RUN_ITEMS for part in large if isinstance(part, storage.Run))
    assert max(map(len, _flat(large))) == max(map(len, _flat(small)))  # the page's head and script, any game's
    assert len(_flat(large)) > 2 * len(many.cards)  # a figure and a table entry per card, at least
    page = "".join(_flat(large))
    assert page.count('<figure class="card') == len(many.cards) and '"id": "alpha-199"' in page
    parser = _Images()
    parser.feed((out / "index.html").read_text())
    assert "".join(_flat(gallery_parts(record))).count("<img") == len(parser.sources)


def _flat(parts: Iterable[Any]) -> list[str]:
    """The page's pieces, each run's in its place."""
    return [piece for part in parts for piece in (_flat(part.parts) if isinstance(part, storage.Run) else [part])]

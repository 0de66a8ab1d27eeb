"""The HTML gallery lists every card of the build with working image links."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from cardgen.cli import main


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
    assert "Fire" not in page and "x3" in page and "3 cards, 6 with copies" in page

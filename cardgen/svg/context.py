"""A game loaded once: its manifest, its data read and converted, its fonts, icons and SVG renderer.

A build loads one `BuildContext` and hands it to validation, then to planning: the manifest is parsed,
the data files read and the font and icon folders scanned once per build. The renderer keeps every
SVG it made, so a card the layout checks rendered is not rendered again to be drawn.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cardgen.load.data import GameData, read_game_data
from cardgen.load.fonts import FontBook
from cardgen.load.icons import IconLibrary
from cardgen.load.manifest import Game, load_game
from cardgen.load.translate import translate_cards
from cardgen.svg.templates import SVGCache, SVGRenderer


@dataclass
class BuildContext:
    """Everything a build of one game reads, loaded once."""

    game: Game
    data: GameData
    fonts: FontBook
    icons: IconLibrary
    renderer: SVGRenderer
    out_root: Path | None = None
    draft: bool = False  # `build --draft`: a missing image is a placeholder and a warning, not an error

    @property
    def root(self) -> Path:
        """The workspace folder."""
        return self.game.root

    @classmethod
    def load(cls, root: Path, name: str, out_root: Path | None = None, with_data: bool = True,
             draft: bool = False, lang: str | None = None) -> BuildContext:
        """Load a game of a workspace: a CardgenError when its manifest is broken.

        Problems of the data do not stop loading; they are in `data.problems`. With `out_root`, SVGs
        rendered by earlier builds under it are reused (see `SVGCache`). Without data (`with_data` false), the
        context renders cards given to it (see `cardgen.validate.layout.render_share`). With `lang`, the cards
        hold their text in that language (see `cardgen.load.translate`).
        """
        game = load_game(root, name, lang)
        fonts = FontBook(root / "fonts")
        icons = IconLibrary(root, game.spec.icons)
        data = read_game_data(game) if with_data else GameData([], [])
        data.problems += translate_cards(game, data.cards)  # before the cache's key: it holds the decks' titles
        cache = SVGCache(out_root, game, draft) if out_root is not None else None
        return cls(game, data, fonts, icons, SVGRenderer(game, fonts, icons, cache, draft), out_root, draft)

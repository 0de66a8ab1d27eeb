"""The gallery in a real browser (Debian's headless chromium): every image loads, the deck filter and the
search work, and under `cardgen serve` a save rebuilds and is pushed into the page (its changed images swapped in
place), or shows an error banner."""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it "
                                "with apt-get when run as root); the gallery's browser tests need it")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-extensions", "--user-data-dir={profile}"]


class _Page(HTMLParser):
    """The body's data attributes and, per card figure, whether it is hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str] = {}
        self.cards: dict[str, bool] = {}
        self.banner: tuple[bool, str] | None = None
        self._in_banner = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "body":
            self.body = {k: v or "" for k, v in found.items()}
        if tag == "figure" and "card" in (found.get("class") or "").split():
            self.cards[found["id"].removeprefix("card-")] = "hidden" in found
        if tag == "div" and found.get("id") == "banner":
            self.banner, self._in_banner = ("hidden" in found, ""), True

    def handle_data(self, data: str) -> None:
        if self._in_banner and self.banner is not None:
            self.banner = (self.banner[0], self.banner[1] + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self._in_banner = False


def _dom(url: str, tmp_path: Path, wait_ms: int = 3000) -> _Page:
    """The page's DOM after its scripts ran, as headless chromium dumps it."""
    flags = [f.format(profile=tmp_path / "profile") for f in FLAGS]
    result = subprocess.run([CHROMIUM, *flags, f"--virtual-time-budget={wait_ms}", "--dump-dom", url],
                            capture_output=True, text=True, timeout=120)
    page = _Page()
    page.feed(result.stdout)
    assert page.body, f"chromium printed no page: {result.stderr[-500:]}"
    return page


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new game of two decks, built twice with one card changed in between, with guides."""
    root = tmp_path_factory.mktemp("gallery")
    assert CliRunner().invoke(main, ["--root", str(root), "init", "quest", "--decks", "heroes,foes"]).exit_code == 0
    assert CliRunner().invoke(main, ["--root", str(root), "build", "quest", "-j", "1"]).exit_code == 0
    cards = root / "data" / "quest" / "heroes.csv"
    cards.write_text(cards.read_text().replace("Restore **2**", "Restore **3**"))
    result = CliRunner().invoke(main, ["--root", str(root), "build", "quest", "-j", "1", "--guides"])
    assert result.exit_code == 0, result.output
    return root


def test_every_image_loads_and_changed_cards_show_their_previous_image(built: Path, tmp_path: Path) -> None:
    page = _dom((built / "output" / "quest" / "index.html").as_uri(), tmp_path)
    assert page.body.get("data-images-broken") == ""
    # 8 faces, 1 back shared by both decks (shown in each deck), 1 previous image of the changed card
    assert int(page.body["data-images-loaded"]) == 8 + 2 + 1
    html = (built / "output" / "quest" / "index.html").read_text()
    assert re.search(r'class="card changed" id="card-healing-potion"', html)
    assert 'src="previous/cards/heroes/healing-potion.png"' in html
    assert (built / "output" / "quest" / "guides" / "cards" / "foes" / "foes-scout.png").is_file()


def test_deck_filter_and_search_in_the_browser(built: Path, tmp_path: Path) -> None:
    url = (built / "output" / "quest" / "index.html").as_uri()
    everything = _dom(url, tmp_path)
    assert len(everything.cards) == 8 and not any(everything.cards.values())
    foes = _dom(url + "#deck=foes", tmp_path)
    assert sorted(c for c, hidden in foes.cards.items() if not hidden) == [
        "foes-fireball", "foes-healing-potion", "foes-iron-shield", "foes-scout"]
    search = _dom(url + "#q=dented", tmp_path)  # words of the flavor text find both Iron Shields
    assert sorted(c for c, hidden in search.cards.items() if not hidden) == ["foes-iron-shield", "iron-shield"]
    both = _dom(url + "#deck=heroes&q=shield", tmp_path)
    assert [c for c, hidden in both.cards.items() if not hidden] == ["iron-shield"]


# A hash of an image's pixels as the page drew them (same origin: the canvas may be read).
PIXELS = """(() => {{ const image = document.querySelector({selector!r});
  const canvas = document.createElement("canvas");
  canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
  const context = canvas.getContext("2d"); context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, canvas.width, canvas.height).data.reduce((a, b) => (a * 31 + b) | 0, 7); }})()"""
SHIELD = "#card-foes-iron-shield .frame img"


@contextmanager
def _served(root: Path) -> Iterator[tuple[Any, Any]]:
    """`cardgen serve` of the game `quest` in `root` (building with one job), and a headless Chromium on its page."""
    from bench.chromium import Chromium
    from cardgen.build.build import BuildOptions, build_game
    from cardgen.commands.serve import serve_game
    from cardgen.outputs import stage_names

    def build() -> None:
        build_game(root, "quest", BuildOptions(root / "output", 1), None, stage_names())

    running = serve_game(root, "quest", root / "output" / "quest", build, say=lambda text: None)
    try:
        with Chromium() as browser:
            browser.navigate(running.url)
            yield running, browser
    finally:
        running.stop()


def test_serve_pushes_a_rebuild_into_the_page_without_loading_it_again(built: Path) -> None:
    """Under `cardgen serve`, in a real Chromium driven through DevTools: a save that changes one card's text swaps
    that card's image (new pixels, a cache-busted URL) and its caption in place, with no page load (the page's own
    state and the other cards' image elements survive); a broken save shows the banner; a card added loads the page
    again."""
    with _served(built) as (running, browser):
        _wait(lambda: running.state.pages == 1, "the page to listen for serve's news")
        before = browser.evaluate(PIXELS.format(selector=SHIELD))
        browser.evaluate("window.kept = 1; document.querySelector('#card-scout .frame img').kept = 1")
        cards = built / "data" / "quest" / "foes.csv"
        cards.write_text(cards.read_text().replace("Dented but trusty.", "Battered and bent."))
        browser.wait_for("document.getElementById('card-foes-iron-shield')?.dataset.search.includes('battered')",
                         90)
        assert browser.evaluate("[window.kept, document.querySelector('#card-scout .frame img').kept]") == [1, 1]
        assert browser.evaluate("document.querySelector('#card-foes-iron-shield').classList.contains('changed')")
        src = browser.wait_for(f"(() => {{ const image = document.querySelector('{SHIELD}'); return image.complete "
                               "&& image.naturalWidth && image.getAttribute('src').includes('?v=') && "
                               "image.getAttribute('src') })()", 30)
        assert src == running.state.changed["cards/foes/foes-iron-shield.png"], (src, running.state.changed)
        assert browser.evaluate(PIXELS.format(selector=SHIELD)) != before
        assert browser.loads == 1 and running.state.page_loads == 1

        cards.write_text(cards.read_text().replace("name,cost", "name,cost,cost"))  # a broken header
        banner = browser.wait_for("(() => { const b = document.getElementById('banner'); "
                                  "return !b.hidden && b.textContent.includes('broke') && b.textContent })()", 90)
        assert "broke the build" in banner and "cost" in banner
        assert browser.loads == 1

        fixed = cards.read_text().replace("name,cost,cost", "name,cost")
        cards.write_text(fixed + "Foes Ogre,4,Ally,spyglass,Smash.,,1\n")  # a card more: the page loads again
        browser.wait_for_loads(2, 90)
        assert browser.evaluate("document.querySelector('#card-foes-ogre .frame img').naturalWidth") > 0
        assert browser.loads == 2 and running.state.page_loads == 2
        assert browser.evaluate("window.kept") is None


def _wait(condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def test_serve_on_a_broken_game_shows_its_problems_and_the_gallery_once_a_save_fixes_it(tmp_path: Path) -> None:
    """The page served before the first good build listens for serve's news too: it shows the problems, then loads
    the gallery once a save has fixed them."""
    assert CliRunner().invoke(main, ["--root", str(tmp_path), "init", "quest"]).exit_code == 0
    cards = tmp_path / "data" / "quest" / "cards.csv"
    good = cards.read_text()
    cards.write_text(good.replace("Fireball,3,", "Fireball,three,"))
    with _served(tmp_path) as (running, browser):
        # the problems and the failed build, once no build runs (a page may see one that starts meanwhile)
        failed = "document.getElementById('state').textContent.includes('build failed')"
        assert "three" in browser.wait_for(f"{failed} && document.getElementById('error').textContent")
        cards.write_text(good)
        browser.wait_for_loads(2, 90)
        assert browser.wait_for("document.body.dataset.built") == running.state.built

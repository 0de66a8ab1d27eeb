"""The Jinja environment and the per-card context: SVG text for every face and back."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import posixpath
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import jinja2
import jinja2.bccache
import jinja2.meta
from jinja2.sandbox import SecurityError

from cardgen.core.boxes import GuideBox, box_as_row
from cardgen.core.errors import CardgenError, Problem, relative, saved_meanwhile
from cardgen.core.storage import Cache, KeptByGame, file_digest, note_read, read_noted
from cardgen.load.data import Card
from cardgen.load.fonts import FontBook, families_in_svg
from cardgen.load.icons import IconLibrary
from cardgen.load.manifest import CardSize, Game
from cardgen.svg.helper_table import HELPERS
from cardgen.svg.helpers import PLACEHOLDER_MARK, CardHelpers, Geometry
from cardgen.svg.sandbox import TemplateLimit, TemplateSandbox, render_bounded


@dataclass
class RenderedSVG:
    """A card face or back as SVG text, with the files it draws and what went wrong softly."""

    key: str
    svg: str
    files: list[Path] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    boxes: list[GuideBox] = field(default_factory=list)  # where each helper drew, for layout guides
    families: list[str] = field(default_factory=list)  # the font families it names (kept: found by regex)


class SVGEnvironment(TemplateSandbox):
    """Sandboxed Jinja (see sandbox.py) where `./name` and `../name` in extends, include and import are
    relative to the current template.

    That lets the templates of a deck definition kept in a subfolder (`templates/common/standard-deck/`)
    name their partials without knowing where the folder is.
    """

    def join_path(self, template: str, parent: str) -> str:
        """The name of a template referenced from `parent`."""
        if template.startswith(("./", "../")):
            return posixpath.normpath(posixpath.join(posixpath.dirname(parent), template))
        return template


MAX_TEMPLATE_BYTES = 5_000_000  # a template file: the SVG a card makes is bounded at 5,000,000 characters too


class ProjectLoader(jinja2.FileSystemLoader):
    """Templates from the game's and the shared template folders, never a file outside the project (a link)."""

    def __init__(self, folders: list[str], root: Path, bundled: Path, keyed: dict[Path, str] | None = None) -> None:
        super().__init__(folders)
        self.allowed = (root.resolve(), bundled.resolve())
        # each template file by the digest of the content its renders are keyed by (`SVGRenderer.keyed`): one read
        # as other bytes is not rendered (a save since the key was made would be kept under the old content's key)
        self.keyed = keyed if keyed is not None else {}

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
        """The source of a template (read as Jinja's `FileSystemLoader` reads it, its bytes noted for the no-change
        check: `storage.read_noted`); a CardgenError when it is a link to a file outside the project (and outside
        cardgen's bundled templates)."""
        path = self._found(template)
        if path is None:
            return super().get_source(environment, template)  # (its TemplateNotFound)
        filename = os.path.normpath(path)
        if not any(Path(filename).resolve().is_relative_to(folder) for folder in self.allowed):
            raise CardgenError(f"template '{template}' is a link to {Path(filename).resolve()}, outside the "
                               "project; copy the file itself into templates/",
                               file=relative(filename, self.allowed[0]))
        data = read_noted(path)
        digest = hashlib.sha256(data).hexdigest()
        if self.keyed.get(path, digest) != digest:
            raise CardgenError(saved_meanwhile(f"template '{template}'"), file=relative(filename, self.allowed[0]))
        source = io.TextIOWrapper(io.BytesIO(data), encoding=self.encoding).read()
        mtime = os.path.getmtime(filename)

        def uptodate() -> bool:
            """Whether the file still has the time it had when read (Jinja's test for a template it holds), and the
            content the renders are keyed by."""
            try:
                return os.path.getmtime(filename) == mtime and self.keyed.get(path, digest) == digest
            except OSError:
                return False

        return source, filename, uptodate

    def _found(self, template: str) -> Path | None:
        """The file of a template (the first folder holding it), None when there is none; refused when it is over
        MAX_TEMPLATE_BYTES, before it is read: the main template, and every one it extends, includes or imports,
        comes through here."""
        for folder in self.searchpath:
            path = Path(folder, *jinja2.loaders.split_template_path(template))
            if path.is_file():
                size = path.stat().st_size
                if size > MAX_TEMPLATE_BYTES:
                    raise CardgenError(f"template '{template}' is {size / 1e6:,.1f} MB; the limit is "
                                       f"{MAX_TEMPLATE_BYTES / 1e6:,.0f} MB (is it an image saved as a template? "
                                       "link big art with image() instead)", file=relative(path, self.allowed[0]))
                return path
        return None


class KeptBytecode(jinja2.BytecodeCache):
    """Templates compiled by earlier builds, kept in the user's own cache folder (never the output folder, which
    may be shared or synced: what is kept here is code cardgen runs). Compiling the templates of one card was
    15-20 ms of a one-card edit.

    An entry is keyed by the template's name and file and by everything that shapes the compiled code: cardgen's
    code (`bundled.code_digest` of this module's closure: the sandbox's code generator adds the bounds, this module
    sets the environment's options: autoescape, the undefined type, whitespace control), Jinja's and Python's
    versions.
    Jinja then checks the entry holds the same template source (a checksum) and its own bytecode version;
    the entry is sealed and verified like every cache entry (a damaged one is compiled again).
    """

    def __init__(self, store: Cache) -> None:
        from cardgen.core.bundled import code_digest

        self.store = store
        self.salt = hashlib.sha256(f"{code_digest(__name__)}\0{jinja2.__version__}\0{sys.version}".encode()).hexdigest()

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        """The key of a template's entry (see the class)."""
        return hashlib.sha256(f"{self.salt}\0{name}\0{filename}".encode()).hexdigest()[:32]

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Fill a bucket from its entry, when there is one that verifies."""
        data = self.store.read_bytes(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Keep a bucket's compiled code (best effort)."""
        self.store.put_bytes(bucket.key, bucket.bytecode_to_string())


def _kept_bytecode() -> KeptBytecode | None:
    from cardgen.core.storage import user_store

    store = user_store("templates-compiled", ".bc")
    return KeptBytecode(store) if store is not None else None


def make_environment(game: Game, keyed: dict[Path, str] | None = None) -> SVGEnvironment:
    """Sandboxed Jinja for SVG: XML autoescaping, undefined names are errors; game, shared and bundled templates;
    templates compiled once and kept (`KeptBytecode`); `keyed`: see `ProjectLoader.keyed`."""
    return project_environment(game.root, game.template_dir, keyed)


def project_environment(root: Path, template_dir: Path, keyed: dict[Path, str] | None = None) -> SVGEnvironment:
    """`make_environment` of a game whose templates are in `template_dir`, in the workspace `root`."""
    from cardgen.core.bundled import TEMPLATES_DIR

    folders = [str(template_dir), str(root / "templates"), str(TEMPLATES_DIR)]
    return SVGEnvironment(loader=ProjectLoader(folders, root, TEMPLATES_DIR, keyed), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                          bytecode_cache=_kept_bytecode())


# The most templates a first build's worker reads ahead (`templates_ahead`): a game's own folder holds its few (a
# generated game: 9).
AHEAD_AT_MOST = 64


def templates_ahead(template_dir: Path) -> list[str]:
    """The names of the templates of a game's own folder (`templates/<game>/`, its SVG files) that a first build's
    render worker scans and compiles ahead (`references.scan_ahead`, `compile_ahead`): at most AHEAD_AT_MOST."""
    if not template_dir.is_dir():
        return []
    return sorted(path.relative_to(template_dir).as_posix() for path in template_dir.rglob("*.svg"))[:AHEAD_AT_MOST]


def compile_ahead(root: Path, template_dir: Path) -> None:
    """Compile the templates of a game's own folder (`templates_ahead`) into the user's cache of compiled templates
    (`KeptBytecode`), where none is kept yet, so that the build that renders them takes them from there. A first
    build's render worker does it as it starts, while the build loads the game and scans its templates: with an
    empty cache, compiling them was ~40 ms of the build's way to its first card (9 templates of a generated game),
    on a core it leaves idle meanwhile. Nothing is done without a user cache; a template that fails to compile is
    left to the build, which says why."""
    environment = project_environment(root, template_dir)
    if environment.bytecode_cache is None:
        return
    for name in templates_ahead(template_dir):
        try:
            environment.get_template(name)  # (from the tree `scan_ahead` parsed, when it did)
        except Exception:  # noqa: BLE001,S112  (a syntax error, a file gone) the build meets it and says why
            continue


def template_file(game: Game, name: str) -> Path:
    """The file a template name stands for: in templates/<game>/, else templates/, else cardgen's own (as Jinja)."""
    from cardgen.core.bundled import TEMPLATES_DIR

    for folder in (game.template_dir, game.root / "templates"):
        if (folder / name).is_file():
            return folder / name
    bundled = TEMPLATES_DIR / name
    return bundled if bundled.is_file() else game.root / "templates" / name


def _template_line(template_name: str) -> int | None:
    """The template line being rendered when an error was raised (Jinja maps frames to it)."""
    tb = sys.exc_info()[2]
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(template_name):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def syntax_message(exc: jinja2.TemplateSyntaxError) -> str:
    """Jinja's message for a syntax error, with a hint for the habits it comes from (`.35` for 0.35)."""
    lines = (exc.source or "").splitlines()
    line = lines[exc.lineno - 1] if exc.source and 0 < exc.lineno <= len(lines) else ""
    number = re.search(r"(?<![\w.)\]])\.(\d+)", line)
    if number and "{" in line:
        digits = number.group(1)
        return f"{exc.message}: write 0.{digits}, not .{digits} (a number needs a digit before its point)"
    return str(exc.message)


def _in_render(problem: Problem, where: str, shown: str, line: int | None) -> Problem:
    """A helper's problem placed at its template line; said once per template, not per card, when no
    card is to blame (a missing font)."""
    message = problem.message if problem.rule == "missing-font" else f"{problem.message} (while rendering {where})"
    return dataclasses.replace(problem, message=message, file=problem.file or shown, row=problem.row or line)


def render_inputs(game: Game, keyed: dict[Path, str] | None = None) -> str:
    """A digest of everything every render of a game reads but its card: the code that loads and renders it (the
    closure of `svg/context.py`) and cardgen's bundled files, the
    manifest, the language and the decks' titles in it, and every file under the workspace's own templates/, icons/
    and fonts/ (by content); `keyed` is given the digest of each template and icon file (see `SVGRenderer.keyed`)."""
    from cardgen.core.bundled import bundle_digest, code_digest, own_folders

    digest = hashlib.sha256(f"{code_digest('cardgen.svg.context')}\0{bundle_digest()}\0".encode())
    digest.update(game.settings_digest.encode())  # (as the game was loaded from them, not as they are now)
    digest.update(json.dumps([game.lang, [deck.title for deck in game.spec.decks.values()]]).encode())
    fonts = game.root / "fonts"
    for folder in own_folders(game.root, ("templates", "icons", "fonts")):
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                content = file_digest(path)
                if folder != fonts:  # the renders kept are of this content: a template or icon read otherwise is not
                    note_read(path, content, whole=False)  # taken for built (fonts stay unknown: read in C too)
                    if keyed is not None:
                        keyed[path] = content
                digest.update(f"{path.relative_to(game.root)}:{content}".encode())
    return digest.hexdigest()


class SVGCache(KeptByGame):
    """Rendered SVGs kept on disk between builds, keyed by everything a render reads.

    The key covers the manifest, every file under templates/, icons/ and fonts/ (by content), the
    bundled fonts, icons and partials, the card's fields, copies and source row, the deck and the
    template name. Images a card draws are named in its SVG by path; their content is part of the
    PNG cache key, not this one.

    One sealed entry per game in the output root's cache (`svg/`), read once and written once per build
    (`save`), holding the renders of that build only: writing one file per card (and its seal) cost a cold
    build of 1,000 cards about a second before the first card was drawn. A damaged or unreadable entry is
    ignored (every card is rendered again), never trusted. An edit's few renders in a process that builds again
    stay in memory (`KeptByGame.deferred`).
    """

    deferred = True

    def __init__(self, out_root: Path, game: Game, draft: bool = False) -> None:
        super().__init__(out_root, "svg", game.name, box_as_row)
        self.keyed: dict[Path, str] = {}  # (see `SVGRenderer.keyed`)
        self.base = render_inputs(game, self.keyed) + ("|draft" if draft else "")  # a draft draws missing images
        # Each render's key by what `SVGRenderer.done` keeps it by (a card's id names one card of the game loaded):
        # the render and the layout check's findings both ask for it, ~20 us each (the fields in JSON, hashed).
        self._keys: dict[tuple[str, str, str | None], str] = {}
        self._files: set[str] = set()  # the image files renders draw that this build found (see `get`)

    def key(self, template_name: str, deck: str, card: Card | None) -> str:
        """The cache key of one render (kept with the card: an unchanged card of a process that builds again is the
        last build's object, see `Card.made`)."""
        memo = _memo(template_name, deck, card)
        known = self._keys.get(memo)
        if known is None:
            made = card.made.get(("svg", template_name, deck)) if card is not None else None
            if made is not None and made[0] == self.base:
                known = made[1]
            else:
                about = None if card is None else [card.id, card.name, card.copies, card.fields, card.source_file,
                                                   card.source_row]
                text = json.dumps([self.base, template_name, deck, about], sort_keys=True, default=str)
                known = hashlib.sha256(text.encode()).hexdigest()[:32]
                if card is not None:  # (one a template and deck: what the card keeps stays bounded)
                    card.made["svg", template_name, deck] = (self.base, known)
            self._keys[memo] = known
        return known

    def get(self, key: str, name: str, card: Card | None = None) -> RenderedSVG | None:
        """A cached render whose image files all still exist, or None (the render made of the entry is kept with
        `card`, for the next build of a process that builds again)."""
        data = self.kept.get(key)
        if not isinstance(data, dict):
            return None
        made = card.made.get(("rendered", name)) if card is not None else None
        try:
            if not self.present(data["files"]):
                return None  # render again: that reports a missing image properly
            if made is not None and made[0] == key and made[1] is data:  # the entry's value it was made of
                rendered = made[2]
            else:
                boxes = [box if isinstance(box, GuideBox) else GuideBox(*box) for box in data["boxes"]]
                rendered = RenderedSVG(name, str(data["svg"]), [Path(f) for f in data["files"]],
                                       [Problem(**w) for w in data["warnings"]], boxes, data["families"])
                data["boxes"] = boxes  # held once, by the render and the entry to save
        except (TypeError, KeyError, ValueError):
            return None  # none, or not what this cardgen writes
        if card is not None:
            card.made["rendered", name] = (key, data, rendered)
        self.used[key] = data
        return rendered

    def present(self, files: list[str]) -> bool:
        """Whether the image files a render draws all exist, each looked at once a build (a game's cards draw
        the same few files)."""
        for file in files:
            if file not in self._files:
                if not Path(file).is_file():
                    return False
                self._files.add(file)
        return True

    def served(self, key: str, value: Any) -> bool:
        """Whether the render of `key` is still kept as `value` (this object, which the build that took it held), the
        image files it draws there: then noted as used, as `get` notes it."""
        kept = self.kept.get(key)
        if kept is not value or not isinstance(kept, dict) or not self.present(kept["files"]):
            return False
        self.used[key] = value
        return True

    def put(self, key: str, rendered: RenderedSVG) -> None:
        """Note a render, to keep for the next build (see `save`)."""
        self.used[key] = {"svg": rendered.svg, "files": [str(f) for f in rendered.files],
                          "warnings": [dataclasses.asdict(w) for w in rendered.warnings], "boxes": rendered.boxes,
                          "families": rendered.families}


def subject(template_name: str, deck: str, card: Card | None) -> str:
    """What a render draws, as messages name it: `card 'x'`, `the back of card 'x'` or `the back of deck 'd'`."""
    if card is None:
        return f"the back of deck '{deck}'"
    return f"{'the back of ' if template_name != card.face_template else ''}card '{card.id}'"


def _memo(template_name: str, deck: str, card: Card | None) -> tuple[str, str, str | None]:
    """What `SVGRenderer.done` keeps a render by."""
    return template_name, deck, card.id if card else None


def card_reads(env: jinja2.Environment, source: str) -> tuple[bool, list[str | None]]:
    """Whether a template's source names `card` by itself, and the templates it extends, includes or imports, as
    written (None: named by a value). Kept in the user's cache by the source's text, the code that parses it
    (this module's closure sets the environment's syntax) and Jinja's version: parsing and analysing a game's
    back templates was 6-60 ms of every build of the example games, a one-card edit's included."""
    from cardgen.core.bundled import code_digest
    from cardgen.core.storage import user_store

    store = user_store("template-reads", ".json")
    key = hashlib.sha256(json.dumps([code_digest(__name__), jinja2.__version__, source]).encode()).hexdigest()[:32]
    kept = store.read_json(key) if store is not None else None
    if (isinstance(kept, list) and len(kept) == 2 and isinstance(kept[0], bool) and isinstance(kept[1], list)
            and all(name is None or isinstance(name, str) for name in kept[1])):
        return kept[0], kept[1]
    tree = env.parse(source)
    reads = "card" in jinja2.meta.find_undeclared_variables(tree), list(jinja2.meta.find_referenced_templates(tree))
    if store is not None:
        store.put_json(key, list(reads))
    return reads


class SVGRenderer:
    """Renders card faces and backs of one game to SVG text."""

    def __init__(self, game: Game, fonts: FontBook, icons: IconLibrary, cache: SVGCache | None = None,
                 draft: bool = False) -> None:
        self.game, self.fonts, self.icons, self.draft = game, fonts, icons, draft
        self.done: dict[tuple[str, str, str | None], RenderedSVG] = {}  # renders made by this renderer
        self.cache = cache
        # Told of each render made now, not found in the caches (template, deck, card, render): a rebuild has the
        # cards its validation renders drawn while it validates on (see `build.early`).
        self.on_made: Callable[[str, str, Card | None, RenderedSVG], None] | None = None
        # Each template and icon file of the workspace by the digest of the content the renders are keyed by
        # (`render_inputs`): the loader and the icons refuse to render one read as other bytes (saved after the key
        # was made, here or in a helper process), which would be kept under that key
        self.keyed: dict[Path, str] = cache.keyed if cache is not None else {}
        self.env = make_environment(game, self.keyed)
        icons.keyed = self.keyed
        self._shown: dict[str, str] = {}
        self._reads_card: dict[str, bool] = {}

    def shown(self, template_name: str) -> str:
        """A template's file as messages show it (relative to the workspace), found once per template: finding
        and resolving it for every card was ~0.2 s of validating 1,000 cards."""
        if template_name not in self._shown:
            self._shown[template_name] = relative(template_file(self.game, template_name), self.game.root)
        return self._shown[template_name]

    def reads_card(self, template_name: str) -> bool:
        """Whether a template, or one it extends, includes or imports, names `card`: a back that does is rendered
        for each card (and one that does not once per deck). Known once per template, from its source."""
        if template_name not in self._reads_card:
            self._reads_card[template_name] = self._names_card(template_name, set())
        return self._reads_card[template_name]

    def _names_card(self, template_name: str, seen: set[str]) -> bool:
        if template_name in seen:
            return False
        seen.add(template_name)
        try:
            source = self.env.loader.get_source(self.env, template_name)[0] if self.env.loader else ""
            names_card, referenced = card_reads(self.env, source)
        except (jinja2.TemplateError, CardgenError):
            return False  # said by the render, at its template and line
        # a template named by a value ({% include deck.options.art %}) may read it: rendered per card to be sure
        return names_card or any(name is None or self._names_card(self.env.join_path(name, template_name), seen)
                                 for name in referenced)

    def render(self, template_name: str, key: str, deck: str, card: Card | None) -> RenderedSVG:
        """Render one template for a card (or for a deck's back when card is None), from the caches if there."""
        earlier = self.done.get(_memo(template_name, deck, card))
        if earlier is not None:
            return earlier
        if self.cache is None:
            return self.keep(template_name, deck, card, self.make(template_name, key, deck, card))
        cache_key = self.cache.key(template_name, deck, card)
        cached = self.cache.get(cache_key, key, card)
        if cached is None:
            made = self.keep(template_name, deck, card, self.make(template_name, key, deck, card), cache_key)
            if self.on_made is not None:
                self.on_made(template_name, deck, card, made)
            return made
        self.done[_memo(template_name, deck, card)] = cached
        return cached

    def faces_done(self, cards: Iterable[tuple[str, str, str]]) -> list[RenderedSVG | None]:
        """The render this renderer made or took of each (face template, deck, card id), None where it has none yet
        (looked up by C loops: see `plan.plan_build`)."""
        return list(map(self.done.get, cards))

    def kept(self, template_name: str, deck: str, card: Card | None) -> bool:
        """Whether a render is at hand without rendering: made by this renderer, or kept by the last build (a kept
        render whose image files are gone is rendered again all the same: see `SVGCache.get`)."""
        if _memo(template_name, deck, card) in self.done:
            return True
        return self.cache is not None and bool(self.cache.kept) and \
            self.cache.key(template_name, deck, card) in self.cache.kept

    def took(self, template_name: str, deck: str, card: Card | None, rendered: RenderedSVG) -> None:
        """Note a render served from the cache by another way than `render` (see `SVGCache.served`) as this
        renderer's."""
        self.done[_memo(template_name, deck, card)] = rendered

    def keep(self, template_name: str, deck: str, card: Card | None, rendered: RenderedSVG,
             cache_key: str | None = None) -> RenderedSVG:
        """Keep a render made now (by `make`, here or in another process) as this renderer's and the cache's
        (`cache_key`: its key in the cache, when known already)."""
        if self.cache is not None and PLACEHOLDER_MARK not in rendered.svg:  # drawn again once the art is there
            self.cache.put(cache_key or self.cache.key(template_name, deck, card), rendered)
        self.done[_memo(template_name, deck, card)] = rendered
        return rendered

    @property
    def inputs(self) -> str:
        """What every render reads but its card (see `render_inputs`): the cache's base when there is a cache."""
        return self.cache.base if self.cache is not None else render_inputs(self.game, self.keyed)

    def make(self, template_name: str, key: str, deck: str, card: Card | None) -> RenderedSVG:
        """Render one template for a card (or a deck's back) now, neither looked up in nor kept by the caches."""
        size = self.game.deck_size(self.game.spec.decks[deck])
        helpers = CardHelpers(self.game, self.fonts, self.icons, size, card, subject(template_name, deck, card),
                              self.draft)
        shown = self.shown(template_name)
        where = helpers.label + (f" ({card.source_file}:{card.source_row})" if card else "")
        try:
            template = self.env.get_template(template_name)
            svg = render_bounded(self.env, template, self._context(helpers, deck, card, size))
        except jinja2.TemplateSyntaxError as exc:
            raise CardgenError(f"template syntax error: {syntax_message(exc)}",
                               file=relative(exc.filename or shown, self.game.root), row=exc.lineno) from None
        except jinja2.TemplateNotFound as exc:
            raise CardgenError(f"template '{exc.name}' not found in templates/{self.game.name}/ or templates/",
                               file=relative(self.game.manifest_path, self.game.root)) from None
        except jinja2.UndefinedError as exc:
            raise CardgenError(f"{exc.message} while rendering {where}", file=shown,
                               row=_template_line(template_name)) from None
        except (TemplateLimit, SecurityError, OverflowError, RecursionError) as exc:
            # a template reaching for Python's internals, or past a bound of the sandbox
            message = str(exc) if isinstance(exc, TemplateLimit) else f"{type(exc).__name__}: {exc}"
            raise CardgenError(f"{message} (while rendering {where})", file=shown,
                               row=_template_line(template_name)) from None
        except TypeError as exc:
            if "str" not in str(exc):
                raise
            raise CardgenError(f"{exc} (while rendering {where}): a value used as a number is text; declare its "
                               "column's type under fields: in game.yaml (e.g. power: int)", file=shown,
                               row=_template_line(template_name)) from None
        except CardgenError as exc:
            line = _template_line(template_name)
            raise CardgenError([_in_render(p, where, shown, line) for p in exc.problems]) from None
        families = sorted(families_in_svg(svg))
        self._check_fonts(families, shown)
        return RenderedSVG(key, svg, helpers.files, helpers.warnings, helpers.boxes, families)

    def _context(self, helpers: CardHelpers, deck: str, card: Card | None, size: CardSize) -> dict[str, Any]:
        spec = self.game.spec
        deck_spec = spec.decks[deck]
        context: dict[str, Any] = {
            "game": {"name": self.game.name, "title": spec.title, "version": spec.version,
                     "description": spec.description, "font": spec.font,
                     "lang": self.game.lang or spec.languages.default},
            "deck": {"name": deck, "title": deck_spec.title or deck.replace("_", " ").title(),
                     "options": deck_spec.options},
            "geo": Geometry(size),
            "colors": dict(spec.colors),
            "values": dict(spec.values),
        }
        context.update({helper.name: helper.bound(helpers) for helper in HELPERS})
        if card is not None:
            context["card"] = {**card.fields, "id": card.id, "name": card.name, "copies": card.copies}
        return context

    def _check_fonts(self, families: list[str], shown: str) -> None:
        for family in families:
            try:
                self.fonts.face(family)
            except CardgenError as exc:
                raise CardgenError(dataclasses.replace(exc.problems[0], file=shown)) from None

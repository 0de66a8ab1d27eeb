"""Layer 3, references: templates, partials, fonts, icons and images exist and are safe to draw,
every field a template uses exists in the data, and every data column is used by something.

Templates are parsed, not rendered: the fields, icons, images and fonts they name are read from
Jinja's syntax tree, so a problem is reported at the template line that causes it.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from jinja2 import meta, nodes

from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.core.expressions import ExpressionError, columns_in
from cardgen.core.storage import KeptByGame, builds_again, keep_latest
from cardgen.load.data import Card, changed_places
from cardgen.load.fonts import families_in_svg
from cardgen.load.manifest import Choice, DeckSpec, Game
from cardgen.load.markup import icon_names
from cardgen.load.svgart import MAX_SIDE as MAX_SVG_SIDE
from cardgen.load.svgart import read_art
from cardgen.options.pdf import PrintSpec
from cardgen.svg.context import BuildContext
from cardgen.svg.helper_table import BAD_ARGUMENT, BY_NAME, Helper
from cardgen.svg.helpers import MissingImage, safe_path
from cardgen.svg.templates import make_environment, project_environment, syntax_message, templates_ahead

MAX_IMAGE_PIXELS = 64_000_000   # a 20 x 20 inch board at 400 DPI; a bigger image is a mistake or an attack
MAX_IMAGE_BYTES = 50_000_000
MIN_ICON_SIDE = 0.01            # a tinier viewBox scales an icon by absurd factors
CARD_KEYS = {"id", "name", "copies"}  # what a template's `card` holds besides the data columns


@dataclass
class Where:
    """A place in a template."""

    file: str
    line: int | None


@dataclass
class TemplateUse:
    """What a set of templates names: fields of `card`, icons, images, fonts, and the templates themselves."""

    fields: dict[str, Where] = field(default_factory=dict)
    icons: dict[str, Where] = field(default_factory=dict)
    icon_columns: dict[str, Where] = field(default_factory=dict)
    images: dict[str, Where] = field(default_factory=dict)
    image_columns: dict[str, Where] = field(default_factory=dict)
    text_columns: set[str] = field(default_factory=set)
    fonts: dict[str, Where] = field(default_factory=dict)
    arguments: dict[str, Where] = field(default_factory=dict)  # what is wrong with a helper's enum argument
    optional: set[str] = field(default_factory=set)  # fields a template tests (`is defined`, `default`): may be absent
    guarded: set[str] = field(default_factory=set)  # fields a template tests with `if`: may be empty

    def add(self, other: TemplateUse) -> None:
        """Add what another template uses; a name already here keeps its first place."""
        for mine, theirs in ((self.fields, other.fields), (self.icons, other.icons),
                             (self.icon_columns, other.icon_columns), (self.images, other.images),
                             (self.image_columns, other.image_columns), (self.fonts, other.fonts),
                             (self.arguments, other.arguments)):
            for name, where in theirs.items():
                mine.setdefault(name, where)
        self.text_columns |= other.text_columns
        self.optional |= other.optional
        self.guarded |= other.guarded


def _suggest(word: str, choices: set[str] | list[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def deck_templates(game: Game, deck_name: str) -> dict[str, Where]:
    """The face and back templates a deck names (every choice of a `by:` template too), with their lines."""
    deck = game.spec.decks[deck_name]
    names: dict[str, Where] = {}
    for side, choice in (("face", deck.face), ("back", deck.back)):
        where = Where(*game.where("decks", deck_name, side))
        if isinstance(choice, Choice):
            for name in [*choice.templates.values(), *([choice.default] if choice.default else [])]:
                names.setdefault(name, where)
        elif choice:
            names.setdefault(choice, where)
    return names


@dataclass
class TemplateScan:
    """What one template names by itself (not what the templates it includes name), and those it includes."""

    shown: str  # the template's file as findings show it
    use: TemplateUse
    children: list[tuple[str, int]]  # (name as written, line) of each template it includes, imports or extends


class KnownScans(KeptByGame):
    """Scans of templates kept between builds, by a key of the template's name, file and source text.

    Parsing a game's templates (20 files in a generated game) was a third of validating an edit; a template
    scans the same while its text is the same. One sealed entry per game in the output root's cache, read
    once and written once per check (only when it differs); a damaged entry is ignored and every template
    parsed again. Syntax errors and missing templates are never kept: they come from parsing each time.
    """

    def __init__(self, out_root: Path, game: str) -> None:
        super().__init__(out_root, "template-scans", game)

    @staticmethod
    def key(name: str, shown: str, source: str) -> str:
        """The key of a template's scan: its name, file and text, the code that scans it and Jinja's version."""
        from cardgen.core.bundled import code_digest

        text = json.dumps([code_digest(__name__), jinja2.__version__, name, shown, source])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def get(self, key: str) -> TemplateScan | None:
        """The scan kept under a key, or None when there is none (or it is not what this cardgen writes)."""
        kept = self.kept.get(key)
        if not isinstance(kept, dict):
            return None
        try:
            scan = _scan_from_json(kept)
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        self.used[key] = kept
        return scan

    def put(self, key: str, scan: TemplateScan) -> None:
        """Note a scan, to keep."""
        self.used[key] = _scan_to_json(scan)


def scan_ahead(root: Path, game: str, out_root: Path) -> None:
    """Scan the templates of a game's own folder (`templates.templates_ahead`) into its kept scans (`KnownScans`)
    where they are not kept yet, so that the build that checks them takes them from there. A first build's render
    worker does it as it starts, before it compiles them (`templates.compile_ahead`, from the trees parsed here),
    while the build loads the game: parsing and scanning gen20's 9 templates was ~25 ms of the build's way to its
    first card. A template that fails to parse is left to the build, which says why."""
    template_dir = root / "templates" / game
    names = templates_ahead(template_dir)
    if not names:
        return
    known = KnownScans(out_root, game)
    known.used = dict(known.kept)  # (a save keeps only what is used)
    environment = project_environment(root, template_dir)
    for name in names:
        try:
            source, filename, _ = environment.loader.get_source(environment, name)  # type: ignore[union-attr]
            shown = relative(filename or name, root)
            key = KnownScans.key(name, shown, source)
            if key not in known.used:
                known.put(key, _scan(environment.parse(source, name, filename), source, shown))
        except Exception:  # noqa: BLE001,S112  (a syntax error, a file gone or outside) the build says why
            continue
    known.save()


_WHERE_MAPS = ("fields", "icons", "icon_columns", "images", "image_columns", "fonts", "arguments")
_NAME_SETS = ("text_columns", "optional", "guarded")


def _scan_to_json(scan: TemplateScan) -> dict:
    use: dict[str, object] = {name: {key: [where.file, where.line] for key, where in getattr(scan.use, name).items()}
           for name in _WHERE_MAPS}
    use.update({name: sorted(getattr(scan.use, name)) for name in _NAME_SETS})
    return {"shown": scan.shown, "use": use, "children": [list(child) for child in scan.children]}


def _scan_from_json(data: dict) -> TemplateScan:
    use = TemplateUse()
    for name in _WHERE_MAPS:
        getattr(use, name).update({str(key): Where(str(file), line if line is None else int(line))
                                   for key, (file, line) in data["use"][name].items()})
    for name in _NAME_SETS:
        getattr(use, name).update(str(item) for item in data["use"][name])
    children = [(str(child), int(line)) for child, line in data["children"]]
    return TemplateScan(str(data["shown"]), use, children)


class TemplateScanner:
    """Parses a game's templates once each and records what they use, with syntax and missing-file findings."""

    def __init__(self, game: Game, known: KnownScans | None = None) -> None:
        self.game = game
        self.env = make_environment(game)
        self.known = known
        self.scans: dict[str, TemplateScan | None] = {}
        self.findings: list[Problem] = []

    def uses(self, roots: dict[str, Where]) -> tuple[TemplateUse, set[str]]:
        """What the templates reachable from `roots` (name -> where it is named) use, and those that failed."""
        use, failed, done = TemplateUse(), set(), set()
        todo = list(roots.items())
        while todo:
            name, named_at = todo.pop(0)
            if name in done:
                continue
            done.add(name)
            scan = self._scan_of(name, named_at)
            if scan is None:
                failed.add(name)
                continue
            use.add(scan.use)
            for child, line in scan.children:
                todo.append((self.env.join_path(child, name), Where(scan.shown, line)))
        return use, failed

    def _scan_of(self, name: str, named_at: Where) -> TemplateScan | None:
        if name not in self.scans:
            self.scans[name] = None
            try:
                # read every time, kept scan or not: the loader refuses a template that leads out of the project
                source, filename, _ = self.env.loader.get_source(self.env, name)  # type: ignore[union-attr]
                shown = relative(filename or name, self.game.root)
                key = KnownScans.key(name, shown, source)
                scan = self.known.get(key) if self.known is not None else None
                if scan is None:
                    scan = _scan(self.env.parse(source, name, filename), source, shown)
                    if self.known is not None:
                        self.known.put(key, scan)
                self.scans[name] = scan
            except jinja2.TemplateNotFound:
                self.findings.append(Problem(f"template '{name}' not found in templates/{self.game.name}/ or "
                                             "templates/", file=named_at.file, row=named_at.line,
                                             rule="missing-template"))
            except jinja2.TemplateSyntaxError as exc:
                self.findings.append(Problem(f"template syntax error: {syntax_message(exc)}",
                                             file=relative(exc.filename or name, self.game.root), row=exc.lineno,
                                             rule="template-syntax"))
            except (OSError, UnicodeDecodeError) as exc:
                self.findings.append(Problem(f"cannot read template '{name}': {exc}", file=named_at.file,
                                             row=named_at.line, rule="missing-template"))
            except CardgenError as exc:  # a link to a file outside the project
                self.findings += exc.problems
        return self.scans[name]


def _card_field(node: nodes.Node) -> str | None:
    """The field name when a node is `card.X` or `card['X']`."""
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "card":
        return node.attr
    if (isinstance(node, nodes.Getitem) and isinstance(node.node, nodes.Name) and node.node.name == "card"
            and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str)):
        return node.arg.value
    return None


def _tested_fields(tree: nodes.Template) -> tuple[set[str], set[str]]:
    """Fields a template asks about before use: (`is defined` or `| default`, tested by `if`)."""
    optional: set[str] = set()
    for test in tree.find_all(nodes.Test):
        if test.name in ("defined", "undefined"):
            optional.add(_card_field(test.node) or "")
    for filtered in tree.find_all(nodes.Filter):
        if filtered.name in ("default", "d") and filtered.node is not None:
            optional.add(_card_field(filtered.node) or "")
    guarded: set[str] = set()
    branches: list[nodes.If | nodes.CondExpr] = [*tree.find_all(nodes.If), *tree.find_all(nodes.CondExpr)]
    for branch in branches:
        for node in [branch.test, *branch.test.find_all((nodes.Getattr, nodes.Getitem))]:
            guarded.add(_card_field(node) or "")
    return optional - {""}, guarded - {""}


def _scan(tree: nodes.Template, source: str, shown: str) -> TemplateScan:
    """What one parsed template names, and the templates it includes (with their lines)."""
    use = TemplateUse()
    optional, guarded = _tested_fields(tree)
    use.optional |= optional
    use.guarded |= guarded
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        name = _card_field(node)
        if name is not None:
            use.fields.setdefault(name, Where(shown, node.lineno))
    for call in tree.find_all(nodes.Call):
        where = Where(shown, call.lineno)
        helper = BY_NAME.get(call.node.name) if isinstance(call.node, nodes.Name) else None
        if helper is not None:
            _helper_call(use, helper, call, where)
        for keyword in call.kwargs:
            if keyword.key == "font" and isinstance(keyword.value, nodes.Const):
                use.fonts.setdefault(str(keyword.value.value), where)
    for family in families_in_svg(source):
        if "{" not in family:  # a family written as a Jinja expression is checked when it renders
            line = source[: source.find(family)].count("\n") + 1
            use.fonts.setdefault(family, Where(shown, line))
    children = [(child, source[: source.find(child)].count("\n") + 1)
                for child in meta.find_referenced_templates(tree) if isinstance(child, str)]
    return TemplateScan(shown, use, children)


def _argument(call: nodes.Call, helper: Helper, name: str) -> nodes.Expr | None:
    """What a call gives a helper's argument, by keyword or by position; None when it leaves the default."""
    for keyword in call.kwargs:
        if keyword.key == name:
            return keyword.value
    index = helper.position(name)
    return call.args[index] if index is not None and index < len(call.args) else None


_NAMED = {"icon": ("icons", "icon_columns"), "image": ("images", "image_columns")}  # constants, columns


def _helper_call(use: TemplateUse, helper: Helper, call: nodes.Call, where: Where) -> None:
    """Note what a helper's call names (card texts, icons, images: `Helper.names`), and an enum argument given a
    value it does not allow."""
    for argument, names in helper.names.items():
        node = _argument(call, helper, argument)
        column = _card_field(node) if node is not None else None
        constant = node.value if isinstance(node, nodes.Const) and isinstance(node.value, str) else None
        if names == "text" and column:
            use.text_columns.add(column)
        elif names != "text" and (column or constant):
            constants, columns = _NAMED[names]
            getattr(use, columns if column else constants).setdefault(column or constant, where)
    for argument in helper.choices:
        node = _argument(call, helper, argument)
        problem = helper.check(argument, node.value) if isinstance(node, nodes.Const) else None
        if problem is not None:
            use.arguments.setdefault(problem.message, where)


# ---------------------------------------------------------------- images

def check_image_file(path: Path, shown: str) -> str | None:
    """Why an image file cannot be drawn safely, or None: unreadable, too large, or an unsafe SVG."""
    size = path.stat().st_size
    if size > MAX_IMAGE_BYTES:
        return f"image '{shown}' is {size // 1_000_000} MB; the limit is {MAX_IMAGE_BYTES // 1_000_000} MB"
    if path.suffix.lower() == ".svg":
        return _check_svg_image(path, shown)
    from PIL import Image

    try:
        with Image.open(path) as image:
            width, height = image.size
    except Image.DecompressionBombError:
        return f"image '{shown}' has far too many pixels to draw"
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow's ways of saying "not an image I know"
        return f"image '{shown}' cannot be read as an image: {exc}"
    if width * height > MAX_IMAGE_PIXELS:
        return (f"image '{shown}' is {width} x {height} px; more than {MAX_IMAGE_PIXELS // 1_000_000} million "
                "pixels is refused (scale it down: a card needs about 1 million)")
    return None


def _check_svg_image(path: Path, shown: str) -> str | None:
    try:
        art = read_art(path.read_bytes(), shown)
    except CardgenError as exc:
        return f"image '{shown}' cannot be used: {exc.problems[0].message}"
    if art.declared and max(art.declared) > MAX_SVG_SIDE:
        return (f"image '{shown}' declares a size of {art.declared[0]:g} x {art.declared[1]:g} px; more than "
                f"{MAX_SVG_SIDE} px a side is refused")
    return None


def image_problem(game: Game, text: str, draft: bool = False) -> Problem | None:
    """Why an image named in data or a template cannot be used (a warning in a draft, when it is only missing),
    or None when it is fine."""
    try:
        path = safe_path(game, text)
    except MissingImage as exc:
        return Problem(f"image '{text}' does not exist: drawn as a placeholder (--draft)", severity="warning",
                       rule="image") if draft else exc.problems[0]
    except CardgenError as exc:
        return Problem(exc.problems[0].message, rule="image")
    message = check_image_file(path, relative(path, game.root))
    return Problem(message, rule="image") if message else None


# ---------------------------------------------------------------- the layer

class ReferenceChecker:
    """Checks a game's references; keeps what it learns about templates for the other layers."""

    def __init__(self, context: BuildContext) -> None:
        self.game, self.data = context.game, context.data
        self.fonts, self.icons = context.fonts, context.icons
        known = KnownScans(context.out_root, context.game.name) if context.out_root is not None else None
        self.scanner = TemplateScanner(context.game, known)
        self.uses: dict[str, TemplateUse] = {}
        self.failed_templates: set[str] = set()
        self._icon_cache: dict[str, Problem | None] = {}
        self._image_cache: dict[str, Problem | None] = {}
        self.draft = context.draft

    def place(self, deck: str, column: str | None) -> tuple[str, int | None] | None:
        """Where a deck's templates first name a column (`card.column`): the place of a finding about what it
        draws (known once `check` has run)."""
        where = self.uses.get(deck, TemplateUse()).fields.get(column) if column else None
        return (where.file, where.line) if where is not None else None

    def check(self) -> list[Problem]:
        """Every reference finding of the game."""
        findings: list[Problem] = []
        for deck_name, deck in self.game.spec.decks.items():
            roots = deck_templates(self.game, deck_name)
            use, failed = self.scanner.uses(roots)
            self.uses[deck_name] = use
            found = self._deck_fields(deck_name, deck, use) + self._constants(use)
            if failed or found:  # rendering these templates would only fail again on the same problem
                self.failed_templates |= failed | set(roots)
            findings += found
        findings = self.scanner.findings + findings + self._aliases() + self._game_font() + self._missing_backs()
        if self.scanner.known is not None:
            self.scanner.known.save()
        return findings + self._cards() + self._unused_columns()

    def _cards(self) -> list[Problem]:
        """The findings of every card's values (see `_card`); in a process that builds again, those of a card the
        last check saw (the same object: an unchanged row's) are taken from it while what else they read is the
        same (`_LastCards`): only the changed rows are looked at, and when the cards are the last ones but a few at
        the same places (found by identity in a C loop), the last check's lists are patched at theirs."""
        cards = self.data.cards
        last = _last_cards(self) if builds_again() else None
        changed = changed_places(cards, last.cards) if last is not None else None
        if last is not None and changed is not None:
            found, before = last.found, {place: last.found[place] for place in changed}
            for place in changed:
                last.cards[place] = cards[place]
        else:
            by_card = dict(zip(map(id, last.cards), last.found)) if last is not None else {}
            found = list(map(by_card.get, map(id, cards)))  # type: ignore[arg-type]
            before = None
            changed = [place for place, kept in enumerate(found) if kept is None]
        text_columns: dict[tuple, set[str]] = {}  # by deck and text columns: the same for most cards
        unused = TemplateUse()  # (one, not one a card: ~1.5 us each)
        for place in changed:
            card = cards[place]
            use = self.uses.get(card.deck) or unused
            about = (card.deck, *card.text_fields)
            if about not in text_columns:
                # markup matters where a template draws the text: a text helper's column, or a rules-text column it uses
                text_columns[about] = (set(card.text_fields) & set(use.fields)) | use.text_columns
            found[place] = self._card(card, use, text_columns[about])
        if last is not None and before is not None and not any(old or found[place] for place, old in before.items()):
            findings = last.findings  # (no finding of a changed card, then or now)
        else:
            findings = list(itertools.chain.from_iterable(found))
        if builds_again():
            _keep_cards(self, last.cards if last is not None and before is not None else list(cards), found,
                        findings)
        return list(findings)

    def cards_about(self) -> tuple:
        """What each card's findings read besides the card (see `_card`): its deck's templates' use of its columns
        and whether this is a draft (the icons' and images' problems are compared by `_last_cards`)."""
        return (self.game.root, self.game.name, self.game.lang, self.draft,
                tuple((deck, tuple(use.fields), tuple(use.icon_columns), tuple(use.image_columns),
                       frozenset(use.text_columns), frozenset(use.optional | use.guarded))
                      for deck, use in self.uses.items()))

    def manifest_file(self) -> str:
        """The manifest as shown in findings."""
        return relative(self.game.manifest_path, self.game.root)

    def _columns_of(self, deck_name: str) -> set[str]:
        """Every column a deck's cards can have: the data file's header and the declared fields."""
        deck = self.game.spec.decks[deck_name]
        header = next((t.header for f, t in self.data.tables.items() if deck_name in self.data.decks_of[f]), [])
        return {h for h in header if h} | set(self.game.fields_of(deck))

    def _deck_fields(self, deck_name: str, deck: DeckSpec, use: TemplateUse) -> list[Problem]:
        columns = self._columns_of(deck_name)
        if not any(deck_name in decks for decks in self.data.decks_of.values()):
            return []  # the data file could not be read; that is reported already
        return [Problem(f"the template uses card.{name} but deck '{deck_name}' has no column '{name}'"
                        + _suggest(name, columns | CARD_KEYS), file=where.file, row=where.line,
                        rule="undefined-field")
                for name, where in use.fields.items() if name not in columns | CARD_KEYS | use.optional]

    def _constants(self, use: TemplateUse) -> list[Problem]:
        findings = []
        for name, where in use.icons.items():
            problem = self._icon(name)
            if problem:
                findings.append(Problem(problem.message, file=where.file, row=where.line, rule="unknown-icon"))
        for text, where in use.images.items():
            problem = self._image(text)
            if problem:
                findings.append(dataclasses.replace(problem, file=where.file, row=where.line))
        for message, where in use.arguments.items():
            findings.append(Problem(message, file=where.file, row=where.line, rule=BAD_ARGUMENT))
        for family, where in use.fonts.items():
            try:
                self.fonts.face(family)
            except CardgenError as exc:
                findings.append(Problem(exc.problems[0].message, file=where.file, row=where.line,
                                        rule="missing-font"))
        return findings

    def _aliases(self) -> list[Problem]:
        return [Problem(f"icons.{alias}: no icon named '{target}' (neither a bundled game-icons.net icon nor "
                        f"icons/**/{target}.svg){self.icons.suggest(target)}",
                        file=self.manifest_file(), row=self.game.line("icons", alias), rule="unknown-icon")
                for alias, target in self.game.spec.icons.items() if not self.icons.has(target)]

    def _print_options(self) -> PrintSpec:
        options = self.game.options("print")
        assert isinstance(options, PrintSpec)
        return options

    def _missing_backs(self) -> list[Problem]:
        """A warning per card deck without a `back:`, saying what each output does instead."""
        instead = {"long-edge": "a blank back page after each of its sheets",
                   "short-edge": "a blank back page after each of its sheets",
                   "none": "no backs (blank pages in the -backs.pdf, if other decks have backs)",
                   "fold": "an empty back half on each of its pages"}[self._print_options().duplex]
        return [Problem(f"deck '{name}' has no back: the print PDF gets {instead}, and Tabletop Simulator a plain "
                        "dark grey back; add `back: <template>.svg` to the deck to give its cards a back",
                        file=self.manifest_file(), row=self.game.line("decks", name), severity="warning",
                        rule="no-back")
                for name, deck in self.game.spec.decks.items() if deck.kind == "card" and deck.back is None]

    def _game_font(self) -> list[Problem]:
        if not self.game.spec.font:
            return []
        try:
            self.fonts.face(self.game.spec.font)
        except CardgenError as exc:
            return [Problem(f"font: {exc.problems[0].message}", file=self.manifest_file(),
                            row=self.game.line("font"), rule="missing-font")]
        return []

    def _icon(self, name: str) -> Problem | None:
        """The problem with an icon name (unknown, or an unsafe file), or None; a bundled icon is not read (every one
        is a 512 x 512 drawing: reading the 69 that battle-builder names was ~10 ms of a one-card edit)."""
        if name not in self._icon_cache:
            self._icon_cache[name] = None if self.icons.is_bundled(name) else self._icon_problem(name)
        return self._icon_cache[name]

    def _icon_problem(self, name: str) -> Problem | None:
        """The problem with an icon of the workspace (or an unknown name), read now."""
        try:
            icon = self.icons.get(name)
        except CardgenError as exc:
            return exc.problems[0]
        width, height = icon.viewbox[2:]
        if MIN_ICON_SIDE <= min(width, height) <= max(width, height) <= MAX_SVG_SIDE:
            return None
        return Problem(f"the icon's viewBox is {width:g} x {height:g}; expected sides between {MIN_ICON_SIDE:g} and "
                       f"{MAX_SVG_SIDE}", file=relative(icon.path, self.game.root))

    def _image(self, text: str) -> Problem | None:
        if text not in self._image_cache:
            self._image_cache[text] = image_problem(self.game, text, self.draft)
        return self._image_cache[text]

    def _card(self, card: Card, use: TemplateUse, text_columns: set[str]) -> list[Problem]:
        """Icons and images a card's values name: in `:icon:` markup of its `text_columns`, icon columns and image
        columns."""
        findings = []
        at = {"file": card.source_file, "row": card.source_row}
        for column in text_columns:
            value = card.fields.get(column)
            for name in icon_names(value) if isinstance(value, str) else ():
                problem = self._icon(name)
                if problem:
                    findings.append(self._icon_finding(problem, f":{name}: in the text", column, at))
        for column in use.icon_columns:
            value = card.fields.get(column)
            if value in (None, "") and column in use.optional | use.guarded:
                continue  # the template draws it only when there is one
            problem = self._icon(str(value)) if value not in (None, "") else \
                Problem("a template draws this column as an icon but it is empty")
            if problem:
                findings.append(self._icon_finding(problem, "", column, at))
        for column in use.image_columns:
            value = card.fields.get(column)
            if value in (None, "") and column in use.optional | use.guarded:
                continue
            problem = self._image(str(value)) if value not in (None, "") else \
                Problem("a template draws this column as an image but it is empty", rule="image")
            if problem:
                findings.append(dataclasses.replace(problem, column=column, **at))  # type: ignore[arg-type]
        return findings

    @staticmethod
    def _icon_finding(problem: Problem, context: str, column: str, at: dict) -> Problem:
        message = f"{problem.message}{' (' + context + ')' if context else ''}"
        if problem.file:  # the icon file itself is unsafe or broken: name it, at the card that uses it
            message = f"icon file {problem.file} cannot be used: {problem.message}"
        return Problem(message, column=column, rule="unknown-icon", **at)

    def _unused_columns(self) -> list[Problem]:
        """Data columns nothing uses (declared under fields: or not): most often a misspelt name."""
        findings = []
        by_rules = self._used_by_rules()  # once, not once a table: parsing every rule's expressions is ~5 ms a time
        for file, table in self.data.tables.items():
            decks = self.data.decks_of[file]
            declared = set().union(*(self.game.fields_of(self.game.spec.decks[d]) for d in decks))
            used = declared | set().union(*(self._used_by_deck(d) for d in decks)) | by_rules
            for column in table.header:
                if column and column not in used:
                    findings.append(Problem(f"column '{column}' is not declared under fields: and no template or "
                                            f"rule uses it{_suggest(column, declared | used)}; if it is a note, "
                                            f"declare it (fields: {{{column}: str}}) to keep it quietly", file=file,
                                            row=table.header_line, column=column, severity="warning",
                                            rule="unknown-column"))
        return findings

    def _used_by_deck(self, deck_name: str) -> set[str]:
        deck = self.game.spec.decks[deck_name]
        use = self.uses.get(deck_name, TemplateUse())
        used = {deck.name, deck.count, *deck.text, *use.fields, *use.icon_columns, *use.image_columns}
        used |= {c.by for c in (deck.face, deck.back) if isinstance(c, Choice)} | ({deck.id} if deck.id else set())
        languages = self.game.spec.languages  # name_fr: the translation of name (see cardgen.load.translate)
        used |= {f"{c}_{lang}" for c in (deck.name, *deck.text, *languages.columns) for lang in languages.others}
        return used | set(_expression_columns(deck.filter))

    def _used_by_rules(self) -> set[str]:
        used: set[str] = set()
        for rule in self.game.spec.rules:
            for expr in (rule.where, rule.check, rule.total):
                used |= set(_expression_columns(expr))
            used |= {rule.per} if rule.per else set()
            if rule.expect:
                used |= {rule.expect.key, rule.expect.column}
            if rule.terms:
                used |= {rule.terms.column, *rule.terms.text}
            if rule.refers:
                used |= {rule.refers.column, rule.refers.to}
            if rule.text:
                used |= {*rule.text.columns, *_expression_columns(rule.text.check)}
        return used


@dataclass
class _LastCards:
    """A game's last reference check of its cards in this process: the cards (held, so no other object takes their
    place), each one's findings and these joined, what they read besides the card (`cards_about`), and the problem of
    each icon and image they asked about."""

    about: tuple
    cards: list[Card]
    found: list[list[Problem]]
    findings: list[Problem]
    icons: dict[str, Problem | None]
    images: dict[str, Problem | None]


# In a process that builds again, the last reference check of each game's cards (see `ReferenceChecker._cards`), by the
# game's folder, name and language; a few games at most.
_LAST_CARDS: dict[tuple, _LastCards] = {}
_LAST_CARDS_AT_MOST = 8


def _last_cards(checker: ReferenceChecker) -> _LastCards | None:
    """The game's last check of its cards, when its findings still hold for the cards it saw: the same templates' use
    of the columns, and every icon and image it asked about the same problem now (asked again: a file may have
    changed); else None. Taken out: this check patches it, and one that stops half-way leaves none to take."""
    about = checker.cards_about()
    last = _LAST_CARDS.pop(about[:3], None)
    if last is None or last.about != about:
        return None
    if any(checker._icon(name) != problem for name, problem in last.icons.items()) or \
            any(checker._image(text) != problem for text, problem in last.images.items()):
        return None
    return last


def _keep_cards(checker: ReferenceChecker, cards: list[Card], found: list[list[Problem]],
                findings: list[Problem]) -> None:
    """Keep this check's findings of the game's cards for its next check in this process."""
    about = checker.cards_about()
    keep_latest(_LAST_CARDS, about[:3], _LastCards(about, cards, found, findings, dict(checker._icon_cache),
                                                   dict(checker._image_cache)), _LAST_CARDS_AT_MOST)


def _expression_columns(expr: str | None) -> list[str]:
    if not expr:
        return []
    try:
        return columns_in(expr)
    except (SyntaxError, ExpressionError):
        return []

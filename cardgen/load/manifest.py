"""The game manifest (`data/<game>/game.yaml`): its schema and how it is loaded."""
from __future__ import annotations

import difflib
import functools
import hashlib
import io
import itertools
import os
import pickle
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, PlainValidator, ValidationError, create_model, field_validator, model_validator

from cardgen.core.errors import CardgenError, Problem, relative, saved_meanwhile
from cardgen.core.filenames import collision_key, unsafe_reason
from cardgen.core.keypaths import line_of
from cardgen.core.ownership import check_game_name
from cardgen.core.registry import imported, sections
from cardgen.core.storage import Read, file_digest, note_read, noting_reads, read_noted
from cardgen.core.units import CARD_PRESETS, parse_length
from cardgen.core.workspace import MANIFEST_NAME, list_games
from cardgen.load.include import Includer, located_file
from cardgen.load.values import VALUE_NAME, Value, checked
from cardgen.options import Strict
from cardgen.options.layouts import LAYOUTS
from cardgen.options.simulations import SimulationSpec
from cardgen.options.vendors import VENDORS

FieldType = Literal["str", "int", "float", "bool", "enum", "list"]


class FieldSpec(Strict):
    """How one data column is read: its type, whether it must be present, its default."""

    type: FieldType = "str"
    required: bool = False
    default: Any = None
    values: list[str] | None = None
    none: list[str] = Field(default_factory=lambda: ["", "~"])
    min: float | None = None
    max: float | None = None
    separator: str = ";"
    item: Literal["str", "int", "float"] = "str"
    description: str | None = None

    @model_validator(mode="after")
    def _enum_needs_values(self) -> "FieldSpec":
        if self.type == "enum" and not self.values:
            raise ValueError("an enum field needs `values:`, the list of allowed values")
        return self


class SizeSpec(Strict):
    """A card size: a preset name or an explicit width and height, with orientation."""

    preset: str | None = None
    width: str | float | None = None
    height: str | float | None = None
    orientation: Literal["portrait", "landscape"] | None = None
    bleed: str | float | None = None
    safe: str | float | None = None
    dpi: int | None = Field(None, ge=36, le=1200, description="render resolution of this size (default: the game's)")

    @model_validator(mode="after")
    def _known_size(self) -> "SizeSpec":
        if self.preset is not None and self.preset not in CARD_PRESETS:
            raise ValueError(f"unknown size preset '{self.preset}'; expected one of {', '.join(CARD_PRESETS)}")
        if self.preset is None and (self.width is None or self.height is None):
            raise ValueError("a size needs a `preset` or both `width` and `height`")
        return self


class Choice(Strict):
    """A template chosen per card by the value of a column."""

    by: str
    templates: dict[str, str]
    default: str | None = None


class DataSource(Strict):
    """Where a deck's rows come from: a file in the project (CSV, YAML, XLSX, ODS, JSON; and sheet), or a URL."""

    file: str | None = None
    url: str | None = Field(None, description="an http(s) address of CSV, XLSX or JSON (a Google Sheets export link)")
    format: Literal["csv", "tsv", "xlsx", "ods", "json"] | None = Field(
        None, description="what a URL answers with, when neither its address nor its answer says so")
    poll: float = Field(60, ge=5, le=86_400, description="seconds between two looks at a URL in watch and serve")
    sheet: str | int | None = Field(None, description="an XLSX sheet by name, or by number counting from 1")
    delimiter: str | None = Field(None, min_length=1, max_length=1, description="one character, e.g. ';'")
    encoding: str | None = None

    @model_validator(mode="after")
    def _file_or_url(self) -> DataSource:
        if (self.file is None) == (self.url is None):
            raise ValueError("give a source either `file:` (a data file) or `url:` (an http or https address)")
        if self.url is not None and not self.url.lower().startswith(("http://", "https://")):
            raise ValueError(f"`url:` must begin with https:// or http://, not '{self.url[:40]}'")
        return self

    @property
    def location(self) -> str:
        """The file (relative to the game's data folder) or the URL the rows are read from."""
        return self.url if self.url is not None else str(self.file)


class DeckSpec(Strict):
    """One deck: its data, templates, copies column, ids and size."""

    title: str | None = None
    kind: Literal["card", "token", "board"] = "card"
    shape: Literal["rectangle", "rounded", "square", "circle", "hex"] = "rounded"
    supply: bool = Field(False, description="a token with an endless supply (a bag in Tabletop Simulator)")
    source: DataSource
    filter: str | None = None
    face: Choice | str
    back: Choice | str | None = None
    count: str = "count"
    id: str | None = None
    name: str = "name"
    text: list[str] = Field(default_factory=list, description="columns holding rules text")
    size: SizeSpec | str | None = None
    fields: dict[str, FieldSpec | FieldType] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict, description="values templates read as deck.options.<name>")
    id_prefix: str = Field("", description="put before every card id of the deck (two decks made from the same rows)")

    @field_validator("source", mode="before")
    @classmethod
    def _source_shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"url": value} if value.lower().startswith(("http://", "https://")) else {"file": value}
        return value


GameValue = Annotated[Value, PlainValidator(checked)]  # one message for a wrong value, not one per type tried


LANGUAGE_CODE = r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?"  # en, fr, pt-BR: a language tag as translators write it


class LanguagesSpec(Strict):
    """The languages a game prints in: its own (`default`), the translated ones, where translations live and
    the glossary every translation keeps to."""

    default: str = Field("en", pattern=LANGUAGE_CODE, description="the language the data files are written in")
    others: list[str] = Field(default_factory=list, description="languages built with `cardgen build GAME --lang`")
    translations: str | None = Field(None, description="a sheet in data/<game>/ with columns id, column and one "
                                     "per language (fr, ...); besides it, a column name_fr translates name")
    columns: list[str] = Field(default_factory=list, description="columns translated besides each deck's name "
                               "and text columns")
    glossary: dict[str, dict[str, str]] = Field(default_factory=dict, description="a term of the game and its "
                                                "translation per language: {Scrap: {fr: Ferraille}}")

    @field_validator("others")
    @classmethod
    def _codes(cls, value: list[str]) -> list[str]:
        for code in value:
            if not re.fullmatch(LANGUAGE_CODE, code):
                raise ValueError(f"'{code}' is not a language code; write it as fr, de or pt-BR")
        return value


class GameSpec(Strict):
    """The manifest of a game without the sections of its outputs (see `game_model`, which adds them)."""

    title: str
    version: str = "0.1"
    description: str | None = None
    dpi: int = Field(300, ge=72, le=1200)
    size: SizeSpec | str = "poker"
    bleed: str | float = "3.175mm"
    safe: str | float = "3.175mm"
    font: str | None = None
    icons: dict[str, str] = Field(default_factory=dict)
    colors: dict[str, str] = Field(default_factory=dict, description="the game's palette: name -> colour, usable "
                                   "in templates (colors.NAME, fill='NAME') and in icon_colors")
    icon_colors: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, FieldSpec | FieldType] = Field(default_factory=dict)
    decks: dict[str, DeckSpec]
    sizes: dict[str, SizeSpec] = Field(default_factory=dict)
    values: dict[str, GameValue] = Field(default_factory=dict, description="the rulebook's numbers: {name} in card "
                                     "text, values.name in templates, name in rules")
    rules: list["RuleSpec"] = Field(default_factory=list, description="game rules checked by cardgen validate")
    simulations: dict[str, SimulationSpec] = Field(default_factory=dict, description="run by cardgen simulate only")
    languages: LanguagesSpec = Field(default_factory=LanguagesSpec, description="translations (`build --lang`)")

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value

    @field_validator("colors")
    @classmethod
    def _palette(cls, value: dict[str, str]) -> dict[str, str]:
        for name, colour in value.items():
            if not re.fullmatch(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|rgba?\([\d\s.,%]+\)|[a-z]+",
                                str(colour).strip()):
                raise ValueError(f"colour '{name}' is '{colour}'; write it as #rrggbb (e.g. \"#c98a2b\", quoted: "
                                 "YAML reads # as a comment), rgb(201, 138, 43) or an SVG colour name")
        return value

    @field_validator("values")
    @classmethod
    def _value_names(cls, value: dict[str, Value]) -> dict[str, Value]:
        for name in value:
            if not VALUE_NAME.fullmatch(name):
                raise ValueError(f"value name '{name}' is not a name: use lowercase letters, digits and _, starting "
                                 "with a letter (it is written {name} in card text)")
        return value

    @field_validator("decks")
    @classmethod
    def _some_decks(cls, value: dict[str, DeckSpec]) -> dict[str, DeckSpec]:
        if not value:
            raise ValueError("a game needs at least one deck")
        return value


@dataclass(frozen=True)
class CardSize:
    """A resolved card size in mm, with the render resolution and rounded pixel sizes."""

    width_mm: float
    height_mm: float
    bleed_mm: float
    safe_mm: float
    dpi: int

    @property
    def full_width_px(self) -> int:
        """Width in whole pixels including bleed on both sides."""
        return round((self.width_mm + 2 * self.bleed_mm) / 25.4 * self.dpi)

    @property
    def full_height_px(self) -> int:
        """Height in whole pixels including bleed on both sides."""
        return round((self.height_mm + 2 * self.bleed_mm) / 25.4 * self.dpi)


@dataclass(frozen=True)
class Game:
    """A loaded game: its manifest plus where its files are."""

    name: str
    spec: GameSpec
    root: Path
    data_dir: Path
    template_dir: Path
    manifest_path: Path
    lines: dict
    files: dict = field(default_factory=dict)  # key path -> file shown, for keys from included definitions
    includes: tuple[Path, ...] = ()  # the deck definitions the manifest includes
    lang: str | None = None  # the translated language this game is loaded in (`build --lang`); None: its own
    # The content digest of each settings file (`manifest_files`, and the ICC profiles of the vendors named) as the
    # load read it: what the renders and outputs are keyed by (`settings_digest`), not the files read again
    read_as: dict[str, str] = field(default_factory=dict)

    @property
    def manifest_files(self) -> list[Path]:
        """The manifest, every deck definition it includes, the workspace's sheet layouts (`layouts/`, which a
        print may name), its vendors (`vendors/`) and the ICC profile `pod: profile:` names: what the game's
        settings are read from."""
        profile = getattr(self.options("pod"), "profile", None)
        profiles = [self.root / profile] if profile and (self.root / profile).is_file() else []
        return [self.manifest_path, *self.includes, *LAYOUTS.own_files(self.root), *VENDORS.own_files(self.root),
                *profiles]

    @property
    def settings_digest(self) -> str:
        """A digest of the settings files' content as the game was loaded from them (`read_as`): a file saved
        since its load is not taken for what the game holds."""
        return hashlib.sha256("\0".join(self.read_as.values()).encode()).hexdigest()

    def files_elsewhere(self) -> list[str]:
        """Files the game reads outside data/<game>/ (included definitions, their data, sheet layouts), relative to
        the root."""
        root = self.root.resolve()
        own = self.data_dir.resolve()
        sources = [(self.data_dir / d.source.file).resolve() for d in self.spec.decks.values()
                   if isinstance(d.source, DataSource) and d.source.file is not None]
        settings = [f.resolve() for f in self.manifest_files[1:]]
        return sorted({p.relative_to(root).as_posix() for p in [*settings, *sources]
                       if p.is_relative_to(root) and not p.is_relative_to(own)} | set(self.urls()))

    def urls(self) -> dict[str, float]:
        """The URLs the game's decks read, each with the seconds between two looks at it in watch and serve."""
        found: dict[str, float] = {}
        for deck in self.spec.decks.values():
            if isinstance(deck.source, DataSource) and deck.source.url is not None:
                found[deck.source.url] = min(deck.source.poll, found.get(deck.source.url, deck.source.poll))
        return found

    def deck_size(self, deck: DeckSpec) -> CardSize:
        """The resolved card size of a deck (its own size, else the game's)."""
        return resolve_size(deck.size or self.spec.size, self.spec)

    def fields_of(self, deck: DeckSpec) -> dict[str, FieldSpec]:
        """The game's shared field specs overlaid with the deck's own."""
        merged = {**self.spec.fields, **deck.fields}
        return {k: FieldSpec(type=v) if isinstance(v, str) else v for k, v in merged.items()}

    def options(self, output: str) -> BaseModel | None:
        """The validated manifest section of an output (`print`, `tts`): its options; None if it has none."""
        value = getattr(self.spec, output, None) if output not in GameSpec.model_fields else None
        return value if isinstance(value, BaseModel) else None

    def line(self, *path: str | int) -> int | None:
        """The line of a key path, for error messages (in the file `where` names)."""
        return line_of(self.lines, tuple(path))

    def where(self, *path: str | int) -> tuple[str, int | None]:
        """The file (relative to the workspace) and line of a key path: game.yaml or an included definition."""
        key = tuple(path)
        while key and key not in self.lines:
            key = key[:-1]
        return self.files.get(key) or relative(self.manifest_path, self.root), line_of(self.lines, tuple(path))


def resolve_size(size: SizeSpec | str, game: GameSpec) -> CardSize:
    """Turn a size (preset name, named size, or explicit spec) into a CardSize in mm."""
    if isinstance(size, str):
        words = size.split()
        name = words[0]
        if name in game.sizes:
            spec = game.sizes[name]
        elif name in CARD_PRESETS:
            spec = SizeSpec(preset=name)
        else:
            raise ValueError(f"unknown size '{name}'")
        if len(words) > 1:
            spec = spec.model_copy(update={"orientation": words[1]})
    else:
        spec = size
    dpi = spec.dpi or game.dpi
    if spec.preset:
        width, height = CARD_PRESETS[spec.preset]
    else:
        width, height = parse_length(spec.width, dpi), parse_length(spec.height, dpi)  # type: ignore[arg-type]
    if spec.orientation == "landscape" and width < height or spec.orientation == "portrait" and width > height:
        width, height = height, width
    bleed = parse_length(spec.bleed if spec.bleed is not None else game.bleed, dpi)
    safe = parse_length(spec.safe if spec.safe is not None else game.safe, dpi)
    return CardSize(width, height, bleed, safe, dpi)


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def game_model() -> type[GameSpec]:
    """The model of game.yaml: `GameSpec` plus one section per registered output with options (`print:`, `tts:`),
    named like the output and validated by the output's own options model."""
    return _game_model(tuple(sections().items()))


@functools.cache
def _game_model(outputs: tuple[tuple[str, str], ...]) -> type[GameSpec]:
    fields: dict[str, Any] = {}
    for name, reference in outputs:
        model = imported(reference)
        if name in GameSpec.model_fields or not name.isidentifier() or hasattr(BaseModel, name):
            raise CardgenError(f"the output '{name}' cannot have a section in game.yaml: '{name}' is taken; "
                               "register the output under another name")
        fields[name] = (model, Field(default_factory=model))
    return create_model("GameSpec", __base__=GameSpec, __doc__="The whole manifest of a game.", **fields)


def _model_keys(loc: tuple) -> list[str]:
    """The keys allowed at the place of an unknown key, for a 'did you mean'."""
    model: Any = game_model()
    for part in loc[:-1]:
        fields = _yaml_fields(model) if isinstance(model, type) and issubclass(model, BaseModel) else {}
        if part in fields:
            annotation = fields[part].annotation
            args = getattr(annotation, "__args__", (annotation,))
            model = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), args[-1])
        elif hasattr(model, "__args__"):
            model = next((a for a in model.__args__ if isinstance(a, type) and issubclass(a, BaseModel)), model)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(_yaml_fields(model))
    return []


def _yaml_fields(model: type[BaseModel]) -> dict[str, Any]:
    """A model's fields by the key written in YAML (its alias, where it has one)."""
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _key_path(loc: tuple, lines: dict) -> tuple:
    """The YAML key path of a pydantic error location, without the union member tags pydantic adds.

    A tag ("DeckSpec", "str", "function-after[...]") never is a key of the file, so a part is kept
    when the file has that key path, or when it does not look like a tag (a missing key).
    """
    models = {cls.__name__ for cls in Strict.__subclasses__()}
    kept: tuple = ()
    for part in loc:
        tag = isinstance(part, str) and (part in models or part in ("str", "int", "float", "bool") or "[" in part)
        if (*kept, part) in lines or not tag:
            kept = (*kept, part)
    return kept


def _problems_from(exc: ValidationError, shown_as: str, lines: dict, files: dict | None = None) -> list[Problem]:
    found = [(_key_path(err["loc"], lines), err) for err in exc.errors()]
    # A union reports each member that failed: where a mapping member found a problem deeper inside a
    # key, the scalar members' "should be a string" at the key itself is noise.
    deeper = {loc[:i] for loc, _ in found for i in range(len(loc))}
    problems = []
    for loc, err in found:
        if loc in deeper and err["type"] not in ("extra_forbidden", "missing"):
            continue
        key = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            message = f"unknown key '{loc[-1]}'{_suggest(str(loc[-1]), _model_keys(loc))}"
        elif err["type"] == "missing":
            message = "this key is required"
        else:
            message = err["msg"].removeprefix("Value error, ")
        problems.append(Problem(f"{key}: {message}", file=_file_of(files or {}, lines, loc) or shown_as,
                                row=line_of(lines, loc)))
    return list(dict.fromkeys(problems))


def _file_of(files: dict, lines: dict, loc: tuple) -> str | None:
    """The file a key path was written in (for keys of an included deck definition)."""
    while loc and loc not in lines:
        loc = loc[:-1]
    return files.get(loc)


def load_game(root: Path, name: str, lang: str | None = None) -> Game:
    """Load and validate `data/<name>/game.yaml` of a workspace, in one of its languages (None: its own)."""
    check_game_name(name)
    data_dir = root / "data" / name
    path = data_dir / MANIFEST_NAME
    shown_as = f"data/{name}/{MANIFEST_NAME}"
    if not path.is_file():
        known = list_games(root)
        raise CardgenError(f"no game '{name}' (no {shown_as}){_suggest(name, known)}"
                           + (f" Games here: {', '.join(known)}." if known else ""))
    if not path.resolve().is_relative_to(root.resolve()):  # data/<name> (or its game.yaml) links elsewhere
        raise CardgenError(f"the manifest is a link to {path.resolve()}, outside the project; only files inside "
                           f"it are read. Copy the game into data/{name}/ instead of linking it", file=shown_as)
    text = read_noted(path)  # (read once: parsed, or the key of the game kept, and noted: `storage.noting_reads`)
    kept = _kept_game(root, name, text)
    if kept is not None:
        return _in_language(kept, lang, shown_as)
    from cardgen.core.yamlsource import parse_yaml_bytes

    raw, lines = parse_yaml_bytes(text, shown_as)
    if not isinstance(raw, dict):
        raise CardgenError("the manifest must be a mapping of keys (title:, decks:, ...)", file=shown_as)
    with noting_reads() as reads:  # what validation reads besides game.yaml, as it read it (the build's too)
        game = _validated(root, name, raw, lines, path, lang)
        game.read_as.update(_read_as(game, text, reads))  # (made once: a game is not copied for it)
    _keep_game(game, text)
    return game


def _validated(root: Path, name: str, raw: dict, lines: dict, path: Path, lang: str | None) -> Game:
    """The game of a manifest's parsed YAML, its includes expanded and every option validated."""
    shown_as, data_dir = f"data/{name}/{MANIFEST_NAME}", path.parent
    includer = Includer(root, shown_as)
    merged = includer.expand_decks(located_file(raw, lines, shown_as), data_dir)
    raw, lines, files = merged.value, merged.lines, merged.files
    try:
        spec = game_model().model_validate(raw, context={"root": root})  # options may read the workspace
    except ValidationError as exc:
        raise CardgenError(_problems_from(exc, shown_as, lines, files)) from None
    game = Game(name, spec, root, data_dir, root / "templates" / name, path, lines, files, tuple(includer.files),
                _check_language(spec, lang, shown_as))
    _check_sizes(game, shown_as)
    _check_deck_names(game)
    return game


def _read_as(game: Game, text: bytes, reads: dict[str, Read | None]) -> dict[str, str]:
    """The content digest of each settings file as the game's load read it (`Game.read_as`): game.yaml's `text`, and
    each other file its validation read as noted in `reads`; a file it did not read (a layout no option names, an
    ICC profile only looked for) as it is now. CardgenError for a file read as two contents (saved meanwhile)."""
    digests = {str(game.manifest_path): hashlib.sha256(text).hexdigest()}
    for file in _read_files(game):
        name = os.path.realpath(file)
        read = reads.get(name)
        if read is None and name in reads:  # read as two contents
            raise _changed(file, game.root)
        try:
            digests[str(file)] = read.digest if read is not None else file_digest(file)
        except OSError:  # gone since it was listed
            raise _changed(file, game.root) from None
        note_read(file, digests[str(file)])  # (one read again by a stage is checked against it, as a kept game's)
    return digests


def _changed(file: Path, root: Path) -> CardgenError:
    """The error of a settings file saved while a game was loaded from it."""
    return CardgenError(saved_meanwhile("the file", "the game was read"), file=relative(file, root))


# ---------------------------------------------------------------- validated manifests kept in the user's cache

# A game loaded again (each build after an edit, each command) takes its validated manifest from the user's cache:
# no YAML read, and none of pydantic's validators built (the models defer that to their first validation: `Strict`).
# An entry is keyed by game.yaml's content, the workspace, the game and the code of the manifest and of every options
# model; it holds the game and the content digest of every other file its validation read (included definitions,
# the workspace's sheet layouts and vendors, ICC profiles), each checked before the entry is used. Only a manifest
# that loaded without a problem is kept: a broken one is read and reported as ever.
KEPT_MANIFESTS = "manifests"


@dataclass(frozen=True)
class _KeptGame:
    """A cache entry: the game loaded in its own language, and what its validation read besides game.yaml."""

    game: Game  # (its `read_as`: the content of every other file its validation read)
    settings: tuple[str, ...]  # `manifest_files` but the manifest: a layout or vendor added since is not among them


class _Pickler(pickle.Pickler):
    """Pickles the manifest's model (made by `game_model`, so found by no import) as a call of `game_model`."""

    def reducer_override(self, obj: Any) -> Any:
        """`game_model()`'s class as the call that makes it; anything else as pickle does."""
        return (game_model, ()) if obj is game_model() else NotImplemented


def _manifest_key(root: Path, name: str, text: bytes) -> str | None:
    """The cache key of a game's validated manifest: game.yaml's content, the workspace (as given, which the game's
    paths are made from, and resolved) and game, the code of this module and of the options models (imported by
    name: no import of it), pydantic's version. None when an output of another package has options (its code is
    not cardgen's to digest): that game is not kept."""
    import pydantic

    from cardgen.core.bundled import code_digest

    models = sorted({reference.split(":")[0] for reference in sections().values()})
    if any(model.split(".")[0] != "cardgen" for model in models):
        return None
    parts = (str(root), str(root.resolve()), name, hashlib.sha256(text).hexdigest(), pydantic.VERSION,
             code_digest(__name__, *models))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _read_files(game: Game) -> list[Path]:
    """What validating a game's manifest read besides game.yaml: its other settings files (`manifest_files`),
    then the ICC profiles of the vendors its `pod:` section names."""
    from cardgen.options.vendors import load_vendor

    vendors = getattr(game.options("pod"), "vendor", []) if ("pod",) in game.lines else []  # checked if given
    profiles = [profile for vendor in vendors if (profile := load_vendor(game.root, vendor).profile) is not None]
    return [*game.manifest_files[1:], *profiles]


def _keep_game(game: Game, text: bytes) -> None:
    """Keep a game just loaded (in its own language) in the user's cache (best effort), with the content each file
    was read as (`Game.read_as`), not the files now (a save since it was read would key the game it did not make)."""
    from cardgen.core.storage import user_store

    store, key = user_store(KEPT_MANIFESTS, ".pickle"), _manifest_key(game.root, game.name, text)
    if store is None or key is None:
        return
    own = game if game.lang is None else replace(game, lang=None)  # kept in its own language
    data = io.BytesIO()
    _Pickler(data, protocol=pickle.HIGHEST_PROTOCOL).dump(_KeptGame(own, tuple(map(str, game.manifest_files[1:]))))
    store.put_bytes(key, data.getvalue())


def _kept_game(root: Path, name: str, text: bytes) -> Game | None:
    """The game whose game.yaml holds `text`, from the user's cache: None when not kept, or when the entry does not
    verify (its seal), does not unpickle, or any other file its validation read has changed (then it is loaded
    again and kept anew)."""
    from cardgen.core.storage import user_store

    store, key = user_store(KEPT_MANIFESTS, ".pickle"), _manifest_key(root, name, text)
    data = store.read_bytes(key) if store is not None and key is not None else None
    if data is None:
        return None
    try:
        entry = pickle.loads(data)  # noqa: S301  a sealed entry of the user's own cache, written by cardgen
        if not isinstance(entry, _KeptGame) or entry.settings != tuple(map(str, entry.game.manifest_files[1:])):
            return None
        read_as = entry.game.read_as
        if any(file_digest(Path(path)) != digest for path, digest in itertools.islice(read_as.items(), 1, None)):
            return None
    except Exception:  # noqa: BLE001  an entry an older cardgen wrote, a file gone: loaded again, never served
        return None
    for path, digest in read_as.items():  # the game holds what they held (each read where the game is used again
        note_read(Path(path), digest)  # is checked against it: `Catalogue.read`, the print-on-demand's profiles)
    return entry.game


def _in_language(game: Game, lang: str | None, shown_as: str) -> Game:
    """A game loaded in its own language, in `lang` (see `_check_language`)."""
    return replace(game, lang=_check_language(game.spec, lang, shown_as))


def _check_language(spec: GameSpec, lang: str | None, shown_as: str) -> str | None:
    """The translated language to load (None for the game's own), or an error naming the languages it has."""
    if lang is None or lang == spec.languages.default:
        return None
    if lang not in spec.languages.others:
        known = ", ".join([spec.languages.default, *spec.languages.others])
        raise CardgenError(f"the game has no language '{lang}' (it has {known}); add it to `languages: {{others: "
                           f"[{lang}]}}` and translate its cards", file=shown_as)
    return lang


def _check_deck_names(game: Game) -> None:
    """A deck's name is the folder of its card images (cards/<deck>/): it must be a safe folder name."""
    problems: list[Problem] = []
    folded: dict[str, str] = {}
    for deck_name in game.spec.decks:
        file, row = game.where("decks", deck_name)
        unsafe = unsafe_reason(deck_name)
        alike = folded.setdefault(collision_key(deck_name), deck_name)
        if alike != deck_name:
            unsafe = f"it differs from deck '{alike}' only in case or accents (one folder on Windows and macOS)"
        if unsafe:
            problems.append(Problem(f"decks: the deck name '{deck_name}' cannot be a folder name: {unsafe}",
                                    file=file, row=row))
    if problems:
        raise CardgenError(problems)


MAX_SIDE_MM = 2000.0  # a card, token or board; larger is a typo (a play mat is under 1 m)
# Smaller is a typo too: the smallest pieces games print (counters, markers) are about 10 mm, and scissors or a
# trimmer cannot cut one much under 5 mm along its marks.
MIN_SIDE_MM = 5.0
# Two 8 px JPEG blocks, the unit of a Tabletop Simulator sheet cell: a card narrower at its dpi draws nothing
# that can be seen (a 6 pt letter is 25 px high at 300 DPI).
MIN_SIDE_PX = 16
# A 600 x 900 mm board at 300 DPI is 75 million pixels; Pillow refuses images past 89 million as bombs.
MAX_IMAGE_PIXELS = 85_000_000


def check_size(size: SizeSpec | str, game: GameSpec) -> CardSize:
    """A size resolved (`resolve_size`) and checked: one that can be printed, cut and drawn on a pixel grid, and
    not more pixels than memory holds. ValueError says what is wrong and what to do."""
    resolved = resolve_size(size, game)
    width, height = resolved.width_mm, resolved.height_mm
    if min(width, height) < MIN_SIDE_MM:
        raise ValueError(f"the size is {width:g} x {height:g} mm; a side under {MIN_SIDE_MM:g} mm cannot be cut "
                         "out (is the unit right? mm, cm, in)")
    if min(resolved.bleed_mm, resolved.safe_mm) < 0:
        raise ValueError("bleed and safe margins cannot be negative")
    if max(width, height) > MAX_SIDE_MM:
        raise ValueError(f"the size is {width:g} x {height:g} mm; more than {MAX_SIDE_MM:g} mm on a side is refused")
    least_px = min(width, height) / 25.4 * resolved.dpi
    if least_px < MIN_SIDE_PX:
        raise ValueError(f"at {resolved.dpi} DPI a {min(width, height):g} mm side is {least_px:.1f} px; a card needs "
                         f"at least {MIN_SIDE_PX} px a side: raise the size's dpi:")
    pixels = resolved.full_width_px * resolved.full_height_px
    if pixels > MAX_IMAGE_PIXELS:
        raise ValueError(f"at {resolved.dpi} DPI each image would be {resolved.full_width_px} x "
                         f"{resolved.full_height_px} px ({pixels / 1e6:.0f} million pixels; the limit is "
                         f"{MAX_IMAGE_PIXELS // 1_000_000} million); lower the deck's dpi:")
    return resolved


def _check_sizes(game: Game, shown_as: str) -> None:
    problems = []
    for deck_name, deck in game.spec.decks.items():
        try:
            check_size(deck.size or game.spec.size, game.spec)
        except ValueError as exc:
            file, row = game.where("decks", deck_name, "size")
            problems.append(Problem(f"decks.{deck_name}.size: {exc}", file=file, row=row))
    if problems:
        raise CardgenError(problems)


# ---------------------------------------------------------------- game rules (`rules:`, checked by cardgen validate)

class ExpectSpec(Strict):
    """A table the rulebook gives, such as its card list: the value of `column` for each `key`."""

    key: str = "name"
    column: str = "count"
    values: dict[str, int | float | str]
    complete: bool = Field(True, description="cards the table does not list are findings too")


class TermSpec(Strict):
    """Names and terms used consistently: rulebook names exist as cards, words in card text are known."""

    names: list[str] = Field(default_factory=list, description="names the rulebook uses; each must be a value "
                                                               "of `column`")
    column: str = "name"
    text: list[str] = Field(default_factory=list, description="columns of rules text whose capitalised and bold "
                                                              "words must be known terms or card names")
    known: list[str] = Field(default_factory=list, description="the rulebook's terms (its glossary)")


class TextSpec(Strict):
    """What card text must say: the numbers next to a term (or caught by a pattern) and phrases it must hold."""

    columns: list[str] = Field(description="the text columns read (a YAML list column: each item)")
    term: str | None = Field(None, description="numbers written next to this word or phrase: '+2 damage', "
                                               "'1-2 gold' (both), 'attacks with 1', plurals too")
    pattern: str | None = Field(None, max_length=200, description="instead of term: a regular expression whose "
                                                                   "groups are the numbers; a group named after a "
                                                                   "value or column must equal it: (?P<lanes>\\d+)")
    check: str | None = Field(None, description="true for every number found, called `number` (columns and "
                                                "values may be named too)")
    require: str | None = Field(None, description="a phrase the text must hold ({value} placeholders filled)")

    @field_validator("columns", mode="before")
    @classmethod
    def _one_column(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _something_to_check(self) -> "TextSpec":
        if self.term is not None and self.pattern is not None:
            raise ValueError("term: or pattern:, not both")
        if self.term is None and self.pattern is None and self.check is not None:
            raise ValueError("check: goes with term: or pattern: (the numbers it checks)")
        if self.term is not None and self.check is None:
            raise ValueError("term: needs check: (what its numbers must be)")
        if self.pattern is not None:
            try:
                groups = re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern: is not a regular expression: {exc}") from None
            if self.check is None and (not groups.groups or len(groups.groupindex) < groups.groups):
                raise ValueError("a pattern's unnamed groups need check: (or name each group after the value "
                                 "or column it must equal: (?P<lanes>\\d+))")
        if self.term is None and self.pattern is None and self.require is None:
            raise ValueError("needs term: or pattern: (with check:) or require:")
        return self


class RefersSpec(Strict):
    """Values that name other things of the game: decks (`to: decks`) or cards (`to: <column>` of cards)."""

    column: str
    to: str = "decks"
    among: list[str] | None = Field(None, description="with `to: <column>`: only cards of these decks count")


class RuleSpec(Strict):
    """One game rule: which cards it looks at and what must hold, with a message citing the rulebook."""

    id: str
    message: str
    severity: Literal["error", "warning"] = "error"
    decks: list[str] | None = None
    where: str | None = None
    check: str | None = Field(None, description="row rule: true on every selected card")
    total: str | None = Field(None, description="aggregate rule over the selected cards, e.g. sum(count) == 20")
    per: str | None = Field(None, description="check `total` for each value of this column separately")
    expect: ExpectSpec | None = None
    terms: TermSpec | None = None
    refers: RefersSpec | None = None
    text: TextSpec | None = None

    @field_validator("decks", mode="before")
    @classmethod
    def _one_deck(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_kind(self) -> "RuleSpec":
        kinds = [k for k in ("check", "total", "expect", "terms", "refers", "text") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"rule '{self.id}' needs exactly one of check:, total:, expect:, terms:, refers: or "
                             "text:"
                             + (f" (it has {', '.join(kinds)})" if kinds else ""))
        if self.per is not None and self.total is None:
            raise ValueError(f"rule '{self.id}': per: goes with total:")
        return self



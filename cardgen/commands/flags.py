"""Command flags derived from an output's options model (its manifest section): a field of `print:` is a flag of
`cardgen print` without being declared twice."""
from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, Callable, Literal, get_args, get_origin

import click
from pydantic import BaseModel


def folder_option(*names: str, help: str) -> Callable[[Callable], Callable]:
    """A click option naming a folder (None when not given)."""
    return click.option(*names, type=click.Path(file_okay=False, path_type=Path), default=None, help=help)


def add_flags(model: type[BaseModel], section: str) -> Callable[[Callable], Callable]:
    """A decorator adding to a click command one option per field of an options model, game.yaml's `section`
    (see `option_flags`)."""
    def decorate(command: Callable) -> Callable:
        for names, attrs in reversed(option_flags(model, section)):
            command = click.option(*names, **attrs)(command)
        return command

    return decorate


Flag = tuple[list[str], dict[str, Any]]  # click.option's names and attributes


def option_flags(model: type[BaseModel], section: str) -> list[Flag]:
    """Click options for the fields of an options model (game.yaml's `section`): `--name` per field (`--x/--no-x`
    for a yes/no, a choice for a fixed set of words, an integer or a number as such), each None unless given, so
    that only the flags given override the manifest. A field may name its flag (`json_schema_extra={"flag":
    "marks"}`), or be game.yaml's only (`{"manifest_only": True}`: `build:`, a bucket, grids by deck)."""
    flags = []
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("manifest_only"):
            continue
        flag = str(extra.get("flag", name.replace("_", "-")))
        annotation = field.annotation
        shown = f"game.yaml's {section}: {name}, else {_default(field)}"
        help_text = f"{(field.description or name.replace('_', ' ')).rstrip('.')} (default: {shown})."
        kind: dict[str, Any] = {"default": None, "help": help_text}
        if annotation is bool or bool in get_args(annotation):  # `bool | Literal["auto"]`: auto is game.yaml's
            names = [f"--{flag}/--no-{flag}", name]
        else:
            names = [f"--{flag}", name]
            if _is_list(annotation):
                kind.update(multiple=True, callback=lambda _ctx, _param, value: list(value) or None)
            else:
                kind["type"] = _click_type(annotation)
        flags.append((names, kind))
    return flags


def _click_type(annotation: Any) -> click.ParamType:
    """The click type of a field: a choice of a Literal's words, INT or FLOAT for a number (None aside); text for
    the rest, lengths with units (`str | float`: 2mm, 0.1in) among them."""
    given = [a for a in get_args(annotation) if a is not type(None)] if _is_union(annotation) else [annotation]
    if len(given) != 1:
        return click.STRING
    if get_origin(given[0]) is Literal:
        return click.Choice([str(a) for a in get_args(given[0])])
    numbers: dict[Any, click.ParamType] = {int: click.INT, float: click.FLOAT}
    return numbers.get(given[0], click.STRING)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (types.UnionType, typing.Union)


def _is_list(annotation: Any) -> bool:
    if _is_union(annotation):
        return all(get_origin(a) is list for a in get_args(annotation) if a is not type(None))
    return get_origin(annotation) is list


def _default(field: Any) -> str:
    default = field.get_default(call_default_factory=True)
    if isinstance(default, bool):
        return "yes" if default else "no"
    if isinstance(default, list):
        return ", ".join(map(str, default)) or "none"
    return "none" if default is None else str(default)

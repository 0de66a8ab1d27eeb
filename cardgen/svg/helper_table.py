"""The template helpers: one line each in `HELPERS`, the only list of them.

A line says what a template calls the helper, the function that draws it (called with the card's `CardHelpers`
first), the colour of the guide box it records (its kind is the helper's name), which arguments name a card
text, an icon or an image, and the values each of its enum arguments allows. The templates' context, the layout
guides, the gallery, the validator's template scan and the docs-sync test all read it.
"""
from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from cardgen.core.errors import CardgenError, Problem
from cardgen.svg.helpers import FIT_ASPECT, CardHelpers
from cardgen.svg.text import ALIGN, VALIGN

Names = Literal["text", "icon", "image"]  # what an argument's value names: card text (with markup), an icon, an image
BAD_ARGUMENT = "helper-argument"  # the rule of a finding about an enum argument


@dataclass(frozen=True)
class Helper:
    """One template helper (see the module)."""

    name: str
    function: Callable[..., Any]
    box: str | None = None  # the colour of the guide box it records, or None when it records none
    names: Mapping[str, Names] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def position(self, argument: str) -> int | None:
        """Where a template passes `argument` among its positional arguments, or None when only by keyword."""
        return self._positions.get(argument)

    @cached_property
    def _positions(self) -> dict[str, int]:
        parameters = list(inspect.signature(self.function).parameters.values())[1:]  # past the CardHelpers
        positional = [p.name for p in parameters if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
        return {name: index for index, name in enumerate(positional)}

    def check(self, argument: str, value: object) -> Problem | None:
        """The problem with a value given to an enum argument, or None when it is one of the choices."""
        allowed = self.choices[argument]
        if value in allowed:
            return None
        return Problem(f"{self.name}: {argument} is '{value}'; expected one of {', '.join(allowed)}",
                       rule=BAD_ARGUMENT)

    @cached_property
    def _checks(self) -> list[tuple[str, int | None]]:
        return [(argument, self.position(argument)) for argument in self.choices]

    def bound(self, card: CardHelpers) -> Callable[..., Any]:
        """The helper as one card's templates call it: its enum arguments checked before it draws."""
        function = types.MethodType(self.function, card)
        if not self.choices:
            return function
        checks = self._checks

        def checked(*args: Any, **kwargs: Any) -> Any:
            for argument, index in checks:
                if argument in kwargs:
                    value = kwargs[argument]
                elif index is not None and index < len(args):
                    value = args[index]
                else:
                    continue  # its default
                problem = self.check(argument, value)
                if problem is not None:
                    raise CardgenError(problem)
            return function(*args, **kwargs)

        return checked


_TEXT = {"align": tuple(ALIGN), "valign": tuple(VALIGN)}

HELPERS = (
    Helper("text_box", CardHelpers.text_box, box="#1e88e5", names={"text": "text"}, choices=_TEXT),
    Helper("text_line", CardHelpers.text_line, box="#8e24aa", names={"text": "text"}, choices=_TEXT),
    Helper("icon", CardHelpers.icon, box="#43a047", names={"name": "icon"}),
    Helper("image", CardHelpers.image, box="#fb8c00", names={"path": "image"}, choices={"fit": tuple(FIT_ASPECT)}),
    Helper("mm", CardHelpers.mm),
    Helper("pt", CardHelpers.pt),
    Helper("inch", CardHelpers.inch),
    Helper("length", CardHelpers.length),
    Helper("position", CardHelpers.position),
    Helper("color", CardHelpers.color),
)
BY_NAME = {helper.name: helper for helper in HELPERS}
GUIDE_COLORS = {helper.name: helper.box for helper in HELPERS if helper.box}  # a guide box's kind -> its colour

"""Where a template helper drew on a card: the boxes layout guides show (and the build record keeps)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter


@dataclass(frozen=True, slots=True)
class GuideBox:
    """Where a template helper drew, in card pixels, for layout guides; `kind` is the helper's name in
    `svg/helper_table.py` (text_box, text_line, icon, image), whose line gives the box its colour.

    A slotted dataclass, not a dict or a model: a build holds about twenty per card, made once when a card
    is rendered and shared by the plan, the SVG cache and the build record. At 10,000 cards model instances
    (each with its own __dict__ and set of given fields) cost ~1 kB a box and dicts ~300 bytes; this ~90.
    pydantic validates it all the same in a record read back, and keys a later cardgen adds are ignored.
    """

    kind: str
    x: float
    y: float
    width: float
    height: float
    label: str = ""
    overflow: bool = False
    size: float = 0.0  # a text's font size as laid out (after shrinking to fit), in card pixels; 0 for the others


_FIELDS = attrgetter(*(f.name for f in fields(GuideBox)))


def box_as_row(box: GuideBox) -> tuple:
    """A box's fields in order, as JSON writes it (a list): what `dataclasses.astuple` gives, without its deep copy
    (astuple was most of the cost of writing the SVG cache on an edit)."""
    return _FIELDS(box)

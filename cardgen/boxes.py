"""Where a template helper drew on a card: the boxes layout guides show (and the build record keeps)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GuideBox:
    """Where a template helper (text_box, text_line, icon, image) drew, in card pixels: for layout guides.

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

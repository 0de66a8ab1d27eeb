"""The one error type of cardgen: a problem a person can fix, with where it is."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LEFT_OUT = "left-out"  # the rule of a forced build's error saying a card is left out of it


@dataclass(frozen=True)
class Problem:
    """One problem in the input: what is wrong, where, and how bad."""

    message: str
    file: str | None = None
    row: int | None = None
    column: str | None = None
    severity: str = "error"
    rule: str | None = None

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.file, self.row, self.column) if p not in (None, ""))
        rule = f" ({self.rule})" if self.rule else ""
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.severity}: {self.message}{rule}"


class CardgenError(Exception):
    """Raised for input a person must fix; carries one or more problems."""

    def __init__(self, problems: Problem | str | list[Problem], **where: object) -> None:
        if isinstance(problems, str):
            problems = Problem(problems, **where)  # type: ignore[arg-type]
        self.problems: list[Problem] = problems if isinstance(problems, list) else [problems]
        self.outputs_unchanged = True  # False when the command changed outputs before it stopped (clean)
        super().__init__("\n".join(str(p) for p in self.problems))


class OutputBusy(CardgenError):
    """Another cardgen command holds the output root's lock: nothing is wrong with the input, and the same
    command succeeds once the other has finished (a watch waits for it and builds then)."""


def saved_meanwhile(what: str, during: str = "the build drew it") -> str:
    """The message of a file read as other content than what the build is keyed by, which was made from the file
    as it was before a save: `what` (a template, an image, a layout file...) changed `during` a use of it."""
    return f"{what} changed while {during} (saved meanwhile): build again"


def relative(path: Path | str, root: Path | None) -> str:
    """Show a path relative to the workspace root when it lies inside it."""
    path = Path(path)
    if root is not None:
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return str(path)

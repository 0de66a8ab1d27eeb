"""Progress reporting: the Reporter protocol the pipeline calls; a rich bar on a terminal, plain lines in logs."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import click

if TYPE_CHECKING:
    from rich.progress import TaskID


class Reporter(Protocol):
    """Where the pipeline reports progress; the CLI supplies a rich or a plain one."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase of `total` items."""

    def advance(self) -> None:
        """One item of the phase is done."""

    def finish(self) -> None:
        """The phase is over."""


class SilentReporter:
    """A reporter that says nothing (tests, library use)."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase."""

    def advance(self) -> None:
        """One item done."""

    def finish(self) -> None:
        """Phase over."""


class PlainReporter:
    """Prints one line when a phase starts and one when it ends."""

    def __init__(self) -> None:
        self.label, self.total, self.done = "", 0, 0

    def start(self, label: str, total: int) -> None:
        """Begin a phase of `total` items."""
        self.label, self.total, self.done = label, total, 0
        if total:
            click.echo(f"{label}: {total} to draw", err=True)

    def advance(self) -> None:
        """One item done."""
        self.done += 1

    def finish(self) -> None:
        """End the phase."""
        if self.total:
            click.echo(f"{self.label}: {self.done}/{self.total} done", err=True)


class RichReporter:
    """A rich progress bar."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), transient=True)
        self.task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        """Show a bar for a phase."""
        if total:
            self.progress.start()
            self.task = self.progress.add_task(label, total=total)

    def advance(self) -> None:
        """Move the bar."""
        if self.task is not None:
            self.progress.advance(self.task)

    def finish(self) -> None:
        """Remove the bar."""
        if self.task is not None:
            self.progress.stop()
            self.task = None


def make_reporter(terminal: bool) -> PlainReporter | RichReporter:
    """The reporter that suits where output goes."""
    return RichReporter() if terminal else PlainReporter()

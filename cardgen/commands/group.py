"""The click group of `cardgen`: problems shown as lines with an exit code, and the outputs' commands."""
from __future__ import annotations

from typing import NoReturn

import click

from cardgen.core.errors import CardgenError
from cardgen.core.registry import OUTPUTS, imported


class CardgenGroup(click.Group):
    """A click group that turns CardgenError into readable lines and an exit code.

    The commands of the registered outputs (`cardgen.core.registry.OUTPUTS`: `print`, `tts`, and any output with
    options) have flags derived from an output's options model; they are imported only when named, so that
    `cardgen build` with nothing to do loads none of it.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, the outputs' commands included."""
        return sorted({*super().list_commands(ctx), *_output_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A command by name, importing an output's command now."""
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in _output_commands():
            return command
        output = OUTPUTS[cmd_name]
        if output.command:
            return imported(output.command)
        from cardgen.commands.output_cmd import output_command

        return output_command(cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        """Run a command; show problems as lines, tracebacks only with --debug."""
        from cardgen.core.interrupts import noted, notice_interrupts

        notice_interrupts()
        try:
            return super().invoke(ctx)
        except CardgenError as exc:
            if ctx.meta.get("cardgen.debug"):
                raise
            for problem in exc.problems:
                click.secho(str(problem), fg="red" if problem.severity == "error" else "yellow", err=True)
            unchanged = "; nothing was changed in the output" if exc.outputs_unchanged else ""
            click.echo(f"{len(exc.problems)} problem(s){unchanged}.", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except Exception:
            # A Ctrl-C that lands where Python turns its KeyboardInterrupt into another error (a class being made
            # wraps it in a RuntimeError) is still the designer's Ctrl-C, not a crash.
            if not noted() or ctx.meta.get("cardgen.debug"):
                raise
            _interrupted(ctx)


def _interrupted(ctx: click.Context) -> NoReturn:
    """End a command stopped by Ctrl-C: one line, exit code 130."""
    click.echo("interrupted; previous outputs are left as they were.", err=True)
    ctx.exit(130)


def _output_commands() -> list[str]:
    """The outputs that have a command: their own, or the one every output with options gets."""
    return [name for name, output in OUTPUTS.items() if output.command or output.options]

"""`cardgen validate`: every layer of checks on games, as lines or JSON."""
from __future__ import annotations

from pathlib import Path

import click

from cardgen.commands import games_of


def validate(root: Path, names: tuple[str, ...], output_format: str, layout: bool, lang: str | None) -> bool:
    """Print the findings of the games (all when none is named) and a summary of each; True when none has an
    error (warnings alone pass)."""
    from cardgen.validate import validate_game
    from cardgen.validate.findings import errors_in, format_json, summary

    results = {name: validate_game(root, name, layout=layout, lang=lang) for name in games_of(root, names)}
    if output_format == "json":
        click.echo(format_json(results))
    else:
        for findings in results.values():
            for finding in findings:
                click.secho(str(finding), fg="red" if finding.severity == "error" else "yellow")
        for name, findings in results.items():
            click.echo(summary(name, findings))
    return not any(errors_in(findings) for findings in results.values())

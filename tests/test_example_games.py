"""Every example game of the repository validates with no error, and with no warning but the rulebook
contradictions it ships with (caught by a rule, written up in its README): the first thing a new user runs."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.core.workspace import list_games
from tests.conftest import REPO

# game -> the rules whose warnings it ships with: each a contradiction of its rulebook (see the game's README)
SHIPPED = {"battle-builder": ["monster-hunter-reachable"], "sams-battle": ["draw-pile-lasts"]}


@pytest.mark.parametrize("game", list_games(REPO))
def test_an_example_game_validates_with_no_finding_from_the_cli(game: str) -> None:
    result = CliRunner().invoke(main, ["--root", str(REPO), "validate", game])
    assert result.exit_code == 0, result.output
    *warnings, summary = result.output.strip().splitlines()
    shipped = SHIPPED.get(game, [])
    assert summary == f"{game}: 0 errors, {len(shipped)} warning{'' if len(shipped) == 1 else 's'} (ok)"
    assert [line.rsplit("(", 1)[-1] for line in warnings] == [f"{rule})" for rule in shipped]
    assert all(": warning: " in line for line in warnings)

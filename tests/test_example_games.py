"""Every example game of the repository validates with no finding: the first thing a new user runs."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.core.workspace import list_games
from tests.conftest import REPO


@pytest.mark.parametrize("game", list_games(REPO))
def test_an_example_game_validates_with_no_finding_from_the_cli(game: str) -> None:
    result = CliRunner().invoke(main, ["--root", str(REPO), "validate", game])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{game}: 0 errors, 0 warnings (ok)"

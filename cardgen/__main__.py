"""Allow `python -m cardgen`."""
from cardgen.commands.cli import run

run()

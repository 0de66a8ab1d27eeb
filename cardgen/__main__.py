"""Allow `python -m cardgen`."""
from cardgen.cli import run

run()

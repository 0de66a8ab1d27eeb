"""Compile the code Python makes from text as cardgen's modules are imported (every dataclass's methods, every forward
reference) into the table beside cardgen's bytecode (`cardgen/__pycache__/startup-code.<python>.bin`, see
cardgen/core/startup_code.py), so that no command compiles it again. `make install` runs it, as bench/run.py does
before measuring; run it again after editing a dataclass (until then its methods are compiled as before, in every
process): `.venv/bin/python tools/startup_code.py`.
"""
from __future__ import annotations

from cardgen.core.startup_code import TABLE, write_table


def main() -> None:
    """Write the table and say where."""
    print(f"{write_table()} texts (dataclass methods, forward references) compiled into {TABLE}")


if __name__ == "__main__":
    main()

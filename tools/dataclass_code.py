"""Compile the methods of every dataclass cardgen makes into the table beside its bytecode
(`cardgen/__pycache__/dataclass-code.<python>.bin`, see cardgen/core/dataclass_code.py), so that no command compiles
them again. `make install` runs it, as bench/run.py does before measuring; run it again after editing a dataclass
(until then its methods are compiled as before, in every process): `.venv/bin/python tools/dataclass_code.py`.
"""
from __future__ import annotations

from cardgen.core.dataclass_code import TABLE, write_table


def main() -> None:
    """Write the table and say where."""
    print(f"{write_table()} dataclass methods compiled into {TABLE}")


if __name__ == "__main__":
    main()

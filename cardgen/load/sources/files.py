"""Sources that are files in the project: where a deck's file is, and the CSV, YAML and XLSX readers."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cardgen.core.errors import CardgenError, relative

if TYPE_CHECKING:
    from cardgen.load.data import Table
    from cardgen.load.manifest import DataSource, Game


def local_file(game: Game, source: DataSource) -> tuple[Path, str]:
    """The path of a deck's data file and its name in findings; an error when it lies outside the project, is not
    there or is larger than MAX_DATA_BYTES (it is read whole: refused before it is read)."""
    from cardgen.load.data import MAX_DATA_BYTES

    path = (game.data_dir / source.location).resolve()
    shown_as = relative(game.data_dir / source.location, game.root)
    if not path.is_relative_to(game.root.resolve()):
        raise CardgenError("the data file lies outside the project folder", file=shown_as)
    try:
        if not path.is_file():
            raise CardgenError("the data file does not exist", file=shown_as)
        size = path.stat().st_size
    except OSError as exc:
        raise CardgenError(f"cannot read the file: {exc.strerror or exc}", file=shown_as) from None
    if size > MAX_DATA_BYTES:
        raise CardgenError(f"the data file is {size / 1e6:,.0f} MB, more than the limit of "
                           f"{MAX_DATA_BYTES / 1e6:,.0f} MB", file=shown_as, rule="too-long")
    return path, shown_as


def read_csv(path: Path, shown_as: str, source: DataSource) -> Table:
    """A CSV, TSV or text file (`delimiter:` and `encoding:` of the source, else detected)."""
    from cardgen.load.data import read_csv_table

    return read_csv_table(path, shown_as, source.delimiter, source.encoding)


def read_yaml(path: Path, shown_as: str, source: DataSource) -> Table:
    """A YAML file holding a list of mappings."""
    from cardgen.load.data import read_yaml_table

    return read_yaml_table(path, shown_as)


def read_xlsx(path: Path, shown_as: str, source: DataSource) -> Table:
    """One sheet of an XLSX workbook (`sheet:` of the source, else the first)."""
    from cardgen.load.data import read_xlsx_table

    return read_xlsx_table(path, shown_as, source.sheet)

"""cardgen: print-and-play card generation from spreadsheets and SVG templates."""

__version__ = "0.1.0"

# Before any of cardgen's modules makes a dataclass: their methods' code compiled at install (see the module).
from cardgen.core.dataclass_code import install as _install_dataclass_code  # noqa: E402

_install_dataclass_code()

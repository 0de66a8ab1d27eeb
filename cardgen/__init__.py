"""cardgen: print-and-play card generation from spreadsheets and SVG templates."""

__version__ = "0.1.0"

# Before any of cardgen's modules makes a dataclass: the code of their methods (and of typing's forward references)
# compiled at install, not at every start (see the module).
from cardgen.core.startup_code import install as _install_startup_code  # noqa: E402

_install_startup_code()

"""cardgen: print-and-play card generation from spreadsheets and SVG templates."""

__version__ = "0.1.0"

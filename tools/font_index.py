"""Write the index of cardgen's bundled fonts (`fonts/metrics.json`): each face's names, sizes and advances as
fontTools reads them, so that a build needs neither fontTools nor the font files to measure text with them.

Run it after adding, removing or updating a bundled font: `.venv/bin/python tools/font_index.py`
(tests/test_font_index.py fails until then).
"""
from __future__ import annotations

import json

from cardgen.core import bundled
from cardgen.load import fonts


def index() -> dict[str, dict]:
    """The index of the bundled fonts, read from their files now."""
    return {path.name: fonts.index_entry(fonts._parse_face(path)) for path in sorted(bundled.FONTS_DIR.iterdir())
            if path.suffix.lower() in fonts.FONT_SUFFIXES}


def main() -> None:
    """Write the index next to the fonts."""
    target = bundled.FONTS_DIR / fonts.FONT_INDEX
    target.write_text(json.dumps(index(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()

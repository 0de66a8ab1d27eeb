"""Write the cairo declarations cardgen ships (`cardgen/assets/cairo/declarations.txt`): cairocffi's C headers as
cffi parses them, for the cairocffi and cffi installed, so that no process parses them again (see
cardgen/raster/cairo_bindings.py).

Run it after updating cairocffi or cffi: `.venv/bin/python tools/cairo_declarations.py`
(tests/test_cairo_bindings.py fails until then).
"""
from __future__ import annotations

from cardgen.raster import cairo_bindings


def main() -> None:
    """Parse cairocffi's declarations in this process and write them where cardgen ships them."""
    text = cairo_bindings.shipped_text()
    if text is None:
        raise SystemExit("cairocffi's declarations cannot be kept (xcffib installed, or another cairocffi layout)")
    cairo_bindings.SHIPPED.parent.mkdir(parents=True, exist_ok=True)
    cairo_bindings.SHIPPED.write_text(text, encoding="utf-8")
    print(f"wrote {cairo_bindings.SHIPPED}")


if __name__ == "__main__":
    main()

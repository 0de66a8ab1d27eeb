"""cardgen's bundled icon set (see ATTRIBUTION.md here), installed as the package `cardgen.assets.icons`.

This file makes the folder a regular package: pyproject's package-dir maps it into cardgen's package, and an
editable install can map only a package that has one (setuptools' editable finder does not reach a namespace
package mapped elsewhere, pypa/setuptools#4943). cardgen finds the folder through it (`cardgen.core.bundled`).
"""

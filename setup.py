"""The list of packages; the rest of the build is declared in pyproject.toml.

Every package of `cardgen/` (found, so that a new folder needs no edit here), and the repository's top-level
`fonts/` and `icons/`, which pyproject's package-dir maps into the package as `cardgen.assets.fonts` and
`cardgen.assets.icons` (pyproject.toml cannot list found packages and named ones together).
"""
from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["cardgen*"]), "cardgen.assets.fonts", "cardgen.assets.icons"])

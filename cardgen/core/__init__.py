"""The base of every stage: errors, units, file names and storage (atomic writes, verified caches), the
folders cardgen may replace, YAML and expressions, progress, the output registry and cardgen's own
bundled files. Imports nothing else of cardgen.
"""

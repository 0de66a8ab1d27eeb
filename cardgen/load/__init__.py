"""A game read from disk: game.yaml (the manifest and its includes), the data files as typed cards, the
markup of card text, fonts, icons and SVG art, and whether the last build is still current (freshness).
"""

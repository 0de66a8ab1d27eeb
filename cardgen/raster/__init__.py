"""SVG to pixels: cairosvg in a pool of render workers, and the card images' content-addressed cache.
"""

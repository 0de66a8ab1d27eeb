"""One game's build: its plan (card files, build.json), the stages run beside the drawing, and watch.
"""

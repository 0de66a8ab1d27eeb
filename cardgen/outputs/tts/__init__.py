"""Tabletop Simulator export: deck sheet images, token and board images, and a saved-object JSON.

Writes `output/<game>/tts/`: `<Game-title>.json` (every deck face down, tokens, bags and boards, laid out on the
table by `layout.py`), `<Game-title>.png` (256 x 256 thumbnail) and the images, named with a hash of their
content so that Tabletop Simulator, which caches images by URL, never shows a stale one.

The modules, lowest first: `sizes.py` (mm to table units), `layout.py` (places on the table), `sheets.py` (sheet
packing, keys and GUIDs, as plain data), `urls.py` (image addresses), `objects.py` (the fields every object has,
rich text, push tags, the JSON file), `pictures.py` (every image as a recipe), `work.py` (the recipes shared out to
the render workers), `decks.py`, `tokens.py` and `boards.py` (the objects of each kind and their images),
`thumbnail.py`, `exporter.py` (one game's images, and its objects laid out on the table), `stage.py` (`TTSStage`,
the registry's entry); `install.py` copies an export into Tabletop Simulator's Saved Objects folder. Nothing is
imported here, so that a command importing one of them (`install`, `objects`) does not load the whole export.
"""

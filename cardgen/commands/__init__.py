"""The commands of `cardgen`: one module per command with logic (build and watch, print, tts); `cli.py` holds the
group and the one-line commands. A command parses its options and calls one function.

Modules here import only what their command needs: `cardgen build` with nothing to do loads no pydantic.
"""

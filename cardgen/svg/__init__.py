"""Cards drawn as SVG: the sandboxed Jinja environment, its template helpers and text layout, and the
game loaded once per build with its renderer (`BuildContext`).
"""

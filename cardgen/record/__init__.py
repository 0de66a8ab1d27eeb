"""build.json, typed (`BuildRecord`), and the changes between two builds.
"""

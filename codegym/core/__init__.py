"""The bottom layer: resource limits, text spaces, the language table, the YAML loader, paths.

Nothing here imports another codegym package.
"""

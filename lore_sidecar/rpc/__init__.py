"""The protocol layer: the only package that imports pygls."""

"""Argus: a tile-based kernel language with a verifying language server."""

__version__ = "0.1.0"

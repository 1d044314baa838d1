"""The version of portakern (also in pyproject.toml; a test checks they agree)."""

__version__ = "0.1.0"

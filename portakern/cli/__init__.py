"""The ``portakern`` command line."""

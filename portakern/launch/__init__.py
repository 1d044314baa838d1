"""Launching: argument checks, backend resolution, ownership, timing, debug, recipes."""

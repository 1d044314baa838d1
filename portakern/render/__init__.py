"""Rendering: the lowered kernel through the per-dialect templates in templates/."""

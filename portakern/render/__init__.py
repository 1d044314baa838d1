"""Rendering: the lowered kernel through the per-dialect templates in templates/.

The names a backend plugin uses (docs/plugins.md) are re-exported here; the stage
itself is :mod:`portakern.render.emit`.
"""

from .emit import add_template_dir, available_targets, template_dirs

__all__ = ["add_template_dir", "available_targets", "template_dirs"]

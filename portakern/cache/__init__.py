"""The rendered-source and compiled-binary stores (memory and disk).

:mod:`portakern.cache.store` keys and stores the artifacts of a kernel variant;
:mod:`portakern.cache.disk` is the private on-disk directory under them. The names
users meet (docs/api.md) are re-exported here.
"""

from .store import CacheWarning, clear

__all__ = ["CacheWarning", "clear"]

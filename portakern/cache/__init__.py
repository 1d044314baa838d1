"""The rendered-source and compiled-binary stores (memory and disk)."""

"""Building blocks: scans and copy_if, built from the kernel language."""

"""The user's source: the Jinja template, its line map, and -D constants."""

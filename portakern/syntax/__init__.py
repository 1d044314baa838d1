"""The kernel language's front end: tokens, the parser, the statement tree."""

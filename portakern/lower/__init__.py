"""Lowering: the @ constructs expanded on the tree, per execution model."""

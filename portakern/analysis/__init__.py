"""Readers of the parsed kernel that publish facts: convergence, bounds, portability."""

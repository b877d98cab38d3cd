"""Seed groups: runs grouped by config minus chosen keys, mean curves with bands, and A-vs-B statistics."""

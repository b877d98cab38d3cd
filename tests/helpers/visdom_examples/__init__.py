"""Visdom 0.2.4's own demo functions (example/components/*.py of its git tag; the sdist leaves them out)."""

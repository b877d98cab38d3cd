"""Alembic migration environment and revisions for the paneboard store (package so the wheel ships it)."""

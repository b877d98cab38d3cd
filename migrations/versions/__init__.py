"""Alembic revisions, one head."""

"""Alembic revisions: self-contained raw SQL, never importing application code."""

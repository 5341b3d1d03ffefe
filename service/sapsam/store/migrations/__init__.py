"""Alembic migrations of the sapsam schema (env.py and versions/); a package so installs ship it."""

"""Alembic migrations of the sapsam schema (env.py and versions/). A package so that the wheel
ships it, as ``sapsam.migrations`` (service/sapsam/migrations is a symbolic link to this folder)."""

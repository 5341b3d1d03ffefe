"""Alembic migrations of the sapsam schema (env.py and versions/). A package so that the wheel
ships it, as ``sapsam.migrations`` (setup.py maps this folder there)."""

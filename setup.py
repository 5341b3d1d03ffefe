"""Where the ``sapsam`` distribution's packages are; everything else is in pyproject.toml.

The server's packages are under ``service/``; the alembic migrations are at the repository's top
level (``migrations/``, as design.md lays the project out) and ship inside the wheel as
``sapsam/migrations``, so an installed ``sapsam migrate`` finds them. pyproject.toml alone cannot
say both (``packages.find`` searches one root and ignores a mapping for a package it did not
find), hence this file.
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages("service", include=["sapsam", "sapsam.*"]),
        "sapsam.migrations",
        "sapsam.migrations.versions",
    ],
    package_dir={"": "service", "sapsam.migrations": "migrations"},
)

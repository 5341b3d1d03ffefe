"""Subcommands of the ``sapsam`` command line, one module each (see ``sapsam.cli``)."""

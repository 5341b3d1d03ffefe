"""``python -m sapsam.cli``: the same as the ``sapsam`` command."""

import sys

from sapsam.cli import main

sys.exit(main())

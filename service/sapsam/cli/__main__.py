"""``python -m sapsam.cli``: the same as the ``sapsam`` command."""

import gc
import sys

# No collection while the command's modules load: ``main`` sets what they made aside and turns
# the collector back on (see there).
gc.disable()
from sapsam.cli import main  # noqa: E402

sys.exit(main())

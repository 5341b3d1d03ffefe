"""sapsam: a gRPC game service for Chinese poker with a verifiable event log."""

import os
import sys

__version__ = "0.1.0"
"""The version of the ``sapsam`` distribution (pyproject.toml reads it from here)."""

# A client that compiles proto/ with protoc's standard flags (``-I proto --python_out=.``) gets
# modules named ``sapsam.v1.*`` (``from sapsam.v1 import table_pb2``) in a ``sapsam/`` folder of
# its own, without an __init__.py: a namespace portion. This regular package would hide it, so
# its path takes in every such folder on sys.path at import (tests/clients/test_protoc_stubs.py).
# Unlike pkgutil.extend_path, another *regular* ``sapsam`` (a second checkout or install) is not
# merged in: one server's modules never mix with another's.
__path__ = list(
    dict.fromkeys(
        [
            *__path__,
            *(
                portion
                for entry in sys.path
                if isinstance(entry, str)
                and os.path.isdir(portion := os.path.abspath(os.path.join(entry, __name__)))
                and not os.path.exists(os.path.join(portion, "__init__.py"))
            ),
        ]
    )
)

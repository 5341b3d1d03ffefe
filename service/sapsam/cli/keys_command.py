"""``sapsam keys show | create | rotate``: the server's signing key, which signs its
transparency log and the receipts of moves (docs/transparency.md; code: ``sapsam.keys``).

Each prints the public keys a player or auditor pins, one per line: ``current <vkey>`` then
``retired <vkey>`` for each key the current one replaced (``--json``: ``{"origin", "current",
"retired"}``). The private key is never printed. The key is ``--key-file``, else
``SAPSAM_SERVER_KEY`` / ``SAPSAM_SERVER_KEY_FILE``, else ``<data dir>/keys/server.key`` with the
data folder ``--data-dir``, else ``SAPSAM_DATA_DIR``, else the user's data directory (the one
``sapsam serve`` uses). ``create`` and ``rotate`` work on the data folder's key file only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from sapsam.keys import (
    ServerKeyError,
    ServerKeys,
    create_key,
    key_name,
    load_server_keys,
    rotate_key,
)

FAILED: Final = 1
HELP: Final = "show, create and rotate the server's signing key"


def register(subparsers: Any) -> None:
    """Add the ``keys`` subcommand."""
    keys = subparsers.add_parser("keys", help=HELP, description=__doc__)
    actions = keys.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="print the public keys to pin", description=_show.__doc__
    )
    show.add_argument("--key-file", type=Path, help="read the key from this file")
    create = actions.add_parser("create", help="make the server key", description=_create.__doc__)
    create.add_argument(
        "--name",
        help="the server's name; the key and the log are sapsam/<name>"
        " (default: SAPSAM_SERVER_NAME, else the host name)",
    )
    rotate = actions.add_parser(
        "rotate", help="replace the key, keeping the old public key", description=_rotate.__doc__
    )
    rotate.add_argument("--name", help="a new server name (default: keep the key's name)")
    for action, handler in ((show, _show), (create, _create), (rotate, _rotate)):
        action.add_argument(
            "--data-dir", help="the server's data folder (default: SAPSAM_DATA_DIR or user data)"
        )
        action.add_argument("--json", action="store_true", help="print JSON instead of text")
        action.set_defaults(handler=handler)


def _data_dir(arguments: argparse.Namespace) -> Path:
    # The folder rule is the embedded database's, imported only when a data folder is needed.
    from sapsam.store.embedded import resolve_data_dir

    return resolve_data_dir(arguments.data_dir)


def _print(keys: ServerKeys, as_json: bool) -> None:
    if as_json:
        print(
            json.dumps(
                {
                    "origin": keys.origin,
                    "current": keys.signer.verifier.vkey(),
                    "retired": [key.vkey() for key in keys.retired],
                }
            )
        )
        return
    print(f"current {keys.signer.verifier.vkey()}")
    for key in keys.retired:
        print(f"retired {key.vkey()}")


def _fail(action: str, error: ServerKeyError) -> int:
    print(f"sapsam keys {action}: {error}", file=sys.stderr)
    return FAILED


def _show(arguments: argparse.Namespace) -> int:
    """Print the public keys of the server's signing key (current, then retired)."""
    try:
        data_dir = None if arguments.key_file else _data_dir(arguments)
        keys = load_server_keys(data_dir, key_file=arguments.key_file)
    except ServerKeyError as error:
        return _fail("show", error)
    _print(keys, arguments.json)
    return 0


def _create(arguments: argparse.Namespace) -> int:
    """Make the server's signing key in the data folder (refused if there is one)."""
    try:
        keys = create_key(_data_dir(arguments), key_name(arguments.name))
    except ServerKeyError as error:
        return _fail("create", error)
    _print(keys, arguments.json)
    return 0


def _rotate(arguments: argparse.Namespace) -> int:
    """Replace the server's signing key with a new one; the old public key is kept as retired,
    so what it signed stays verifiable. Restart the servers to sign with the new key."""
    try:
        name = key_name(arguments.name) if arguments.name else None
        keys = rotate_key(_data_dir(arguments), name)
    except ServerKeyError as error:
        return _fail("rotate", error)
    _print(keys, arguments.json)
    return 0

"""Saved player tokens: one file under the user's config folder, one entry per server.

The file is ``$SAPSAM_TOKEN_FILE`` if set, else ``<config dir>/sapsam/tokens.json`` where the
config dir is ``$XDG_CONFIG_HOME``, ``%APPDATA%`` on Windows, ``~/Library/Application Support`` on
macOS, else ``~/.config``. It is written readable by its owner only: a token is a password.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from sapsam_client.private_file import locked, read_json, write_private

TOKEN_FILE_VARIABLE = "SAPSAM_TOKEN_FILE"


@dataclass(frozen=True)
class SavedPlayer:
    """A registered player as saved for one server."""

    player: str
    display_name: str
    token: str


def config_dir() -> Path:
    """The user's configuration folder for applications."""
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"])
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path.home() / ".config"


def token_file(explicit: str | Path | None = None) -> Path:
    """Where tokens are saved: ``explicit``, else ``$SAPSAM_TOKEN_FILE``, else the config dir."""
    if explicit:
        return Path(explicit)
    if os.environ.get(TOKEN_FILE_VARIABLE):
        return Path(os.environ[TOKEN_FILE_VARIABLE])
    return config_dir() / "sapsam" / "tokens.json"


def saved_player(entry: object) -> SavedPlayer | None:
    """The player a saved entry (``player``, ``display_name``, ``token``) holds, if it is one."""
    if not isinstance(entry, dict):
        return None
    try:
        return SavedPlayer(entry["player"], entry["display_name"], entry["token"])
    except KeyError:
        return None


def load_player(path: Path, server: str) -> SavedPlayer | None:
    """The player saved for ``server``, if any."""
    return saved_player(read_json(path).get(server))


def save_player(path: Path, server: str, player: SavedPlayer) -> None:
    """Save ``player`` for ``server`` (keeping other servers' entries, also those another
    process saves meanwhile), owner-only."""
    with locked(path):
        data = read_json(path)
        data[server] = asdict(player)
        write_private(path, data)

"""Saved player tokens: one file under the user's config folder, one entry per server.

The file is ``$SAPSAM_TOKEN_FILE`` if set, else ``<config dir>/sapsam/tokens.json`` where the
config dir is ``$XDG_CONFIG_HOME``, ``%APPDATA%`` on Windows, ``~/Library/Application Support`` on
macOS, else ``~/.config``. It is written readable by its owner only: a token is a password.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

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


def _read(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def load_player(path: Path, server: str) -> SavedPlayer | None:
    """The player saved for ``server``, if any."""
    entry = _read(path).get(server)
    if not isinstance(entry, dict):
        return None
    try:
        return SavedPlayer(entry["player"], entry["display_name"], entry["token"])
    except KeyError:
        return None


def save_player(path: Path, server: str, player: SavedPlayer) -> None:
    """Save ``player`` for ``server`` (keeping other servers' entries), owner-only."""
    data = _read(path)
    data[server] = asdict(player)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    temporary.replace(path)

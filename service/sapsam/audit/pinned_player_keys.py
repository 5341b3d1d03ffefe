"""Players' public keys pinned by the reader: ``sapsam audit verify FILE --player-key
PLAYER=KEY`` (docs/audit.md §4.2).

The ``player_signature[s]`` checks (``sapsam.audit.player_signatures``) show that each signed
move verifies under the key recorded beside it, for the player seated there. They cannot show that
the key is the player's: a forger who rewrites the whole log can sign with keys of its own. A
reader who knows a player's keys — the player itself (the SDK keeps its key), or an auditor who
fetched them (``GetPlayer``'s ``public_keys``) — pins them, and one more check per pinned player,
``pinned_player_key[<player>]``, says:

* FAILED when a move of that player (at a seat ``PlayerSeated``, or a later ``SeatReplaced``,
  gives it) is signed by a key not pinned for it;
* PASSED when the player has signed moves in the export and every one is by a pinned key;
* NOT COVERED when the player is not seated in the export, or none of its moves is signed (a move
  made before it registered a key is unsigned, and a pin carries no date; the
  ``player_signature`` check names a player who signed a move and left a later one unsigned).

The checks are pure: the export is read as parsed (``read_export``); malformed fields are left
to the verifier's own checks. ``pins_from_options`` reads the options, and the key files they
name (at most ``MAX_KEY_FILE_CHARS`` read of each).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from typing import Final

from sapsam.audit.export_format import AuditExport
from sapsam.audit.report import AuditCheck, AuditReport, Status
from sapsam.plurals import plural

__all__ = [
    "PinError",
    "parse_keys",
    "parse_player",
    "pinned_key_checks",
    "pins_from_options",
    "with_pinned_keys",
]

PUBLIC_KEY_HEX_DIGITS: Final = 64
"""An Ed25519 public key: 32 bytes, written as 64 hex digits."""
MAX_KEYS_PER_PIN: Final = 64
"""Keys a pin may list for one player (a player registers at most 8)."""
MAX_PLAYER_ID_CHARS: Final = 128
"""A pinned player's id (the server's are UUIDs, 36 characters)."""
MAX_KEY_FILE_CHARS: Final = 1 << 16
"""Characters read of a key file (64 keys of 64 hex digits with comments fit many times over)."""
_MOVES: Final = {
    "NaturalDeclared": "declaration",
    "ArrangementCommitted": "commit",
    "ArrangementRevealed": "reveal",
    "SurrenderAnnounced": "announcement",
    "CardsPlaced": "placement",
    "FantasylandCommitted": "Fantasyland commitment",
    "FantasylandRevealed": "Fantasyland reveal",
    "DiscardsRevealed": "discards' opening",
}
_SEATINGS: Final = ("PlayerSeated", "SeatReplaced")
_PLAYERS_PREFIX: Final = "players/"


class PinError(ValueError):
    """A pin that cannot be read; the message says why."""


def with_pinned_keys(
    report: AuditReport, export: AuditExport | None, values: Iterable[str]
) -> AuditReport:
    """``report`` (of ``export``, None when it was unreadable) with a ``pinned_player_key`` check
    per player the ``--player-key`` ``values`` pin; ``PinError`` for a pin that cannot be read."""
    pins = pins_from_options(values)
    if export is None:
        return report  # its format check says why already
    return report.with_checks(pinned_key_checks(export, pins))


def pins_from_options(values: Iterable[str]) -> dict[str, frozenset[bytes]]:
    """The pins of ``--player-key PLAYER=KEY`` options: KEY is 64 hex digits or a file of such
    keys, one per line; a player pinned twice gets both sets of keys."""
    pins: dict[str, frozenset[bytes]] = {}
    for value in values:
        player_text, equals, key_text = value.partition("=")
        if not equals:
            raise PinError(f"{value[:80]!r} is not PLAYER=KEY (a key in hex, or a file of keys)")
        player = parse_player(player_text)
        if len(key_text.strip()) == PUBLIC_KEY_HEX_DIGITS and not os.path.exists(key_text):
            keys = parse_keys([key_text])
        else:
            try:
                with open(key_text, encoding="utf-8") as handle:
                    text = handle.read(MAX_KEY_FILE_CHARS + 1)
            except (OSError, UnicodeDecodeError) as error:
                raise PinError(
                    f"{key_text!r}: neither a key of 64 hex digits nor a readable file"
                    f" of keys ({error})"
                ) from None
            if len(text) > MAX_KEY_FILE_CHARS:
                raise PinError(
                    f"{key_text!r}: a key file is at most {MAX_KEY_FILE_CHARS} characters"
                )
            try:
                keys = parse_keys(text.splitlines())
            except PinError as error:
                raise PinError(f"{key_text!r}: {error}") from None
        pins[player] = pins.get(player, frozenset()) | keys
    return pins


def parse_player(text: str) -> str:
    """A pin's player: its id as the log records it (``PlayerSeated.player_id``: the server's
    are UUIDs, written lowercase), or ``players/{id}``."""
    player = text.strip().removeprefix(_PLAYERS_PREFIX)
    if not player or len(player) > MAX_PLAYER_ID_CHARS or any(c.isspace() for c in player):
        raise PinError(f"{text[:80]!r} is not a player id (a UUID, or players/<UUID>)")
    return _normal(player)


def _normal(player: str) -> str:
    try:
        return str(uuid.UUID(player))
    except ValueError:
        return player


def parse_keys(lines: Iterable[str]) -> frozenset[bytes]:
    """Public keys, one per line as 64 hex digits (``#`` comments and blank lines skipped)."""
    keys: set[bytes] = set()
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if len(text) != PUBLIC_KEY_HEX_DIGITS:
            raise PinError(
                f"{text[:80]!r} is not a public key of {PUBLIC_KEY_HEX_DIGITS} hex digits"
            )
        try:
            keys.add(bytes.fromhex(text))
        except ValueError:
            raise PinError(f"{text!r} is not hex") from None
        if len(keys) > MAX_KEYS_PER_PIN:
            raise PinError(f"at most {MAX_KEYS_PER_PIN} keys per player")
    if not keys:
        raise PinError("no public key given")
    return frozenset(keys)


def pinned_key_checks(
    export: AuditExport, pins: Mapping[str, frozenset[bytes]]
) -> list[AuditCheck]:
    """One ``pinned_player_key[<player>]`` check per pinned player, in the pins' order."""
    seated: dict[int, str] = {}  # who holds each seat at this point of the log
    holders: set[str] = set()  # everyone who held a seat in the export
    signed: dict[str, int] = {}
    strangers: dict[str, list[str]] = {}
    for event in export.events:
        data = event.data
        # SeatReplaced gives the seat to another player between deals: the moves after it are
        # the new player's (as the player_signature checks read them).
        if event.type in _SEATINGS:
            seat, player = data.get("seat"), data.get("player_id")
            if isinstance(seat, int) and isinstance(player, str):
                seated[seat] = _normal(player)
                holders.add(seated[seat])
            continue
        if event.type not in _MOVES:
            continue
        seat, key = data.get("seat"), data.get("player_key")
        player = seated.get(seat) if isinstance(seat, int) else None
        if player is None or player not in pins or not isinstance(key, str):
            continue
        signed[player] = signed.get(player, 0) + 1
        try:
            pinned = bytes.fromhex(key) in pins[player]
        except ValueError:
            pinned = False
        if not pinned:
            kind = _MOVES[event.type]
            deal = data.get("deal_number")
            strangers.setdefault(player, []).append(
                f"the {kind} of deal {deal}, seat {seat} (version {event.version}) is signed by"
                f" key {key[:64]}"
            )
    return [_check(player, pins[player], player in holders, signed, strangers) for player in pins]


def _check(
    player: str,
    keys: frozenset[bytes],
    present: bool,
    signed: Mapping[str, int],
    strangers: Mapping[str, list[str]],
) -> AuditCheck:
    name = f"pinned_player_key[{player}]"
    pinned = ", ".join(sorted(key.hex() for key in keys))
    found = strangers.get(player)
    if found:
        return AuditCheck(
            name,
            Status.FAILED,
            f"player {player}: {plural(len(found), 'signed move')} by a key not pinned for it: "
            + "; ".join(found),
            f"every signed move of player {player} by a pinned key ({pinned})",
            found[0],
        )
    if not present:
        return AuditCheck(name, Status.NOT_COVERED, f"player {player} holds no seat in the export")
    if not signed.get(player):
        return AuditCheck(
            name,
            Status.NOT_COVERED,
            f"player {player} signed none of its moves in the export: nothing to hold to its keys",
        )
    return AuditCheck(
        name,
        Status.PASSED,
        f"player {player}'s {plural(signed[player], 'signed move')}"
        f" {'is' if signed[player] == 1 else 'are all'} by pinned keys",
    )

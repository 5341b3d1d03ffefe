"""The player's own Ed25519 key: created on first use, kept on the client, never sent.

docs/fairness.md §19: a player registers the public key once (``RegisterPlayerKey``, with a proof
that it holds the private key) and signs every commit, reveal and announcement, and every
open-face placement and Fantasyland commit and reveal, with it; the server
records each signature, so anyone can check from the log that the player seated at a seat made
its moves. The private key stays in one JSON file beside the token file (``player-keys.json``),
readable by its owner only, one entry per server and player. This module is written from the
specification alone (the tests hold it to the published vectors).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from sapsam_client.commitment import Rows, _length_prefixed, encode_rows
from sapsam_client.private_file import locked, read_json, write_private
from sapsam_client.tokens import token_file

KEY_FILE_NAME: Final = "player-keys.json"
KEY_FILE_VARIABLE: Final = "SAPSAM_PLAYER_KEY_FILE"
TAG_REGISTRATION: Final = b"sapsam/player-key/v1/registration"
TAG_COMMIT: Final = b"sapsam/player-signature/v1/commit"
TAG_REVEAL: Final = b"sapsam/player-signature/v1/reveal"
TAG_DECLARE: Final = b"sapsam/player-signature/v1/declare"
TAG_ANNOUNCE: Final = b"sapsam/player-signature/v1/announce"
TAG_PLACE: Final = b"sapsam/player-signature/v1/place"
TAG_FANTASYLAND_COMMIT: Final = b"sapsam/player-signature/v1/fantasyland-commit"
TAG_FANTASYLAND_REVEAL: Final = b"sapsam/player-signature/v1/fantasyland-reveal"


def registration_message(player_id: str, public_key: bytes) -> bytes:
    """``lp(tag) || lp(utf8(player_id)) || lp(public_key)``: what the key signs to register."""
    return (
        _length_prefixed(TAG_REGISTRATION)
        + _length_prefixed(player_id.encode("utf-8"))
        + _length_prefixed(public_key)
    )


def _where(table_id: uuid.UUID | str, deal_number: int, seat: int, player_id: str) -> bytes:
    table = table_id if isinstance(table_id, uuid.UUID) else uuid.UUID(str(table_id))
    return (
        table.bytes
        + deal_number.to_bytes(8, "big")
        + seat.to_bytes(1, "big")
        + _length_prefixed(player_id.encode("utf-8"))
    )


def commit_message(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    scheme: int,
    commitment: bytes,
    *,
    tag: bytes = TAG_COMMIT,
) -> bytes:
    """What a player signs to commit (docs/fairness.md §19); ``tag``: ``TAG_FANTASYLAND_COMMIT``
    to set an open-face Fantasyland hand."""
    return (
        _length_prefixed(tag)
        + _where(table_id, deal_number, seat, player_id)
        + scheme.to_bytes(1, "big")
        + _length_prefixed(commitment)
    )


def declare_message(
    table_id: uuid.UUID | str, deal_number: int, seat: int, player_id: str, commitment: bytes
) -> bytes:
    """What a player signs to declare a natural (docs/fairness.md §19, §21)."""
    return (
        _length_prefixed(TAG_DECLARE)
        + _where(table_id, deal_number, seat, player_id)
        + _length_prefixed(commitment)
    )


def announce_message(
    table_id: uuid.UUID | str, deal_number: int, seat: int, player_id: str, surrender: bool
) -> bytes:
    """What a player signs to announce play (byte 00) or surrender (01) (docs/fairness.md §19)."""
    return (
        _length_prefixed(TAG_ANNOUNCE)
        + _where(table_id, deal_number, seat, player_id)
        + (b"\x01" if surrender else b"\x00")
    )


def reveal_message(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    rows: Rows,
    nonce: bytes,
    *,
    tag: bytes = TAG_REVEAL,
) -> bytes:
    """What a player signs to reveal (docs/fairness.md §19); ``tag``: ``TAG_FANTASYLAND_REVEAL``
    to open an open-face Fantasyland hand."""
    return (
        _length_prefixed(tag)
        + _where(table_id, deal_number, seat, player_id)
        + encode_rows(rows)
        + _length_prefixed(nonce)
    )


def place_message(
    table_id: uuid.UUID | str,
    deal_number: int,
    seat: int,
    player_id: str,
    street: int,
    placement: Rows,
    discard_commitment: bytes = b"",
) -> bytes:
    """What a player signs to place a street's cards face up at an open-face table: the street,
    what each row gains, and a Pineapple street's discard commitment (else empty)
    (docs/fairness.md §19)."""
    return (
        _length_prefixed(TAG_PLACE)
        + _where(table_id, deal_number, seat, player_id)
        + street.to_bytes(1, "big")
        + encode_rows(placement)
        + _length_prefixed(discard_commitment)
    )


@dataclass(frozen=True)
class PlayerKey:
    """A player's Ed25519 key pair (the private half never leaves this object or its file)."""

    private_key: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> PlayerKey:
        """A new key from the operating system's CSPRNG."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, data: bytes) -> PlayerKey:
        """The key whose 32-byte RFC 8032 secret is ``data``."""
        return cls(Ed25519PrivateKey.from_private_bytes(data))

    @property
    def public_key(self) -> bytes:
        """The 32-byte public key, as registered."""
        return self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message``."""
        return self.private_key.sign(message)

    def proof(self, player_id: str) -> bytes:
        """The registration proof for ``player_id`` (the id, not ``players/{id}``)."""
        return self.sign(registration_message(player_id, self.public_key))


def key_file(explicit: str | Path | None = None) -> Path:
    """Where keys are kept: ``explicit``, else ``$SAPSAM_PLAYER_KEY_FILE``, else
    ``player-keys.json`` beside the token file (``sapsam_client.tokens.token_file``)."""
    if explicit:
        return Path(explicit)
    if os.environ.get(KEY_FILE_VARIABLE):
        return Path(os.environ[KEY_FILE_VARIABLE])
    return token_file().with_name(KEY_FILE_NAME)


def load_or_create(path: Path, server: str, player: str) -> PlayerKey:
    """The key kept for ``player`` (``players/{id}``) on ``server``; a new one, saved owner-only
    before it is used, when there is none.

    Several processes may share the file (bots of one machine, a test session's subprocesses):
    the read, the addition and the atomic replace happen under an exclusive lock on
    ``<file>.lock`` (``flock``; where there is none, the threads of one process still take
    turns), each writer through a temporary file of its own, so no process loses another's key
    or finds its temporary file moved away."""
    with locked(path):
        return _load_or_create(path, server, player)


def kept_key(path: Path, server: str, player: str) -> PlayerKey | None:
    """The key kept for ``player`` (``players/{id}``) on ``server``, or None; never makes one
    (a dispute pins the key the player signed with, and a new key would prove nothing)."""
    with locked(path):
        entry = read_json(path).get(f"{server} {player}")
    if isinstance(entry, dict) and isinstance(entry.get("private_key"), str):
        return PlayerKey.from_private_bytes(bytes.fromhex(entry["private_key"]))
    return None


def _load_or_create(path: Path, server: str, player: str) -> PlayerKey:
    entries = read_json(path)
    entry = entries.get(f"{server} {player}")
    if isinstance(entry, dict) and isinstance(entry.get("private_key"), str):
        return PlayerKey.from_private_bytes(bytes.fromhex(entry["private_key"]))
    key = PlayerKey.generate()
    secret = key.private_key.private_bytes_raw()
    entries[f"{server} {player}"] = {
        "server": server,
        "player": player,
        "private_key": secret.hex(),
        "public_key": key.public_key.hex(),
    }
    write_private(path, entries)
    return key

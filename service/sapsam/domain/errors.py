"""Domain errors: a refused command, with a stable reason code a client can branch on.

The reason codes are part of the public contract (they travel in ``google.rpc.ErrorInfo``). Each
is a value of the proto enum ``sapsam.v1.ErrorReason`` (proto/sapsam/v1/errors.proto, the one list
clients share), spelled as that value's name without its ``ERROR_REASON_`` prefix; the domain keeps
its own enum because it imports nothing of the API, and tests/api/test_documented_reasons.py
checks that every member here is in the proto enum. The API maps each one to a gRPC status in one
table (``sapsam.api.errors``). Never rename a reason; a new one goes into the proto enum too.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a command was refused. Grouped by the kind of mistake."""

    # Malformed content: the request itself is wrong, whatever the table's state.
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    BAD_SEAT_COUNT = "BAD_SEAT_COUNT"
    BAD_RULE_SET = "BAD_RULE_SET"
    BAD_COMMITMENT = "BAD_COMMITMENT"
    BAD_NONCE = "BAD_NONCE"
    BAD_ENTROPY = "BAD_ENTROPY"
    BAD_CUT_POSITION = "BAD_CUT_POSITION"
    BAD_CARDS = "BAD_CARDS"
    BAD_SEED = "BAD_SEED"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    UNKNOWN_SEAT = "UNKNOWN_SEAT"
    # Right request, wrong moment.
    WRONG_PHASE = "WRONG_PHASE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    TABLE_NOT_CREATED = "TABLE_NOT_CREATED"
    SEAT_TAKEN = "SEAT_TAKEN"
    TABLE_FULL = "TABLE_FULL"
    ALREADY_SEATED = "ALREADY_SEATED"
    ALREADY_CONTRIBUTED = "ALREADY_CONTRIBUTED"
    ALREADY_CONFIRMED = "ALREADY_CONFIRMED"
    ALREADY_REVEALED = "ALREADY_REVEALED"
    NO_COMMITMENT = "NO_COMMITMENT"
    COMMITMENT_MISMATCH = "COMMITMENT_MISMATCH"
    SEED_MISMATCH = "SEED_MISMATCH"
    SEAT_TIMED_OUT = "SEAT_TIMED_OUT"
    WRONG_DEAL = "WRONG_DEAL"
    NOTHING_TIMED_OUT = "NOTHING_TIMED_OUT"
    SERIES_COMPLETE = "SERIES_COMPLETE"
    SIGNATURE_REQUIRED = "SIGNATURE_REQUIRED"
    SURRENDER_OFF = "SURRENDER_OFF"
    ALREADY_ANNOUNCED = "ALREADY_ANNOUNCED"
    WRONG_GAME = "WRONG_GAME"
    """A command of one game family at a table of another (open face's PlaceCards at a closed
    table, the closed game's CommitArrangement at an open-face one)."""
    # Who is asking.
    NOT_SEATED = "NOT_SEATED"
    # Existence.
    TABLE_EXISTS = "TABLE_EXISTS"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    DEAL_NOT_FOUND = "DEAL_NOT_FOUND"
    # Retries.
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    # Tournaments (sapsam.domain.tournament).
    TOURNAMENT_EXISTS = "TOURNAMENT_EXISTS"
    TOURNAMENT_NOT_FOUND = "TOURNAMENT_NOT_FOUND"
    REGISTRATION_NOT_OPEN = "REGISTRATION_NOT_OPEN"
    REGISTRATION_CLOSED = "REGISTRATION_CLOSED"
    ALREADY_REGISTERED = "ALREADY_REGISTERED"
    NOT_REGISTERED = "NOT_REGISTERED"
    TOURNAMENT_FULL = "TOURNAMENT_FULL"
    ALREADY_STARTED = "ALREADY_STARTED"
    TOO_FEW_PLAYERS = "TOO_FEW_PLAYERS"
    PLAYER_SEATED = "PLAYER_SEATED"
    NOT_A_TOURNAMENT_TABLE = "NOT_A_TOURNAMENT_TABLE"
    ALREADY_CREDITED = "ALREADY_CREDITED"
    ROUND_NOT_COMPLETE = "ROUND_NOT_COMPLETE"
    TOURNAMENT_COMPLETE = "TOURNAMENT_COMPLETE"
    TOURNAMENT_PAUSED = "TOURNAMENT_PAUSED"
    TOURNAMENT_NOT_PAUSED = "TOURNAMENT_NOT_PAUSED"
    TOURNAMENT_CANCELLED = "TOURNAMENT_CANCELLED"
    PLAYER_FORFEITED = "PLAYER_FORFEITED"
    # Naturals (sapsam.domain.table_naturals).
    NATURALS_NOT_PLAYED = "NATURALS_NOT_PLAYED"
    DECLARATION_REQUIRED = "DECLARATION_REQUIRED"
    ALREADY_DECLARED = "ALREADY_DECLARED"
    DECLARATION_MISMATCH = "DECLARATION_MISMATCH"


class DomainError(Exception):
    """A command the table refuses. It produced no events.

    ``field`` names the offending request field for malformed content, so the API can return a
    ``google.rpc.BadRequest`` field violation.
    """

    def __init__(self, reason: Reason, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field

    def __repr__(self) -> str:
        return f"DomainError({self.reason.value}, {self.message!r}, field={self.field!r})"

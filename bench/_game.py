"""Requests a scripted seat sends, built ahead of the calls that carry them.

A seat's arrangement (solved, or random legal rows) and its commitment and reveal requests are made
here from its dealt cards, so a benchmark can prepare them outside the part it measures. Given
the seat's player id and key, they are what the SDK sends by default: commitment scheme 2 (bound
to the player id, docs/fairness.md §12.1) and both moves signed by the player's registered key
(§19); without, scheme 1 and unsigned.
"""

from __future__ import annotations

import os
import random
import uuid
from dataclasses import dataclass

from sapsam_client.commitment import Rows, arrangement_commitment, card_text, fresh_nonce
from sapsam_client.player_key import PlayerKey, commit_message, reveal_message
from sapsam_client.rules import random_legal_rows, solver_rows
from sapsam_proto.v1 import table_pb2, table_service_pb2

SEATS = 4
RULE_SET = "pagat"
DEAL_RPCS = 24
"""RPCs of one deal as the scripted table plays it: StartDeal, 4 ContributeEntropy, GetTable,
CutDeck, 4 GetMyHand, 4 CommitArrangement, 4 ConfirmArrangement, 4 RevealArrangement,
GetDealResult."""


def request_id() -> str:
    """A fresh request id."""
    return str(uuid.uuid4())


def bearer(token: str) -> tuple[tuple[str, str]]:
    """Call metadata carrying a player's token."""
    return (("authorization", f"Bearer {token}"),)


def create_table_request() -> table_service_pb2.CreateTableRequest:
    """A four-seat table of the default rule set that plays series after series."""
    return table_service_pb2.CreateTableRequest(
        request_id=request_id(),
        rule_set_preset=RULE_SET,
        seat_count=SEATS,
        after_series=table_service_pb2.AFTER_SERIES_NEW_SERIES,
    )


@dataclass(frozen=True)
class PreparedSeat:
    """One seat's commitment and reveal for one deal, ready to send."""

    commit: table_service_pb2.CommitArrangementRequest
    reveal: table_service_pb2.RevealArrangementRequest


def prepare_seat(
    table: str,
    deal_number: int,
    seat: str,
    cards: tuple[str, ...],
    *,
    solve: bool,
    generator: random.Random | None = None,
    player_id: str | None = None,
    key: PlayerKey | None = None,
    confirm: bool = False,
) -> PreparedSeat:
    """The seat's requests for ``cards``: the solver's rows, or random legal ones (never a foul).

    With ``player_id`` (the id, not ``players/{id}``) the commitment is scheme 2 and, with
    ``key`` (registered for that player), both requests are signed, as the SDK sends them;
    ``confirm`` has the commit confirm too (one call instead of two)."""
    if solve:
        rows: Rows = solver_rows(cards)
    else:
        rows = random_legal_rows(cards, generator or random.Random())
    position = int(seat.rsplit("/", 1)[1])
    table_id = uuid.UUID(table.split("/")[1])
    nonce = os.urandom(16) if player_id is None else fresh_nonce()
    scheme = 1 if player_id is None else 2
    commitment = arrangement_commitment(
        table_id, deal_number, position, rows, nonce, scheme=scheme, player_id=player_id
    )
    commit = table_service_pb2.CommitArrangementRequest(
        request_id=request_id(),
        seat=seat,
        commitment=commitment,
        commitment_scheme=scheme,
        confirm=confirm,
    )
    reveal = table_service_pb2.RevealArrangementRequest(
        request_id=request_id(),
        seat=seat,
        arrangement=table_pb2.Arrangement(
            front=list(rows.front), middle=list(rows.middle), back=list(rows.back)
        ),
        nonce=nonce,
    )
    if key is not None and player_id is not None:
        commit.signature.public_key = reveal.signature.public_key = key.public_key
        commit.signature.signature = key.sign(
            commit_message(table_id, deal_number, position, player_id, scheme, commitment)
        )
        reveal.signature.signature = key.sign(
            reveal_message(table_id, deal_number, position, player_id, rows, nonce)
        )
    return PreparedSeat(commit, reveal)


def warm_up_rules() -> None:
    """Build the rules' lookup tables now (about 0.5 s of CPU, once per process), not during the
    first hand a measured window sees."""
    random_legal_rows(tuple(card_text(index) for index in range(0, 52, 4)), random.Random(0))

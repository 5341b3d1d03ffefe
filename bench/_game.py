"""Requests a scripted seat sends, built ahead of the calls that carry them.

A seat's arrangement (solved, or random legal rows) and its commitment and reveal requests are made
here from its dealt cards, so a benchmark can prepare them outside the part it measures.
"""

from __future__ import annotations

import os
import random
import uuid
from dataclasses import dataclass

from sapsam_client.commitment import Rows, arrangement_commitment, card_text
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
) -> PreparedSeat:
    """The seat's requests for ``cards``: the solver's rows, or random legal ones (never a foul)."""
    if solve:
        rows: Rows = solver_rows(cards)
    else:
        rows = random_legal_rows(cards, generator or random.Random())
    nonce = os.urandom(16)
    position = int(seat.rsplit("/", 1)[1])
    table_id = uuid.UUID(table.split("/")[1])
    commitment = arrangement_commitment(table_id, deal_number, position, rows, nonce)
    return PreparedSeat(
        table_service_pb2.CommitArrangementRequest(
            request_id=request_id(), seat=seat, commitment=commitment
        ),
        table_service_pb2.RevealArrangementRequest(
            request_id=request_id(),
            seat=seat,
            arrangement=table_pb2.Arrangement(
                front=list(rows.front), middle=list(rows.middle), back=list(rows.back)
            ),
            nonce=nonce,
        ),
    )


def warm_up_rules() -> None:
    """Build the rules' lookup tables now (about 0.5 s of CPU, once per process), not during the
    first hand a measured window sees."""
    random_legal_rows(tuple(card_text(index) for index in range(0, 52, 4)), random.Random(0))

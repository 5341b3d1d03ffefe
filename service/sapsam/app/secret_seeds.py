"""The deal secrets as the table runner keeps them: each running deal's (and the dealer lot's)
secret seed, read from ``deal_secrets`` once per process; what an append keeps and forgets of
them; and the hands a seed deals.

A seed never changes, so it is read once per process, not at every cut, hand and reveal, and
dropped once the log publishes it (``DealerChosen`` for the lot, ``SeedRevealed`` for a deal).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence

from sapsam import fairness
from sapsam.app.open_face_play import dealt_so_far
from sapsam.app.store_interface import NO_SECRET_CHANGES, SecretChanges, StoreSession
from sapsam.app.table_memory import CACHE_SIZE
from sapsam.app.table_plans import SecretMissingError, stream_id_for
from sapsam.domain.events import DealerChosen, DealVoided, Event, SeedRevealed
from sapsam.domain.open_face.deal_state import OpenFaceDeal
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.domain.table import TableState
from sapsam.domain.table_state import DealState
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import Card

# The deal number under which the dealer lot's seed waits in ``deal_secrets`` until it is drawn.
LOT_SECRET_NUMBER = 0


class SecretSeeds:
    """Secret seeds of running deals (and lots) by (table, deal number), as read from or
    written to ``deal_secrets``: the latest ``CACHE_SIZE`` used."""

    def __init__(self) -> None:
        # By (the table id's integer, number): a UUID's hash is Python code.
        self._seeds: OrderedDict[tuple[int, int], bytes] = OrderedDict()

    async def seed(self, session: StoreSession, table_id: uuid.UUID, number: int) -> bytes:
        """A running deal's (or, for number 0, the dealer lot's) secret seed."""
        seed = self._seeds.get((table_id.int, number))
        if seed is None:
            seed = await session.load_secret(stream_id_for(table_id), number)
            if seed is None:
                raise SecretMissingError(f"the seed of deal {number} of table {table_id} is gone")
            self.remember(table_id, number, seed)
        return seed

    async def seed_if_any(
        self, session: StoreSession, table_id: uuid.UUID, deal: DealState | OpenFaceDeal | None
    ) -> bytes | None:
        """The seed of ``deal`` (the table's current one), or None when there is no deal or its
        seed is gone (published): timing seats out then reveals nothing, and decide says so."""
        if deal is None:
            return None
        try:
            return await self.seed(session, table_id, deal.number)
        except SecretMissingError:
            return None

    def known(self, table_id: uuid.UUID, number: int) -> bytes | None:
        """The seed if this process holds it (no read, and no change to what is kept)."""
        return self._seeds.get((table_id.int, number))

    def remember(self, table_id: uuid.UUID, number: int, seed: bytes) -> None:
        """Keep a seed just written to (or read from) ``deal_secrets``."""
        key = (table_id.int, number)
        self._seeds[key] = seed
        self._seeds.move_to_end(key)
        while len(self._seeds) > CACHE_SIZE:
            self._seeds.popitem(last=False)

    def forget_published(self, table_id: uuid.UUID, recorded: Sequence[RecordedEvent]) -> None:
        """Drop the seeds ``recorded`` (a committed append) publishes."""
        for event in recorded:
            number = _published_secret_recorded(event)
            if number is not None:
                self._seeds.pop((table_id.int, number), None)


def secret_changes(keep: tuple[int, bytes] | None, events: Sequence[Event]) -> SecretChanges:
    """In the append's transaction: keep the plan's new secret, and forget every secret the
    appended events publish — the lot seed with ``DealerChosen``, a deal's seed with
    ``SeedRevealed`` or ``DealVoided`` — so a secret is never in both places or in neither."""
    published = tuple(
        number for number in (_published_secret(event) for event in events) if number is not None
    )
    if keep is None and not published:
        return NO_SECRET_CHANGES  # most writes: one shared value, not a new one each
    return SecretChanges(keep=() if keep is None else (keep,), forget=published)


def _published_secret(event: Event) -> int | None:
    """The secret an event publishes: 0 (the lot) for DealerChosen, the deal's number for
    SeedRevealed and DealVoided, else None."""
    if isinstance(event, DealerChosen):
        return LOT_SECRET_NUMBER
    if isinstance(event, (SeedRevealed, DealVoided)):
        return event.deal_number
    return None


def _published_secret_recorded(event: RecordedEvent) -> int | None:
    """``_published_secret`` of a recorded event, read from its data."""
    if event.type == DealerChosen.TYPE:
        return LOT_SECRET_NUMBER
    if event.type in (SeedRevealed.TYPE, DealVoided.TYPE):
        number = event.data["deal_number"]
        assert isinstance(number, int)
        return number
    return None


def dealt_hands(state: TableState | OpenFaceTable, seed: bytes) -> tuple[tuple[Card, ...], ...]:
    """Every seat's cards in the table's current deal, dealt from its secret ``seed``: the
    closed game's 13 each; at an open-face table, those of the streets dealt so far
    (``sapsam.app.open_face_play.dealt_so_far``)."""
    if isinstance(state, OpenFaceTable):
        return dealt_so_far(state, seed)
    deal = state.deal
    assert deal is not None and deal.cut_position is not None and state.table_id is not None
    return fairness.remembered_hands_for_deal(
        seed,
        deal.contributions,
        state.table_id,
        deal.number,
        deal.cut_position,
        deal.dealer,
        state.seat_count,
    )


def next_deal_number(state: TableState | OpenFaceTable) -> int:
    """The number the table's next deal takes, whatever its family."""
    if isinstance(state, OpenFaceTable):
        return state.deal_number + 1
    return state.next_deal_number


def current_deal_number(state: TableState | OpenFaceTable) -> int | None:
    """The number of the table's current (or last) deal, None before the first."""
    if isinstance(state, OpenFaceTable):
        return state.deal_number or None
    return None if state.deal is None else state.deal.number

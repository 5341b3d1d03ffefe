"""Open-face deals for the domain's tests: a seeded deck dealt by the documented order, and the
commands that play it, as the application would send them (it holds the seed, so it passes each
seat its dealt cards)."""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pineapple_moves import DiscardKeeper

from sapsam import fairness
from sapsam.audit import Requester, select_table, write_lines
from sapsam.audit.export_selection import select_deal
from sapsam.domain.commands import (
    ChooseDealer,
    ContributeEntropy,
    CutDeck,
    RevealSeed,
    SeatPlayer,
    StartDeal,
)
from sapsam.domain.errors import DomainError
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import DeadlinesExtended, Event
from sapsam.domain.open_face.commands import (
    CommitFantasyland,
    CreateOpenFaceTable,
    DealStreet,
    PlaceCards,
    PlaceForSeat,
    RevealFantasyland,
    TimeOutDiscards,
    TimeOutFantasyland,
)
from sapsam.domain.open_face.deal_decide import FANTASYLAND_SCHEME, decide_deal
from sapsam.domain.open_face.deal_evolve import evolve_deal
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase, open_deal
from sapsam.domain.open_face.table_state import OpenFaceTable, OpenFaceTablePhase
from sapsam.domain.table import INITIAL_STATE, decide, evolve
from sapsam.domain.table_deadlines import UnservedWindow
from sapsam.fairness.fantasyland_deals import fantasy_rows
from sapsam.fairness.open_face_deal import deal_streets, street_digest
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam.log.records import RecordedEvent
from sapsam.rules.cards import DECK, Card
from sapsam.rules.open_face.board import Board, Placement, Row, legal_placements
from sapsam.rules.open_face.fantasyland_setting import biggest_row_first
from sapsam.rules.open_face.parameters import OpenFaceRules
from sapsam.rules.open_face.presets import open_face_preset
from sapsam.rules.open_face.solver import solve_placement

TABLE_ID = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000018")
PLAYERS = ("ann", "bob", "cid", "dee")
SPECTATOR_VIEW = None
"""The viewer of a spectator (or the operator): no seat."""

Chooser = Callable[[Board, Sequence[Card]], Placement]


def first_legal(board: Board, dealt: Sequence[Card]) -> Placement:
    return legal_placements(board, dealt)[0]


def random_legal(rng: random.Random) -> Chooser:
    return lambda board, dealt: rng.choice(legal_placements(board, dealt))


RECORD_KEY = fairness.record_key(TABLE_ID, 1, hashlib.sha256(b"open face seed").digest())


def digest(street: int, seat: int, cards: Sequence[Card]) -> bytes:
    """The street record's digest of a seat's cards (docs/fairness.md §22); empty for none."""
    return street_digest(RECORD_KEY, street, seat, cards) if cards else b""


@dataclass
class PlayedDeal:
    """A deal in play: its state, every event so far, and the cards of each street."""

    deal: OpenFaceDeal
    cards: tuple[tuple[tuple[Card, ...], ...], ...]
    events: list[Event] = field(default_factory=list)
    nonces: dict[int, bytes] = field(default_factory=dict)
    states: list[OpenFaceDeal] = field(default_factory=list)
    """The state after each event, in order."""
    discards: DiscardKeeper = field(default_factory=lambda: DiscardKeeper(TABLE_ID))

    def run(self, command: object) -> list[Event]:
        produced = decide_deal(self.deal, command)
        for event in produced:
            self.deal = evolve_deal(self.deal, event)
            self.states.append(self.deal)
        self.events.extend(produced)
        return produced

    def street_cards(self, street: int, seat: int) -> tuple[Card, ...]:
        return self.cards[street][seat]

    def dealt_to(self, seat: int) -> tuple[Card, ...]:
        """Every card dealt to the seat so far."""
        streets = self.cards[: self.deal.streets_dealt]
        return tuple(card for street in streets for card in street[seat])

    def deal_street(self, now_ms: int = 0) -> list[Event]:
        street = self.deal.streets_dealt
        cards = self.cards[street]
        digests = tuple(digest(street, seat, dealt) for seat, dealt in enumerate(cards))
        return self.run(DealStreet(digests, now_ms))

    def place_turn(self, choose: Chooser = first_legal) -> list[Event]:
        seat = self.deal.turn
        assert seat is not None
        street = self.deal.streets_dealt - 1
        dealt = self.street_cards(street, seat)
        if self.deal.rules.street_discards:
            return self.run(self.discards.place(self.deal, PLAYERS[seat], street, dealt))
        placement = choose(self.deal.boards[seat], dealt)
        return self.run(PlaceCards(PLAYERS[seat], street, placement, dealt))

    def place_turn_at(self, now_ms: int) -> list[Event]:
        """A Pineapple seat's move (placement and commitment) at ``now_ms``."""
        seat = self.deal.turn
        assert seat is not None
        street = self.deal.streets_dealt - 1
        dealt = self.street_cards(street, seat)
        return self.run(self.discards.place(self.deal, PLAYERS[seat], street, dealt, now_ms=now_ms))

    def reveal_discards(self, seat: int) -> list[Event]:
        dealt = tuple(street[seat] for street in self.cards)
        return self.run(self.discards.reveal(self.deal, seat, dealt))

    def commit_fantasyland(self, seat: int) -> list[Event]:
        arrangement, _ = biggest_row_first(self.street_cards(0, seat))
        nonce = hashlib.sha256(f"nonce {seat}".encode()).digest()[:16]
        commitment = fairness.arrangement_commitment(
            TABLE_ID,
            self.deal.number,
            seat,
            arrangement,
            nonce,
            scheme=FANTASYLAND_SCHEME,
            player_id=PLAYERS[seat],
        )
        self.nonces[seat] = nonce
        return self.run(CommitFantasyland(PLAYERS[seat], commitment))

    def reveal_fantasyland(self, seat: int) -> list[Event]:
        arrangement, _ = biggest_row_first(self.street_cards(0, seat))
        nonce = self.nonces[seat]
        return self.run(
            RevealFantasyland(PLAYERS[seat], arrangement, nonce, self.street_cards(0, seat))
        )

    def play_out(self, choose: Chooser = first_legal) -> None:
        """Play the deal to its end: streets, placements in turn, Fantasyland set then opened."""
        while self.deal.phase is not OpenFacePhase.COMPLETE:
            phase = self.deal.phase
            if phase is OpenFacePhase.DEALING:
                self.deal_street()
                for seat in self.deal.seats:
                    if self.deal.is_fantasyland(seat) and self.deal.commitments[seat] is None:
                        self.commit_fantasyland(seat)
            elif phase is OpenFacePhase.PLACING:
                self.place_turn(choose)
            elif phase is OpenFacePhase.DISCARDS:
                for seat in self.deal.seats:
                    if self.deal.awaits_discards(seat):
                        self.reveal_discards(seat)
            else:
                for seat in self.deal.seats:
                    if self.deal.is_fantasyland(seat) and not self.deal.revealed[seat]:
                        self.reveal_fantasyland(seat)


def new_deal(
    rules: OpenFaceRules,
    seats: int,
    dealer: int = 0,
    fantasyland: Sequence[int | None] | None = None,
    seed: int = 18,
    move_seconds: int | None = None,
) -> PlayedDeal:
    """A deal of ``seats`` seats from a seeded deck, before its first street."""
    fantasy = tuple(fantasyland) if fantasyland is not None else (None,) * seats
    deal = open_deal(TABLE_ID, PLAYERS[:seats], rules, 1, dealer, fantasy, move_seconds)
    deck = random.Random(seed).sample(DECK, len(DECK))
    return PlayedDeal(deal, deal_streets(deck, dealer, deal.schedule))


# -- a whole table, driven through the family seam ----------------------------------------

CODEC = DEFAULT_CODEC  # it reads every family's events


def seeded(label: str, size: int = 32) -> bytes:
    """Bytes derived from a label: seeds, entropy and nonces that replay."""
    return hashlib.sha256(label.encode()).digest()[:size]


@dataclass
class DrivenTable:
    """An open-face table driven as the application would: it holds the seeds."""

    state: OpenFaceTable
    events: list[Event] = field(default_factory=list)
    seed: bytes = b""
    cards: tuple[tuple[tuple[Card, ...], ...], ...] = ()
    nonces: dict[int, bytes] = field(default_factory=dict)
    discards: DiscardKeeper = field(default_factory=lambda: DiscardKeeper(TABLE_ID))
    unopened: set[int] = field(default_factory=set)
    """Pineapple seats that leave their discards for the service to open after the deadline."""
    discard_outage_ms: int = 0
    """When set, no server served from just before the discards' deadline to this long after it:
    the sweep's first ``TimeOutDiscards`` extends the deadline (stage ``discarding``)."""

    def run(self, command: object) -> list[Event]:
        produced = decide(self.state, command)
        for event in produced:
            self.state = evolve(self.state, event)
        self.events.extend(produced)
        return produced

    def start_deal(self) -> None:
        number = self.state.deal_number + 1
        self.seed = seeded(f"seed {number}")
        self.run(StartDeal(fairness.seed_commitment(TABLE_ID, number, self.seed)))
        self.run(ContributeEntropy(self._player(0), seeded(f"entropy {number}", 8)))
        dealer = self.state.dealer
        assert dealer is not None
        cutter = fairness.cutter_for(dealer, self.state.seat_count)
        self.run(CutDeck(self._player(cutter), 1 + number % 51))
        state = self.state
        assert state.play is not None and state.cut_position is not None
        deck = fairness.shuffle_deck(self.seed, state.contributions, TABLE_ID, number)
        cut = fairness.cut_deck(deck, state.cut_position)
        self.cards = deal_streets(cut, dealer, state.play.schedule)

    def play_deal(
        self,
        solver: bool = False,
        target: dict[int, tuple[tuple[Card, ...], ...]] | None = None,
        late: Collection[int] = (),
        choose: Chooser | None = None,
        forced: bool = False,
    ) -> None:
        """Play the deal to its score: each seat places by the solver, or ``choose``, or the
        first legal placement, or (a seat in ``target``) into the rows given for each of its
        cards. A seat in ``late`` lets its time run out on its first move (a Fantasyland seat:
        setting its hand), and the service makes its moves from then on; so does it for every
        seat whose moves are all made for it (``automatic``: a hand dead for the set). With
        ``forced``, the service places a seat's cards whenever the rules force its move
        (docs/rules.md §8.6: one placement, a hand already dead, every placement killing it), as
        the application asks after every event."""
        key = fairness.record_key(TABLE_ID, self.state.deal_number, self.seed)
        now = 0
        while self.state.phase is OpenFaceTablePhase.PLAYING:
            play = self.state.play
            assert play is not None
            now += 1_000
            if play.phase is OpenFacePhase.DEALING:
                street = play.streets_dealt
                self.run(
                    DealStreet(
                        tuple(
                            street_digest(key, street, seat, cards) if cards else b""
                            for seat, cards in enumerate(self.cards[street])
                        ),
                        now,
                    )
                )
                # The first street's deadline is every Fantasyland hand's too.
                due = now + (self.state.rules.move_seconds or 0) * 1000
                for seat in play.seats:
                    if play.is_fantasyland(seat) and street == 0:
                        if seat in late:
                            self.run(TimeOutFantasyland(seat, due))
                        else:
                            self._commit(seat)
            elif play.phase is OpenFacePhase.PLACING:
                seat = play.turn
                assert seat is not None
                street = play.streets_dealt - 1
                dealt = self.cards[street][seat]
                board = play.boards[seat]
                if seat in late and not play.automatic[seat]:
                    assert play.deadline_ms is not None
                    self.run(PlaceForSeat(dealt, play.deadline_ms, timed_out=True))
                    continue
                if play.automatic[seat]:
                    self.run(PlaceForSeat(dealt, now))
                    continue
                if forced:
                    try:
                        self.run(PlaceForSeat(dealt, now))
                        continue
                    except DomainError:
                        pass  # the seat chooses its own placement
                if play.rules.street_discards:
                    player = self._player(seat)
                    self.run(self.discards.place(play, player, street, dealt, now_ms=now))
                    continue
                if target is not None and seat in target:
                    rows = target[seat]
                    placement = Placement.of_rows(
                        dealt, [Row(next(r for r in Row if card in rows[r])) for card in dealt]
                    )
                elif solver:
                    placement = solve_placement(
                        play.rules, board, dealt, seed=street, rollouts=2
                    ).placement
                elif choose is not None:
                    placement = choose(board, dealt)
                else:
                    placement = legal_placements(board, dealt)[0]
                self.run(PlaceCards(self._player(seat), street, placement, dealt, now_ms=now))
            elif play.phase is OpenFacePhase.DISCARDS:
                seat = next(seat for seat in play.seats if play.awaits_discards(seat))
                dealt = tuple(street[seat] for street in self.cards)
                if seat in self.unopened and play.deadline_ms is not None:
                    due = play.deadline_ms
                    extended = any(
                        isinstance(event, DeadlinesExtended)
                        and event.stage == "discarding"
                        and event.deal_number == play.number
                        for event in self.events
                    )
                    if self.discard_outage_ms and not extended:
                        back = due + self.discard_outage_ms
                        window = UnservedWindow(due - 1_000, back)
                        self.run(TimeOutDiscards(seat, dealt, back, (window,), 5_000))
                        continue
                    self.run(TimeOutDiscards(seat, dealt, due))
                else:
                    self.run(self.discards.reveal(play, seat, dealt))
            else:
                for seat in play.seats:
                    if play.awaits_reveal(seat):
                        arrangement, _ = biggest_row_first(self.cards[0][seat])
                        self.run(
                            RevealFantasyland(
                                self._player(seat),
                                arrangement,
                                self.nonces[seat],
                                self.cards[0][seat],
                            )
                        )
                        break
        self.run(RevealSeed(self.seed))

    def _player(self, seat: int) -> str:
        player = self.state.seats[seat]
        assert player is not None
        return player

    def run_street(self, now_ms: int = 0) -> list[Event]:
        """Deal the next street of the current deal at ``now_ms``."""
        play = self.state.play
        assert play is not None
        street = play.streets_dealt
        key = fairness.record_key(TABLE_ID, self.state.deal_number, self.seed)
        return self.run(
            DealStreet(
                tuple(
                    street_digest(key, street, seat, cards) if cards else b""
                    for seat, cards in enumerate(self.cards[street])
                ),
                now_ms,
            )
        )

    def commit(self, seat: int) -> None:
        """Set the Fantasyland hand of ``seat`` (biggest row first) and commit to it."""
        self._commit(seat)

    def _commit(self, seat: int) -> None:
        arrangement, _ = biggest_row_first(self.cards[0][seat])
        nonce = seeded(f"nonce {self.state.deal_number} {seat}", 16)
        self.nonces[seat] = nonce
        commitment = fairness.arrangement_commitment(
            TABLE_ID,
            self.state.deal_number,
            seat,
            arrangement,
            nonce,
            scheme=FANTASYLAND_SCHEME,
            player_id=self._player(seat),
        )
        self.run(CommitFantasyland(self._player(seat), commitment))


def open_face_table(
    preset: str = "ofc_classic", seats: int = 3, move_seconds: int | None = None
) -> DrivenTable:
    lot_seed = seeded("lot")
    rules = replace(open_face_preset(preset), move_seconds=move_seconds)
    command = CreateOpenFaceTable(
        TABLE_ID,
        rules,
        seats,
        fairness.lot_commitment(TABLE_ID, lot_seed),
        "ann",
    )
    # A stream before its TableCreated is the frame's "no table" state, whatever the family.
    table = DrivenTable(INITIAL_STATE)  # type: ignore[arg-type]
    table.run(command)
    for seat in range(seats):
        table.run(SeatPlayer(PLAYERS[seat]))
    table.run(ChooseDealer(lot_seed))
    return table


def fantasyland_table(
    preset: str = "ofc_classic",
    seats: int = 2,
    move_seconds: int | None = None,
    late: Collection[int] = (),
) -> DrivenTable:
    """A table after a first deal in which seat 0 earned Fantasyland: seeds are tried in order
    until seat 0's 13 cards can be set with queens or better in front, and it places each
    street's cards into those rows; the seats in ``late`` time out in that deal
    (``DrivenTable.play_deal``)."""
    for attempt in range(200):
        table = open_face_table(preset, seats, move_seconds)
        table.seed = seeded(f"fantasy {attempt}")
        table.run(StartDeal(fairness.seed_commitment(TABLE_ID, 1, table.seed)))
        dealer = table.state.dealer
        assert dealer is not None
        table.run(CutDeck(PLAYERS[fairness.cutter_for(dealer, seats)], 26))
        state = table.state
        assert state.play is not None
        deck = fairness.shuffle_deck(table.seed, state.contributions, TABLE_ID, 1)
        table.cards = deal_streets(fairness.cut_deck(deck, 26), dealer, state.play.schedule)
        rows = fantasy_rows(tuple(card for street in table.cards for card in street[0]))
        if rows is None:
            continue
        table.play_deal(target={0: rows}, late=late)
        assert table.state.next_fantasyland[0] == 13
        return table
    raise AssertionError("no seat could earn Fantasyland in 200 seeded deals")


def export_lines(
    events: Sequence[Event],
    deal: int | None = None,
    encode: Callable[[Event], tuple[str, int, dict[str, Any]]] = DEFAULT_CODEC.encode,
) -> list[str]:
    """The table's export (or, given ``deal``, that deal's) as ``sapsam audit export`` writes
    it, from events recorded in memory (versions, metadata and the hash chain as the store
    records them); ``encode`` writes each event's type, schema version and data (an older
    schema's, to test that old records verify)."""
    stream = f"table-{TABLE_ID}"
    previous = GENESIS_HASH
    records: list[RecordedEvent] = []
    for version, event in enumerate(events, start=1):
        type_name, schema, encoded = encode(event)
        data = json.loads(json.dumps(encoded))  # as the store keeps it: JSON
        actor = "operator" if type(event).__name__ in ("DealVoided", "SeatReplaced") else "sample"
        metadata = {"actor": actor, "recorded_at": "2026-12-03T00:00:00Z", "request_id": "r"}
        previous = chain_hash(
            previous, canonical_event_bytes(stream, version, type_name, schema, data, metadata)
        )
        records.append(
            RecordedEvent(version, stream, version, type_name, schema, data, metadata, previous)
        )
    if deal is not None:
        return list(write_lines(select_deal(records, deal, Requester.operator())))
    return list(write_lines(select_table(records, Requester.operator())))

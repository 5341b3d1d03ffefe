"""A seat at a table: play a deal (hand, commitment and confirmation, reveal) and whole series.

::

    seat = client.join_table(table.name)
    seat.play_series(lambda hand, table: choose_rows(hand))

The commitment is computed here, on the client, with a fresh 32-byte nonce per commitment; the
rows and nonce stay in this object until the table asks for the reveal. Every commit and reveal
is signed with the player's own Ed25519 key (``Client.key_for``: created on first use in the key
file beside the token, registered once; docs/fairness.md §19), unless ``client.sign_moves`` is
off. ``play_series`` follows
the table with ``WatchTable`` and makes every move that falls to this seat: it draws the first
dealer (seat 0), starts the deals it deals, adds entropy, cuts when it sits on the dealer's right,
arranges with the given arranger, and reveals. It takes the seat's hand from its own stream
(``CardsDealt.my_cards``; ``GetMyHand`` only when the stream brought none) and commits and
confirms in one call (``CommitArrangement`` with ``confirm``). A deal the operator voids
(``DealVoided``) is left behind: its rows and nonce are forgotten and the loop goes on to the next
deal; an arranger still choosing rows for a deal that ended meanwhile raises
:class:`DealEndedError` and nothing is sent for it. When the operator gives the seat to another
player (``SeatReplaced``), the loop stops with
:class:`SeatReplacedError`; the new player's client takes the seat up with :func:`take_seat`.

:func:`take_seat` joins a table or, when the client's player already holds a seat there (taken in
advance, or by this program before it restarted), takes that seat up again.

What a seat is given and gives back (the choosers, :class:`Commitment` and its keeper, the errors,
:class:`SeriesOutcome`) is ``sapsam_client.seat_types``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sapsam_client.client import (
    Client,
    Hand,
    deal_number,
    seat_position,
    table_id,
    table_name,
)
from sapsam_client.commitment import (
    Rows,
    arrangement_commitment,
    declaration_commitment,
    fresh_nonce,
)
from sapsam_client.errors import AlreadyExistsError, SapsamError
from sapsam_client.player_key import (
    announce_message,
    commit_message,
    declare_message,
    reveal_message,
)
from sapsam_client.seat_types import (
    COMMITMENT_SCHEME,
    Announcer,
    DealEndedError,
    Declarer,
    SeriesOutcome,
    always_play,
    default_declarer,
    plays_naturals,
)

# Re-exported for tournament_play and open_face_bot, which still import them from here.
from sapsam_client.seat_types import Arranger as Arranger
from sapsam_client.seat_types import Commitment as Commitment
from sapsam_client.seat_types import CommitmentKeeper as CommitmentKeeper
from sapsam_client.seat_types import EventHandler as EventHandler
from sapsam_client.seat_types import SeatReplacedError as SeatReplacedError
from sapsam_proto.v1 import table_event_pb2, table_pb2

# Refusals that only mean "someone else (or an earlier call) already did it", or "too late":
# the table has moved on, and the next event says where to (WRONG_DEAL: a late arrangement for
# a deal that has ended, already dropped by ``commit``).
_NOTHING_TO_DO = frozenset(
    {
        "WRONG_PHASE",
        "WRONG_DEAL",
        "ALREADY_CONTRIBUTED",
        "ALREADY_CONFIRMED",
        "ALREADY_REVEALED",
        "ALREADY_ANNOUNCED",
        # An announcement on a stale read: the seat's turn passed (it plays) meanwhile.
        "NOT_YOUR_TURN",
        "SEAT_TIMED_OUT",
        "SERIES_COMPLETE",
    }
)

# Refusals that may mean the seat is no longer this player's (SeatReplaced).
_LOST_SEAT = frozenset({"NOT_SEATED", "NOT_YOUR_SEAT"})

PAUSED_RETRY_SECONDS = 2.0
"""How often a seat tries again to start a deal at a paused tournament's table (StartDeal is
refused, TOURNAMENT_PAUSED, until the operator resumes; no table event says when)."""


class Seat:
    """One seat held by the client's player.

    With a ``keeper``, open commitments (rows and nonce) are saved before they are sent and
    loaded when the seat is taken up again, so a restarted client can still reveal.
    """

    def __init__(self, client: Client, name: str, keeper: CommitmentKeeper | None = None) -> None:
        self.client = client
        self.name = name
        self.table = table_name(name)
        self.table_id = table_id(name)
        self.position = seat_position(name)
        self.keeper = keeper
        self.commitments: dict[int, Commitment] = keeper.load(name) if keeper else {}
        self._done: set[tuple[str, int]] = set()
        self._player_id: str | None = None
        self._dealt: Hand | None = None  # the last hand the seat's stream brought
        self._awaiting_hand = False  # an arrangement waits for the stream's CardsDealt
        # deal -> (declaration, nonce): kept by the keeper too, from before DeclareNatural is sent
        self._declarations: dict[int, tuple[str, bytes]] = (
            keeper.load_declarations(name) if keeper else {}
        )
        self._declarations_sent: set[int] = set()  # deals whose DeclareNatural this one sent
        self._declarer: Declarer | None = None

    def __repr__(self) -> str:
        return f"Seat({self.name!r})"

    # -- one deal, step by step -----------------------------------------------------------------

    def player_id(self) -> str:
        """The id of the player holding this seat (asked of the table once, then kept): scheme 2
        commitments bind it."""
        if self._player_id is None:
            for seat in self.client.get_table(self.table).seats:
                if seat.name == self.name:
                    self._player_id = seat.player.removeprefix("players/")
            if not self._player_id:
                raise ValueError("the table does not show who holds " + self.name)
        return self._player_id

    def _signed(self, message: Callable[[str], bytes]) -> tuple[bytes, bytes] | None:
        """(public key, signature) of the move's ``message(player_id)`` by the player's key
        (``Client.key_for``: created and registered on first use), or None with signing off."""
        player = self.player_id()
        key = self.client.key_for(f"players/{player}")
        if key is None:
            return None
        return key.public_key, key.sign(message(player))

    def hand(self, deal: int | None = None) -> Hand:
        """The seat's 13 cards in the current deal (deal number ``deal``, if given): the ones its
        stream brought for that deal (:meth:`take_event`), else asked of the server
        (``GetMyHand``)."""
        dealt = self._dealt
        if deal is not None and dealt is not None and dealt.deal_number == deal:
            return dealt
        return self.client.get_my_hand(self.name)

    def take_event(self, event: table_event_pb2.TableEvent) -> None:
        """Note what an event of the seat's own stream tells the seat: its hand, which a
        ``cards_dealt`` event brings on its holder's stream."""
        if event.WhichOneof("payload") == "cards_dealt" and event.cards_dealt.my_cards:
            dealt = event.cards_dealt
            self._dealt = Hand(dealt.deal, tuple(dealt.my_cards))

    def commit(self, deal: int, rows: Rows, *, confirm: bool = False) -> Commitment:
        """Commit to ``rows`` for deal number ``deal`` with a fresh nonce; repeatable until
        the seat confirms. With ``confirm`` the same call confirms it too (one call, one append,
        the events of :meth:`commit` then :meth:`confirm`). Only the hash leaves the client."""
        nonce = fresh_nonce()
        digest = arrangement_commitment(
            self.table_id,
            deal,
            self.position,
            rows,
            nonce,
            scheme=COMMITMENT_SCHEME,
            player_id=self.player_id(),
        )
        natural, natural_nonce = self._declarations.get(deal, ("", b""))
        committed = Commitment(deal, rows, nonce, digest, natural, natural_nonce)
        if self.keeper is not None:
            self.keeper.save(self.name, committed)
        signature = self._signed(
            lambda player: commit_message(
                self.table_id, deal, self.position, player, COMMITMENT_SCHEME, digest
            )
        )
        try:
            self.client.commit_arrangement(
                self.name,
                digest,
                deal,
                scheme=COMMITMENT_SCHEME,
                signature=signature,
                confirm=confirm,
            )
        except SapsamError as error:
            if error.reason == "WRONG_DEAL" and self.keeper is not None:
                # The deal ended while the rows were chosen: the hand is stale, drop them.
                self.keeper.forget(self.name, deal)
            raise
        self.commitments[deal] = committed
        return committed

    def declare(self, deal: int, declaration: str) -> None:
        """Commit to the seat's natural declaration for deal number ``deal`` (``none`` or a
        natural; docs/fairness.md §21) with a fresh nonce, before :meth:`commit`: only the hash
        leaves the client; the declaration is opened with the reveal."""
        nonce = fresh_nonce()
        if self.keeper is not None:
            self.keeper.save_declaration(self.name, deal, declaration, nonce)
        self._declarations[deal] = (declaration, nonce)
        self._send_declaration(deal)

    def _send_declaration(self, deal: int) -> None:
        """Send the kept declaration of deal number ``deal``. Sent again by a client taking the
        seat up, it is the same commitment (the same declaration and nonce): a refusal as
        already declared means the first client's reached the server before it died."""
        declaration, nonce = self._declarations[deal]
        digest = declaration_commitment(
            self.table_id, deal, self.position, self.player_id(), declaration, nonce
        )
        signature = self._signed(
            lambda player: declare_message(self.table_id, deal, self.position, player, digest)
        )
        try:
            self.client.declare_natural(self.name, digest, deal, signature=signature)
        except SapsamError as error:
            if error.reason != "ALREADY_DECLARED" or deal in self._declarations_sent:
                raise
        self._declarations_sent.add(deal)

    def forget(self, deal: int) -> None:
        """Drop deal number ``deal``'s rows and nonce (here and in the keeper): the deal was
        voided, and nothing of it will ever be revealed."""
        self.commitments.pop(deal, None)
        self._declarations.pop(deal, None)
        if self._dealt is not None and self._dealt.deal_number == deal:
            self._dealt = None
        if self.keeper is not None:
            self.keeper.forget(self.name, deal)

    def confirm(self, deal: int | None = None) -> None:
        """Lock the last commitment (of deal number ``deal``, if given)."""
        self.client.confirm_arrangement(self.name, deal)

    def announce(self, deal: int, surrender: bool) -> None:
        """Announce play (``surrender`` false) or surrender in deal number ``deal``, on the
        seat's turn, signed like a commit (docs/fairness.md §19)."""
        signature = self._signed(
            lambda player: announce_message(self.table_id, deal, self.position, player, surrender)
        )
        self.client.announce_surrender(self.name, surrender, deal, signature=signature)

    def reveal(self, deal: int) -> None:
        """Reveal the rows and nonce committed for deal number ``deal``."""
        committed = self.commitments[deal]
        signature = self._signed(
            lambda player: reveal_message(
                self.table_id, deal, self.position, player, committed.rows, committed.nonce
            )
        )
        try:
            self.client.reveal_arrangement(
                self.name,
                list(committed.rows.front),
                list(committed.rows.middle),
                list(committed.rows.back),
                committed.nonce,
                deal,
                signature=signature,
                natural=committed.natural,
                natural_nonce=committed.natural_nonce,
            )
        except SapsamError as error:
            if error.reason in ("ALREADY_REVEALED", "WRONG_DEAL") and self.keeper is not None:
                self.keeper.forget(self.name, deal)
            raise
        if self.keeper is not None:
            self.keeper.forget(self.name, deal)

    def arrange(
        self, arranger: Arranger, table: table_pb2.Table, declarer: Declarer | None = None
    ) -> Commitment | None:
        """Take the hand (from the stream, else the server), at a table with naturals choose the
        declaration (``declarer``'s choice; by default :func:`default_declarer`), let
        ``arranger`` choose the rows, then declare and commit and confirm them; None, sending
        nothing, when the arranger raises :class:`DealEndedError`.

        The declaration is sent just before the commitment, whatever it is, so the moment it
        reaches the log says nothing about it either (docs/fairness.md §21)."""
        hand = self.hand(table.deal_number or None)
        declaration = None
        deal = hand.deal_number
        if plays_naturals(table) and deal not in self._declarations:
            declaration = (declarer or default_declarer)(hand, table)
        try:
            rows = arranger(hand, table)
        except DealEndedError:
            return None
        if declaration is not None:
            self.declare(deal, declaration)
        elif plays_naturals(table) and deal not in self._declarations_sent:
            # Kept by a client that died before committing: send it (again) as it was.
            self._send_declaration(deal)
        return self.commit(deal, rows, confirm=True)

    # -- a whole series -------------------------------------------------------------------------

    def play_series(
        self,
        arranger: Arranger,
        *,
        on_event: EventHandler | None = None,
        contribute_entropy: bool = True,
        declarer: Declarer | None = None,
        announcer: Announcer = always_play,
    ) -> SeriesOutcome:
        """Play until the series is complete, making every move that falls to this seat.

        ``on_event`` sees each of the table's public events as it arrives (a ``deal_scored``
        event carries the deal's full result). ``declarer`` chooses each hand's natural
        declaration at a table with naturals (by default :func:`default_declarer`); ``announcer``
        decides play or surrender at a table with surrender. Returns the scored deals and the
        standings.
        """
        self._declarer = declarer
        outcome = SeriesOutcome()
        seen = 0
        table: table_pb2.Table | None = None
        for event in self.client.watch(self.table):
            self.take_event(event)
            if on_event is not None:
                on_event(event)
            kind = event.WhichOneof("payload")
            if kind == "deal_scored":
                outcome.results.append(event.deal_scored.result)
            elif kind == "series_completed":
                outcome.standings = list(event.series_completed.standings)
            elif kind == "deal_voided":
                self.forget(deal_number(event.deal_voided.deal))
            if event.version <= seen:
                # The table read after a later event already showed this one; but the hand an
                # arrangement waited for comes with it.
                if kind == "cards_dealt" and self._awaiting_hand and table is not None:
                    self.act(
                        table, arranger, contribute_entropy=contribute_entropy, announcer=announcer
                    )
                continue
            table = self.client.get_table(self.table)
            seen = table.version
            self._check_still_mine(table)
            self.act(
                table,
                arranger,
                contribute_entropy=contribute_entropy,
                stream_behind=event.version < table.version,
                announcer=announcer,
            )
        return outcome

    def _check_still_mine(self, table: table_pb2.Table) -> None:
        """Raise :class:`SeatReplacedError` once the table shows the seat held by a player other
        than the one this loop began with (the first table it read tells who that is)."""
        holder = table.seats[self.position].player
        if self._player_id is None and holder:
            self._player_id = holder.removeprefix("players/")
        mine = f"players/{self._player_id}"
        if self._player_id is not None and holder != mine:
            raise SeatReplacedError(self.name, mine, holder)

    def act(
        self,
        table: table_pb2.Table,
        arranger: Arranger,
        *,
        contribute_entropy: bool = True,
        stream_behind: bool = False,
        announcer: Announcer = always_play,
    ) -> None:
        """Make whatever move the table, as read, expects of this seat (possibly none).

        ``stream_behind``: the seat's stream has not yet brought every event the table shows, so
        a hand to arrange may still be on its way (then the seat waits for it rather than ask
        the server)."""
        phase = table.phase
        deal = table.deal_number
        mine = table.seats[self.position]
        if mine.timed_out and phase in (
            table_pb2.TABLE_PHASE_ARRANGING,
            table_pb2.TABLE_PHASE_REVEALING,
        ):
            return  # the server settled this seat's deal (a foul, or the solver's rows)
        # The flag stays up until the next deal starts; between deals a timed-out dealer must
        # still start it, or the table (which has no deadline there) waits for ever.
        if phase == table_pb2.TABLE_PHASE_AWAITING_DEALER and self.position == 0:
            self._once("dealer", 0, lambda: self.client.choose_dealer(self.table))
        elif phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS and table.dealer_seat == self.name:
            self._once("start", deal + 1, self._start_when_not_paused)
        elif phase == table_pb2.TABLE_PHASE_AWAITING_CUT:
            if contribute_entropy and not mine.entropy_contributed:
                self._once("entropy", deal, lambda: self.client.contribute_entropy(self.name))
            if table.cutter_seat == self.name:
                self._once("cut", deal, lambda: self.client.cut_deck(self.name))
        elif phase == table_pb2.TABLE_PHASE_ARRANGING and not mine.confirmed:
            streamed = self._dealt is not None and self._dealt.deal_number == deal
            self._awaiting_hand = stream_behind and not streamed
            if not self._awaiting_hand:
                self._once("arrange", deal, lambda: self.arrange(arranger, table, self._declarer))
        elif phase == table_pb2.TABLE_PHASE_ANNOUNCING and table.announcing_seat == self.name:
            committed = self.commitments.get(deal)
            self._once(
                "announce",
                deal,
                lambda: self.announce(deal, announcer(committed, table)),
            )
        elif phase == table_pb2.TABLE_PHASE_REVEALING and not mine.revealed:
            # Without the commitment (e.g. another process confirmed) there is nothing to show.
            reveal = deal in self.commitments
            self._once("reveal", deal, lambda: self.reveal(deal) if reveal else None)

    def _start_when_not_paused(self) -> None:
        """Start the next deal; while the table's tournament is paused, wait and try again."""
        while True:
            try:
                self.client.start_deal(self.table)
                return
            except SapsamError as error:
                if error.reason != "TOURNAMENT_PAUSED":
                    raise
            time.sleep(PAUSED_RETRY_SECONDS)

    def _once(self, step: str, deal: int, move: Callable[[], object]) -> None:
        """Make a move once per deal; a refusal meaning "already done" is not an error."""
        if (step, deal) in self._done:
            return
        self._done.add((step, deal))
        try:
            move()
        except SapsamError as error:
            if error.reason in _LOST_SEAT:
                # The operator may have given the seat away since the table was read.
                self._check_still_mine(self.client.get_table(self.table))
            if error.reason not in _NOTHING_TO_DO:
                raise


def held_seat(table: table_pb2.Table, player: str) -> str | None:
    """The name of the seat ``player`` (``players/{id}``) holds at ``table``, if any."""
    for seat in table.seats:
        if seat.player == player:
            return seat.name
    return None


def take_seat(
    client: Client,
    table: str,
    seat: int | None = None,
    *,
    player: str | None = None,
    keeper: CommitmentKeeper | None = None,
) -> Seat:
    """The seat the client's player already holds at ``table``, else a seat joined now (``seat``
    or the lowest free one).

    The held seat is found by the player's name (``players/{id}``) in the table's seats, when
    ``player`` is given; a held seat wins over ``seat``. Without ``player`` the join is tried, and
    its ``ALREADY_SEATED`` refusal says the player is seated: then ``seat`` names the seat to take
    up, and without it the refusal is raised again, saying what to give. ``keeper`` keeps open
    commitments across restarts (see :class:`Seat`).
    """
    if player is not None:
        held = held_seat(client.get_table(table), player)
        if held is not None:
            return Seat(client, held, keeper)
    try:
        return client.join_table(table, seat, keeper=keeper)
    except AlreadyExistsError as error:
        if error.reason != "ALREADY_SEATED":
            raise
        if player is not None:
            # Seated between the read and the join (e.g. by another process of this player).
            held = held_seat(client.get_table(table), player)
            if held is not None:
                return Seat(client, held, keeper)
        if seat is not None:
            return Seat(client, f"{table_name(table)}/seats/{seat}", keeper)
        raise AlreadyExistsError(
            error.code,
            error.reason,
            f"{error.message}; to play that seat, name the player (players/ID) or the seat number",
            error.metadata,
            error.fields,
        ) from error

"""A bot that plays one seat of an open-face table with the placement solver (issues #18, #19).

It follows the table through the SDK's watch stream (``Client.watch``: a thread wakes the bot on
each event; a quiet table is looked at again every ``IDLE_SECONDS``), and after each event reads
``GetTable`` (its public ``open_face`` view says whose turn it is): the first seat draws the
dealer once every seat is taken and starts each deal, the cutter cuts, and on its turn the seat
asks ``GetMyHand`` for its cards and places the street's by ``sapsam.rules.open_face.solver``
(Monte Carlo over the cards it has not seen, seeded, so a replayed choice is the same). At
Pineapple the solver also chooses the street's discard, which the SDK commits (the card and
nonce kept in the client's ``discard_keeper``) and the bot opens once every hand is complete
(``RevealDiscards``). A seat in Fantasyland sets its hand by ``solve_fantasyland``, commits it
(scheme 2) and opens it at the end. The solver comes from the rules extra
(``sapsam_client.rules``); the server judges every move.

``late_once`` makes the bot let its first turn's time run out (``move_seconds``), so that the
server's sweeper places for it: ``sapsam demo-ofc`` shows a timeout that way. ``planned`` gives
a deal's rows in advance (the demo's chosen deal 1, which earns a Fantasyland).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

from sapsam_client.client import Client
from sapsam_client.commitment import Rows, arrangement_commitment, fresh_nonce
from sapsam_client.connection import seat_position
from sapsam_client.discards import DiscardKeeper
from sapsam_client.errors import SapsamError
from sapsam_client.rules import rules_module
from sapsam_client.seat import Commitment, CommitmentKeeper
from sapsam_proto.v1 import open_face_pb2, table_pb2

IDLE_SECONDS: Final = 1.0
"""How long the bot waits for the next event before it looks at the table anyway (a timeout the
server sweeps, a watch stream being resumed)."""
ROLLOUTS: Final = 8
"""The solver's futures per candidate placement: fewer than its default, for a quick demo."""


def open_face_rules(message: open_face_pb2.OpenFaceRuleSet) -> Any:
    """The table's rule set as the rules code takes it (``OpenFaceRules``)."""
    parameters = rules_module("open_face.parameters")
    return parameters.OpenFaceRules.from_dict(
        {
            "name": message.name,
            "street_cards": list(message.street_cards),
            "min_seats": message.min_seats,
            "max_seats": message.max_seats,
            "two_of_three_points": message.two_of_three_points,
            "scoop_points": message.scoop_points,
            "royalty_table": message.royalty_table,
            "middle_trips_royalty": message.middle_trips_royalty,
            "fantasyland_entry_rank": message.fantasyland_entry_rank or None,
            "fantasyland_cards": message.fantasyland_cards,
            "fantasyland_reentry": message.fantasyland_reentry,
            "fantasyland_max_consecutive": (
                message.fantasyland_max_consecutive
                if message.HasField("fantasyland_max_consecutive")
                else None
            ),
            "timeout_policy": message.timeout_policy,
            "automatic_moves": message.automatic_moves,
            "move_seconds": message.move_seconds if message.HasField("move_seconds") else None,
            "street_discards": message.street_discards,
            "middle_row": message.middle_row or "high",
            "lowball_order": message.lowball_order or "middle_weakest",
            "finnish_two_of_spades": message.finnish_two_of_spades or "off",
        }
    )


def choose_street(
    rules: Any, board: Any, dealt: Any, seed: int, *, hunt: bool = False
) -> tuple[Any, tuple[Any, ...]]:
    """The bot's move for ``dealt`` on ``board``: its placement and, on a Pineapple street
    after the first, the card(s) it discards (the solver's ``solve_street``); otherwise as
    :func:`choose_placement`, with no discard. A pure function of its arguments."""
    solver = rules_module("open_face.solver")
    thrown = rules.street_discards if board.cards else 0
    if thrown:
        choice = solver.solve_street(rules, board, dealt, thrown, seed=seed, rollouts=ROLLOUTS)
        return choice.placement, tuple(choice.discards)
    return choose_placement(rules, board, dealt, seed, hunt=hunt), ()


def choose_placement(rules: Any, board: Any, dealt: Any, seed: int, *, hunt: bool = False) -> Any:
    """The bot's placement of ``dealt`` (rules' cards) on ``board``: the solver's; with
    ``hunt``, on the first street a pair that earns Fantasyland (the rule set's entry rank or
    better) goes to the front row first, the rest by the solver. A pure function of its
    arguments (the solver is seeded), so a deal's play can be foreseen from its cards. (A
    Pineapple street after the first also discards: :func:`choose_street`.)"""
    board_module = rules_module("open_face.board")
    solver = rules_module("open_face.solver")
    entry = rules.fantasyland_entry_rank
    if hunt and entry is not None and not board.cards and len(dealt) == 5:
        lowest = "23456789TJQKA".index(entry)
        pairs = sorted(
            (
                (first, second)
                for index, first in enumerate(dealt)
                for second in dealt[index + 1 :]
                if first.rank == second.rank and first.rank >= lowest
            ),
            key=lambda pair: -pair[0].rank,
        )
        if pairs:
            pair = pairs[0]
            rest = [card for card in dealt if card not in pair]
            started = board_module.Board(tuple(pair), (), ())
            placed = solver.solve_placement(rules, started, rest, seed=seed, rollouts=ROLLOUTS)
            chosen = placed.placement
            return board_module.Placement((*pair, *chosen.front), chosen.middle, chosen.back)
    return solver.solve_placement(rules, board, dealt, seed=seed, rollouts=ROLLOUTS).placement


def _changed(heard: list[int], seen: int, stop: threading.Event) -> bool:
    return heard[0] != seen or stop.is_set()


def _planned_rows(
    plan: Rows | None, dealt: Sequence[str]
) -> tuple[list[str], list[str], list[str]] | None:
    """``dealt`` split into front, middle and back as ``plan`` places them; None without a
    plan or when it does not hold every card."""
    if plan is None:
        return None
    rows: tuple[list[str], list[str], list[str]] = ([], [], [])
    for card in dealt:
        planned = (plan.front, plan.middle, plan.back)
        row = next((index for index, cards in enumerate(planned) if card in cards), None)
        if row is None:
            return None
        rows[row].append(card)
    return rows


def placement_seed(bot_seed: int, deal_number: int, street: int) -> int:
    """The solver's seed for one of a bot's moves."""
    return bot_seed * 1000 + deal_number * 20 + street


@dataclass
class OpenFaceBot:
    """One seat's bot: ``client`` acts as the seat's player (``player_id`` without
    ``players/``)."""

    client: Client
    table: str
    seat: str
    player_id: str
    seed: int = 0
    late_once: bool = False
    hunt: bool = False
    """Go for Fantasyland: a high pair dealt on the first street goes to the front row."""
    planned: dict[int, Rows] = field(default_factory=dict)
    """Rows to set, by deal number: each card dealt goes to the row these put it in (the demo
    deals a chosen seed and gives the rows that earn Fantasyland); a card they do not hold, by
    the solver as usual."""
    stop: threading.Event = field(default_factory=threading.Event)
    keeper: CommitmentKeeper | None = None
    """Where a Fantasyland hand's rows and nonce are kept before its commitment is sent (e.g. a
    ``CommitmentFile``, or ``sapsam-bot``'s state file), so a bot restarted before the end of the
    deal still opens it; None: in memory only."""
    nonces: dict[int, bytes] = field(default_factory=dict)
    settings: dict[int, Rows] = field(default_factory=dict)
    commitments: dict[int, Commitment] = field(default_factory=dict)
    """Each deal's Fantasyland setting as sent (rows, nonce and commitment)."""
    moves: int = 0

    @property
    def position(self) -> int:
        return seat_position(self.seat)

    def play(self) -> None:
        """Play until the set is over (or ``stop`` is set)."""
        if isinstance(self.keeper, DiscardKeeper):
            self.client.discard_keeper = self.keeper
        news = threading.Condition()
        heard = [0]

        def follow() -> None:
            # The table's events, live (a private connection: the SDK's stubs are shared, a
            # stream is not): each one wakes the bot, which then reads the table.
            try:
                for _event in self.client.watch(self.table):
                    with news:
                        heard[0] += 1
                        news.notify_all()
                    if self.stop.is_set():
                        return
            except SapsamError:
                pass  # the bot goes on looking every IDLE_SECONDS

        threading.Thread(target=follow, daemon=True, name=f"watch {self.seat}").start()
        while not self.stop.is_set():
            with news:
                seen = heard[0]
            table = self.client.get_table(self.table)
            if table.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE:
                return
            try:
                acted = self._step(table)
            except SapsamError:
                acted = False  # a race (another seat, the sweeper) moved the table: look again
            if not acted:
                with news:
                    news.wait_for(partial(_changed, heard, seen, self.stop), IDLE_SECONDS)

    def _step(self, table: table_pb2.Table) -> bool:
        if table.phase == table_pb2.TABLE_PHASE_AWAITING_DEALER and self.position == 0:
            self.client.choose_dealer(self.table, expected_version=table.version)
            return True
        if table.phase == table_pb2.TABLE_PHASE_BETWEEN_DEALS and self.position == 0:
            self.client.start_deal(self.table, expected_version=table.version)
            return True
        if table.phase == table_pb2.TABLE_PHASE_AWAITING_CUT and table.cutter_seat == self.seat:
            self.client.cut_deck(self.seat, 1 + (self.seed + table.deal_number) % 51)
            return True
        if table.phase != table_pb2.TABLE_PHASE_PLAYING:
            return False
        deal = table.open_face
        me = deal.seats[self.position]
        if (
            deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_DISCARDS
            and me.discards_made
            and not me.discards
        ):
            return self._reveal_discards(deal.deal_number)
        if me.fantasyland:
            if not me.committed:
                self._commit(table)
                return True
            if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_FANTASYLAND and not me.revealed:
                return self._reveal(deal.deal_number)
            return False
        if deal.phase == open_face_pb2.OPEN_FACE_DEAL_PHASE_PLACING and deal.turn_seat == self.seat:
            if self.late_once and table.HasField("deadline_time"):
                self.late_once = False
                late = table.deadline_time.ToMilliseconds() / 1000 - time.time() + 1.5
                self.stop.wait(max(late, 0))  # let the time run out: the sweeper places
                return True
            self._place(table)
            return True
        return False

    def _place(self, table: table_pb2.Table) -> None:
        cards = rules_module("cards")
        board_module = rules_module("open_face.board")
        hand = self.client.get_open_face_hand(self.seat)
        if not hand.my_turn:
            return
        board = board_module.Board(*(cards.parse_cards(list(row)) for row in hand.rows))
        to_place = hand.to_place()
        rows = _planned_rows(self.planned.get(hand.deal_number), to_place)
        thrown: tuple[Any, ...] = ()
        if rows is None:
            placement, thrown = choose_street(
                open_face_rules(table.open_face_rule_set),
                board,
                cards.parse_cards(list(to_place)),
                placement_seed(self.seed, hand.deal_number, hand.street),
                hunt=self.hunt,
            )
            rows = (
                [str(card) for card in placement.front],
                [str(card) for card in placement.middle],
                [str(card) for card in placement.back],
            )
        front, middle, back = rows
        self.client.place_cards(
            self.seat,
            hand.street,
            front,
            middle,
            back,
            deal=hand.deal_number,
            player=self.player_id,
            discard=[str(card) for card in thrown],
        )
        self.moves += 1

    def _reveal_discards(self, number: int) -> bool:
        """Open the deal's Pineapple discards; False when none is kept (another process made
        them, or one without a keeper that stopped): the server's deadline then opens them."""
        if not self.client.discard_keeper.load_discards(self.seat).get(number):
            return False
        self.client.reveal_discards(self.seat, deal=number, player=self.player_id)
        return True

    def _commit(self, table: table_pb2.Table) -> None:
        cards = rules_module("cards")
        setting = rules_module("open_face.fantasyland_setting")
        hand = self.client.get_open_face_hand(self.seat)
        kept = self._kept(hand.deal_number)
        if kept is None:  # not set before (a restarted bot sends what it kept, unchanged)
            arrangement, _ = setting.solve_fantasyland(
                open_face_rules(table.open_face_rule_set), cards.parse_cards(list(hand.cards))
            )
            rows = Rows.of(
                (str(card) for card in arrangement.front),
                (str(card) for card in arrangement.middle),
                (str(card) for card in arrangement.back),
            )
            nonce = fresh_nonce()
            commitment = arrangement_commitment(
                self.table.removeprefix("tables/"),
                hand.deal_number,
                self.position,
                rows,
                nonce,
                scheme=2,
                player_id=self.player_id,
            )
            kept = Commitment(hand.deal_number, rows, nonce, commitment)
            if self.keeper is not None:
                self.keeper.save(self.seat, kept)
        self.commitments[hand.deal_number] = kept
        self.nonces[hand.deal_number] = kept.nonce
        self.settings[hand.deal_number] = kept.rows
        self.client.commit_fantasyland(
            self.seat, kept.commitment, deal=hand.deal_number, player=self.player_id
        )

    def _kept(self, number: int) -> Commitment | None:
        """The Fantasyland setting kept for deal ``number``: this bot's, else the keeper's."""
        if number in self.commitments:
            return self.commitments[number]
        if self.keeper is not None:
            return self.keeper.load(self.seat).get(number)
        return None

    def _reveal(self, number: int) -> bool:
        """Open the deal's Fantasyland hand; False when its setting was not kept (another
        process set it, or one without a keeper that stopped): the server's deadline then
        settles the hand."""
        kept = self._kept(number)
        if kept is None:
            return False
        rows = kept.rows
        self.client.reveal_fantasyland(
            self.seat,
            list(rows.front),
            list(rows.middle),
            list(rows.back),
            kept.nonce,
            deal=number,
            player=self.player_id,
        )
        if self.keeper is not None:
            self.keeper.forget(self.seat, number)
        return True

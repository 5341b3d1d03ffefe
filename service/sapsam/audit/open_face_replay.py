"""``sapsam audit replay`` of an open-face table: the table after each event, and what happened
in sentences (docs/audit.md, "Replay"). Pure.

The state after each event is open face's own fold (``sapsam.domain.open_face.table_evolve``).
The log holds no dealt card (a ``StreetDealt`` holds digests); once a deal's seed is published
(``SeedRevealed``, or ``DealVoided``) its streets are recomputed (docs/fairness.md §22), so each
seat's cards show from the moment they were dealt, as seen by that seat alone until the seed is
out. The rows are face up as they are placed (every ``CardsPlaced`` is in the export), except a
Fantasyland hand's, which show from its opening; while a Fantasyland hand is being set, the
others' rows were shown to their own seats only, and the replay says so. At each score the
deal's account: each seat's rows and royalties, each pair's rows, points and royalties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import cast

from sapsam.audit.deal_events import MALFORMED
from sapsam.audit.replay_text import Teller, happened
from sapsam.domain.events import (
    DealScored,
    DealStarted,
    DealVoided,
    Event,
    SeedRevealed,
    SeriesCompleted,
    TableCreated,
)
from sapsam.domain.open_face.deal_state import OpenFaceDeal, OpenFacePhase
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
    FantasylandRevealsOpened,
    FantasylandTimedOut,
    StreetDealt,
)
from sapsam.domain.open_face.table_evolve import evolve_table
from sapsam.domain.open_face.table_state import (
    INITIAL_OPEN_FACE_TABLE,
    OpenFaceTable,
    OpenFaceTablePhase,
    dead_seats,
    dealt_streets,
)
from sapsam.domain.table import TableState
from sapsam.plurals import plural
from sapsam.rules.cards import Card, format_cards
from sapsam.rules.open_face.board import ROW_LABELS, Board
from sapsam.rules.open_face.parameters import HAND_CARDS
from sapsam.rules.open_face.scoring import score_open_face_deal

__all__ = [
    "fantasylands_by_deal",
    "open_face_happened",
    "open_face_seat_views",
    "published_streets",
]

AUTOMATIC_WORDS = {
    "only_option": "it had only one placement",
    "already_dead": "its hand was already dead",
    "every_option_kills": "every placement killed its hand",
    "timeout": "its time ran out",
}
"""Why the service placed a seat's cards (``CardsPlaced.automatic``), in words."""

Streets = tuple[tuple[tuple[Card, ...], ...], ...]


def published_streets(events: Sequence[Event]) -> dict[int, Streets]:
    """Each deal's streets (``[street][seat]``) recomputed from its published seed, for every
    deal of ``events`` whose seed is published and whose deck was cut; a malformed record
    leaves its deal out (the verifier names it)."""
    seeds = {
        event.deal_number: event.seed
        for event in events
        if isinstance(event, SeedRevealed | DealVoided)
    }
    streets: dict[int, Streets] = {}
    state = INITIAL_OPEN_FACE_TABLE
    for event in events:
        try:
            state = evolve_table(state, event)
        except (*MALFORMED, AssertionError):
            return streets
        play = state.play
        if (
            type(event).__name__ != "DeckCut"
            or play is None
            or state.table_id is None
            or state.cut_position is None
            or play.number not in seeds
        ):
            continue
        try:
            streets[play.number] = dealt_streets(state, bytes.fromhex(seeds[play.number]))
        except MALFORMED:
            continue
    return streets


def fantasylands_by_deal(events: Sequence[Event]) -> dict[int, tuple[int | None, ...]]:
    """Who played a Fantasyland hand in each deal, as its first ``StreetDealt`` shows it (a seat
    dealt 13 cards or more at once): what a deal export, which lacks the deals that earned them,
    needs to replay its deal (the verifier leaves such a deal *not covered*)."""
    found: dict[int, tuple[int | None, ...]] = {}
    for event in events:
        if isinstance(event, StreetDealt) and event.street == 0 and event.deal_number not in found:
            found[event.deal_number] = tuple(
                count if count >= HAND_CARDS else None for count in event.card_counts
            )
    return found


# -- the seats ---------------------------------------------------------------------------------


def _rows_text(board: Board) -> str:
    return "|".join(format_cards(row) if row else "-" for row in board.rows)


def _status(state: OpenFaceTable, seat: int) -> str:
    play = state.play
    if state.seats[seat] is None:
        return "empty"
    if play is None or state.phase in (
        OpenFaceTablePhase.BETWEEN_DEALS,
        OpenFaceTablePhase.SERIES_COMPLETE,
    ):
        if state.voided:
            return "deal voided"
        return "dead for the rest of the set" if state.dead_for_set[seat] else "seated"
    if play.streets_dealt == 0:
        return "waiting for the deal"
    if play.is_fantasyland(seat):
        if play.revealed[seat]:
            status = "Fantasyland hand opened" + (" (dead)" if play.dead[seat] else "")
        elif play.timed_out[seat]:
            status = "Fantasyland: time ran out, the service sets its hand"
        elif play.commitments[seat] is not None:
            status = "Fantasyland hand set face down"
        else:
            status = "Fantasyland: setting its hand"
    else:
        status = _normal_status(play, seat)
    if play.timed_out[seat] and not play.is_fantasyland(seat):
        status += "; its time ran out, its moves are made for it"
    if play.declared_dead[seat]:
        status += "; dead for the rest of the set"
    return status


def _normal_status(play: OpenFaceDeal, seat: int) -> str:
    street = play.streets_dealt - 1
    if play.boards[seat].complete:
        status = "rows complete"
    elif play.turn == seat:
        status = f"to place street {street}"
    elif play.placed[seat]:
        status = f"placed street {street}"
    else:
        status = f"waiting to place street {street}"
    if play.fantasyland_hidden and play.boards[seat].placed:
        status += " (its rows shown to itself only while a Fantasyland hand is set)"
    return status


def open_face_seat_views(
    state: OpenFaceTable, seat: int, streets: Mapping[int, Streets]
) -> tuple[str, str | None, str, str | None]:
    """One seat's status, its cards dealt so far (when computable), who could see them, and its
    rows (``front|middle|back``, ``-`` for an empty row; None for a Fantasyland hand not yet
    opened or before any deal)."""
    play = state.play
    status = _status(state, seat)
    if play is None or play.streets_dealt == 0:
        return status, None, "nobody", None
    known = streets.get(play.number)
    cards: str | None = None
    if known is not None:
        dealt = [card for street in known[: play.streets_dealt] for card in street[seat]]
        cards = format_cards(dealt)
    if state.seed is not None:
        seen_by = "everyone"
    else:
        seen_by = f"seat {seat} only"
        if cards is None:
            seen_by += " (not computable offline before the seed is revealed)"
    rows: str | None = None
    if not play.is_fantasyland(seat) or play.revealed[seat]:
        rows = _rows_text(play.boards[seat])
    return status, cards, seen_by, rows


# -- the sentences -----------------------------------------------------------------------------


def open_face_happened(
    event: Event,
    state: OpenFaceTable,
    actor: str,
    teller: Teller,
    earlier: Mapping[int, Sequence[str]] | None = None,
) -> str:
    """The event in words; ``state`` is the table right after it."""
    told = _told(event, state, teller)
    if told is not None:
        return told
    # The frame's events (seating, the lot, the cut, the seed, the set's end, a replaced seat)
    # read only the seats of the state: the closed game's sentences serve.
    return happened(event, cast(TableState, state), actor, teller, earlier)


def _seat(state: OpenFaceTable, teller: Teller, seat: int) -> str:
    return teller.seat(cast(TableState, state), seat)


def _at(unix_ms: int) -> str:
    return datetime.fromtimestamp(unix_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _told(event: Event, state: OpenFaceTable, teller: Teller) -> str | None:
    if isinstance(event, TableCreated):
        rules = state.rules
        streets = "+".join(map(str, rules.street_cards))
        if rules.street_discards:
            streets += f", {rules.street_discards} more dealt and discarded unseen a street"
        variant = (", the middle deuce-to-seven lowball" if rules.lowball_middle else "") + (
            f", Finnish 2♠ ({rules.finnish_two_of_spades.value})"
            if rules.finnish_two_of_spades.value != "off"
            else ""
        )
        creator = "the operator" if event.created_by == "operator" else None
        return (
            f"{creator or teller.player(event.created_by)}"
            f" created an open-face table: {event.seat_count} seats, rule set {rules.name!r}"
            f" (streets {streets}, {rules.royalty_table} royalties{variant}, timeouts"
            f" {rules.timeout_policy.value}), a set of {plural(event.seat_count, 'deal')}"
            " (a deal the button stays for a Fantasyland does not count)"
        )
    if isinstance(event, DealStarted):
        play = state.play
        assert play is not None
        fantasy = [seat for seat in play.seats if play.is_fantasyland(seat)]
        told = (
            f"deal {event.deal_number} started, dealt by {_seat(state, teller, event.dealer)};"
            f" the seed is committed as {event.seed_commitment[:16]}…"
        )
        if fantasy:
            told += "; Fantasyland for " + ", ".join(
                f"{_seat(state, teller, seat)} ({plural(play.fantasyland[seat] or 0, 'card')})"
                for seat in fantasy
            )
        return told
    if isinstance(event, StreetDealt):
        return _street(event, state, teller)
    if isinstance(event, CardsPlaced):
        return _placed(event, state, teller)
    if isinstance(event, FantasylandCommitted):
        return (
            f"{_seat(state, teller, event.seat)} set its Fantasyland hand face down"
            f" (committed as {event.commitment[:16]}…)"
        )
    if isinstance(event, FantasylandRevealsOpened):
        seats = ", ".join(_seat(state, teller, seat) for seat in event.seats)
        return (
            f"every hand is placed and set: {seats} to open the Fantasyland hand"
            + ("" if event.deadline_ms is None else f" by {_at(event.deadline_ms)}")
            + " (a hand not opened by then is dead)"
        )
    if isinstance(event, FantasylandTimedOut) and (
        state.play is not None and state.play.commitments[event.seat] is not None
    ):
        return (
            f"{_seat(state, teller, event.seat)} did not open its Fantasyland hand by the"
            " reveal deadline: the hand is dead (it cannot be opened without its nonce)"
            + ("; dead for the rest of the set" if state.play.declared_dead[event.seat] else "")
        )
    if isinstance(event, FantasylandTimedOut):
        play = state.play
        dead = play is not None and play.declared_dead[event.seat]
        return (
            f"{_seat(state, teller, event.seat)} did not set its Fantasyland hand in time: the"
            " service sets it by the rule set's timeout policy and opens it with the seed"
            + ("; the hand is dead for the rest of the set" if dead else "")
        )
    if isinstance(event, FantasylandRevealed):
        rows = " | ".join(teller.cards(row) for row in (event.front, event.middle, event.back))
        by = "the service opened the hand it set for" if event.nonce == "" else "opened"
        who = _seat(state, teller, event.seat)
        told = f"{by} {who}: {rows}" if event.nonce == "" else f"{who} {by} {rows}"
        if event.discards:
            told += f", discarding {teller.cards(event.discards)}"
        return told + (" — dead (rows out of order)" if event.dead else "")
    if isinstance(event, DiscardCommitted):
        return (
            f"{_seat(state, teller, event.seat)} discarded a card on street {event.street},"
            f" unseen (committed as {event.commitment[:16]}…)"
        )
    if isinstance(event, DiscardsRevealed):
        opened = ", ".join(
            f"street {street}: {teller.cards(tuple(cards.split()))}"
            for street, cards in zip(event.streets, event.cards, strict=True)
        )
        return (
            f"{_seat(state, teller, event.seat)} opened its discards ({opened}), each matching"
            " its commitment and dealt on its street"
        )
    if isinstance(event, DealScored):
        return _scored(event, state, teller)
    if isinstance(event, SeriesCompleted) and state.ended_early:
        told = happened(event, cast(TableState, state), "", teller)
        return (
            f"{told}; it ended early: a seat's time ran out in it, and the rule set's timeout"
            " policy (003) ends the set once the Fantasylands earned are played"
        )
    if isinstance(event, DealVoided):
        return (
            f"the operator voided deal {event.deal_number} ({event.reason}): nobody scores, the"
            " deal does not count towards the set and the same dealer deals again; its seed,"
            f" published now ({event.seed[:16]}…), lets anyone recompute the cards it dealt"
        )
    return None


def _street(event: StreetDealt, state: OpenFaceTable, teller: Teller) -> str:
    play = state.play
    assert play is not None
    normal = [
        seat
        for seat, count in enumerate(event.card_counts)
        if count and not play.is_fantasyland(seat)
    ]
    parts: list[str] = []
    if normal:
        counts = {event.card_counts[seat] for seat in normal}
        each = (
            plural(counts.pop(), "card") + " to " + ("each seat" if len(normal) > 1 else "")
            if len(counts) == 1
            else "cards to "
        )
        if len(normal) == 1 or not each.endswith("each seat"):
            each += ", ".join(_seat(state, teller, seat) for seat in normal)
        parts.append(each)
    for seat, count in enumerate(event.card_counts):
        if count and play.is_fantasyland(seat):
            parts.append(f"a Fantasyland hand of {count} to {_seat(state, teller, seat)}")
    told = f"street {event.street} dealt: " + "; ".join(parts) + " (the log holds only digests)"
    if play.turn is not None:
        told += f"; {_seat(state, teller, play.turn)} places first"
    return told


def _placed(event: CardsPlaced, state: OpenFaceTable, teller: Teller) -> str:
    rows = [
        f"{teller.cards(cards)} in the {label}"
        for label, cards in zip(ROW_LABELS, (event.front, event.middle, event.back), strict=True)
        if cards
    ]
    who = _seat(state, teller, event.seat)
    placed = ", ".join(reversed(rows))  # the back first, as the rows are built
    if event.automatic is None:
        told = f"{who} placed {placed} (street {event.street}), face up and final"
    else:
        why = AUTOMATIC_WORDS.get(event.automatic, event.automatic)
        told = f"the service placed {placed} for {who} (street {event.street}): {why}"
    play = state.play
    if play is not None and play.fantasyland_hidden:
        told += "; shown to that seat only until the Fantasyland hand is set"
    if play is not None and play.turn is not None:
        told += f"; {_seat(state, teller, play.turn)} places next"
    elif play is not None and play.phase is OpenFacePhase.FANTASYLAND:
        told += "; every normal hand is complete"
    return told


def _scored(event: DealScored, state: OpenFaceTable, teller: Teller) -> str:
    told = (
        f"deal {event.deal_number} scored: {teller.totals(cast(TableState, state), event.totals)};"
        f" running totals {teller.totals(cast(TableState, state), event.series_totals)}"
    )
    play = state.play
    if play is None:
        return told
    try:
        score = score_open_face_deal(play.rules, play.boards, dead_seats(play))
    except (*MALFORMED, AssertionError):
        return told  # a forged record: the verifier says what is wrong
    lines = [told]
    for seat, hand in enumerate(score.hands):
        rows = " | ".join(teller.cards([str(c) for c in row]) for row in play.boards[seat].rows)
        if hand.dead:
            why = "declared dead (timeout)" if play.declared_dead[seat] else "rows out of order"
            worth = f"dead: {why}, its royalties do not count"
        else:
            worth = "royalties " + " + ".join(map(str, hand.royalties)) + f" = {hand.royalty_total}"
        lines.append(f"    {_seat(state, teller, seat)}: {rows}; {worth}")
    signs = {1: "won", -1: "lost", 0: "tied"}
    for pair in score.pairs:
        rows = ", ".join(
            f"{label} {signs[result]}" for label, result in zip(ROW_LABELS, pair.rows, strict=True)
        )
        lines.append(
            f"    {_seat(state, teller, pair.seat_a)} against {_seat(state, teller, pair.seat_b)}:"
            f" {rows}; points {pair.points:+d}, royalties {pair.royalties:+d}:"
            f" {pair.delta:+d}"
        )
    after = state.next_fantasyland
    fantasy = [seat for seat, cards in enumerate(after) if cards is not None]
    if fantasy:
        lines.append(
            "    next deal Fantasyland for "
            + ", ".join(_seat(state, teller, seat) for seat in fantasy)
            + "; the button stays"
        )
    return "\n".join(lines)

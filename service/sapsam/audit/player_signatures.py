"""The players' signatures of their moves, checked from an export alone (docs/fairness.md §19,
docs/audit.md §4.2).

A signed ``NaturalDeclared``, ``ArrangementCommitted``, ``ArrangementRevealed`` or
``SurrenderAnnounced`` carries the player's public key and its Ed25519 signature of the move's
message, which binds the table, the deal, the seat, the id of the player seated there
(``PlayerSeated``), and the declaration's commitment (§21), the arrangement's commitment (with its
scheme), the revealed rows and nonce, or the choice announced (play or surrender). At an open-face
table a signed ``CardsPlaced`` (the street, what each row gained, and the ``DiscardCommitted``
recorded right after it, if any), ``FantasylandCommitted`` or ``FantasylandRevealed`` does the
same, and so does a Pineapple seat's ``DiscardsRevealed`` (each opening's street, cards and
nonce). For each seat with a signed move in a finished deal, one check, ``player_signature[s]``:

* every signature verifies, for the player the export seats there: a forger who swaps two players'
  ids, or rewrites a signed commitment or reveal, breaks it even with every hash re-chained (the
  forger cannot sign as the player);
* a player who signed a move signs every later one in the export (a key is never removed, so the
  server refuses an unsigned move from a player with a key): stripping the signatures from a
  player's later moves is named too. An announcement counts only from its ``signing_scheme`` 2
  on (schema 2: one recorded before announcements were signed is unsigned, rightly), and never
  the server's for a missed turn (``timed_out``: never signed, so one carrying a signature is
  named); an open-face move likewise from its ``signing_scheme`` 2 on, and never one the
  service made (an ``automatic`` placement, a Fantasyland hand or discards opened with an empty
  nonce).

Seats without a signed move get no check (their players registered no key; nothing to verify).
What this cannot show alone: that a key is the player's own. The player knows its key (the SDK
keeps it beside its token), so a player checks the keys an export shows for it; docs/audit.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Final

from sapsam.audit.deal_events import MALFORMED, DealEvents
from sapsam.audit.report import AuditCheck, Status
from sapsam.domain.events import (
    ArrangementCommitted,
    ArrangementRevealed,
    Event,
    NaturalDeclared,
    PlayerSeated,
    SeatReplaced,
    SurrenderAnnounced,
    TableCreated,
)
from sapsam.domain.open_face.events import (
    CardsPlaced,
    DiscardCommitted,
    DiscardsRevealed,
    FantasylandCommitted,
    FantasylandRevealed,
)
from sapsam.fairness import player_keys
from sapsam.fairness.natural_commitments import declare_message
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import parse_cards
from sapsam.rules.open_face.board import Placement

__all__ = ["signature_checks"]


def signature_checks(
    deals: Sequence[DealEvents], created: TableCreated | None, seated: Sequence[PlayerSeated]
) -> list[AuditCheck]:
    """One ``player_signature[s]`` check per seat and finished deal that holds a signed move, and
    one for a player's move left unsigned after it had signed one."""
    if created is None:
        return []
    players = {event.seat: event.player_id for event in seated}
    signers: set[str] = set()  # players seen signing, in export order
    checks: list[AuditCheck] = []
    for deal in deals:
        problems: dict[int, list[str]] = {}
        signed_seats: set[int] = set()
        replaced: list[SeatReplaced] = []  # between this deal and the next: for the next ones
        for index, event in enumerate(deal.events):
            role = _ROLE_OF_TYPE.get(type(event))
            if role is None:
                role = _role_of(type(event))
            if role is _REPLACED and isinstance(event, SeatReplaced):
                replaced.append(event)
                continue
            if role is not _SIGNED or not isinstance(event, _SIGNED_MOVES):
                continue
            seat = event.seat
            player = players.get(seat)
            kind = _KINDS[type(event)]
            if event.signature is None and event.player_key is None:
                if player is not None and player in signers and _signature_expected(event):
                    problems.setdefault(seat, []).append(
                        f"the {kind} is unsigned, but player {player} signed an earlier move"
                    )
                continue
            signed_seats.add(seat)
            problem = _problem(created, deal.number, player, event, deal.events[index + 1 :])
            if problem:
                problems.setdefault(seat, []).append(f"the {kind}: {problem}")
            elif player is not None:
                signers.add(player)
        for seat in sorted(signed_seats | set(problems)):
            name = f"player_signature[{seat}]"
            found = problems.get(seat)
            if found:
                checks.append(
                    AuditCheck(
                        name,
                        Status.FAILED,
                        f"seat {seat} (player {players.get(seat)}): " + "; ".join(found),
                        "every move signed by the seated player",
                        found[0],
                        deal=deal.number,
                    )
                )
            else:
                checks.append(
                    AuditCheck(
                        name,
                        Status.PASSED,
                        f"seat {seat}'s signed moves verify for player {players.get(seat)}",
                        deal=deal.number,
                    )
                )
        for replacement in replaced:
            players[replacement.seat] = replacement.player_id
    return checks


SignedMove = (
    NaturalDeclared
    | ArrangementCommitted
    | ArrangementRevealed
    | SurrenderAnnounced
    | CardsPlaced
    | FantasylandCommitted
    | FantasylandRevealed
    | DiscardsRevealed
)
OpenFaceMove = CardsPlaced | FantasylandCommitted | FantasylandRevealed | DiscardsRevealed
_SIGNED_MOVES = (
    NaturalDeclared,
    ArrangementCommitted,
    ArrangementRevealed,
    SurrenderAnnounced,
    CardsPlaced,
    FantasylandCommitted,
    FantasylandRevealed,
    DiscardsRevealed,
)
# What the loop of signature_checks does with an event of each concrete type: keep a
# SeatReplaced, check a signed move, pass over the rest. What isinstance answers depends on the
# type alone, so each type met is worked out once, as the two isinstance tests would.
_REPLACED: Final = "replaced"
_SIGNED: Final = "signed"
_OTHER: Final = "other"
_ROLE_OF_TYPE: dict[type, str] = {}


def _role_of(event_type: type) -> str:
    role = (
        _REPLACED
        if issubclass(event_type, SeatReplaced)
        else _SIGNED
        if issubclass(event_type, _SIGNED_MOVES)
        else _OTHER
    )
    if len(_ROLE_OF_TYPE) < 256:  # bounded: only types met in events
        _ROLE_OF_TYPE[event_type] = role
    return role


_KINDS: dict[type, str] = {
    NaturalDeclared: "declaration",
    ArrangementCommitted: "commit",
    ArrangementRevealed: "reveal",
    SurrenderAnnounced: "announcement",
    CardsPlaced: "placement",
    FantasylandCommitted: "Fantasyland commitment",
    FantasylandRevealed: "Fantasyland reveal",
    DiscardsRevealed: "discards' opening",
}


def _signature_expected(event: SignedMove) -> bool:
    """Whether a player with a key must have signed this move: every declaration, commit and
    reveal; an announcement of signing scheme 2 the seat made itself (not the server's for a
    missed turn); an open-face move of signing scheme 2 the seat made (not the service's)."""
    if isinstance(event, SurrenderAnnounced):
        return event.signing_scheme >= 2 and not event.timed_out
    if isinstance(event, OpenFaceMove):
        return event.signing_scheme >= 2 and _services_move(event) is None
    return True


def _services_move(event: OpenFaceMove) -> str | None:
    """What the service made, if it made this open-face move (never signed), else None."""
    if isinstance(event, CardsPlaced) and event.automatic is not None:
        return f"the service's placement ({event.automatic})"
    if isinstance(event, FantasylandRevealed) and event.nonce == "":
        return "the Fantasyland hand the service set and opened after a timeout"
    if isinstance(event, DiscardsRevealed) and all(nonce == "" for nonce in event.nonces):
        return "the discards the service opened after a timeout"
    return None


def _discard_commitment(event: CardsPlaced, rest: Sequence[Event]) -> bytes | None:
    """The commitment of the ``DiscardCommitted`` recorded right after a placement, if any."""
    following = rest[0] if rest else None
    if (
        isinstance(following, DiscardCommitted)
        and following.seat == event.seat
        and following.street == event.street
    ):
        return bytes.fromhex(following.commitment)
    return None


def _problem(
    created: TableCreated,
    deal_number: int,
    player: str | None,
    event: SignedMove,
    rest: Sequence[Event] = (),
) -> str:
    """What is wrong with a signed move, or ``""``."""
    if player is None:
        return "no player is seated there"
    if event.signature is None or event.player_key is None:
        return "a key without a signature, or a signature without its key"
    if isinstance(event, SurrenderAnnounced) and event.timed_out:
        return (
            "the server's announcement for a missed turn is never signed, and this one carries"
            " a signature"
        )
    if isinstance(event, SurrenderAnnounced) and event.signing_scheme < 2:
        return "an announcement of signing scheme 1 (recorded before they were signed) is signed"
    if isinstance(event, OpenFaceMove):
        made = _services_move(event)
        if made is not None:
            return f"{made} is never signed, and this one carries a signature"
        if event.signing_scheme < 2:
            return "a move of signing scheme 1 (recorded before open face's were signed) is signed"
    try:
        key = bytes.fromhex(event.player_key)
        signature = bytes.fromhex(event.signature)
        table_id = uuid.UUID(created.table_id)
        if isinstance(event, CardsPlaced):
            placement = Placement(
                parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
            )
            message = player_keys.place_message(
                table_id,
                deal_number,
                event.seat,
                player,
                event.street,
                placement,
                _discard_commitment(event, rest),
            )
        elif isinstance(event, DiscardsRevealed):
            message = player_keys.discards_reveal_message(
                table_id,
                deal_number,
                event.seat,
                player,
                [
                    (street, parse_cards(cards.split()), bytes.fromhex(nonce))
                    for street, cards, nonce in zip(
                        event.streets, event.cards, event.nonces, strict=True
                    )
                ],
            )
        elif isinstance(event, FantasylandCommitted):
            message = player_keys.commit_message(
                table_id,
                deal_number,
                event.seat,
                player,
                2,
                bytes.fromhex(event.commitment),
                tag=player_keys.TAG_FANTASYLAND_COMMIT_SIGNATURE,
            )
        elif isinstance(event, SurrenderAnnounced):
            message = player_keys.announce_message(
                table_id, deal_number, event.seat, player, event.surrender
            )
        elif isinstance(event, NaturalDeclared):
            message = declare_message(
                table_id, deal_number, event.seat, player, bytes.fromhex(event.commitment)
            )
        elif isinstance(event, ArrangementCommitted):
            message = player_keys.commit_message(
                table_id,
                deal_number,
                event.seat,
                player,
                event.scheme,
                bytes.fromhex(event.commitment),
            )
        else:
            rows = Arrangement.of_card_rows(
                parse_cards(event.front), parse_cards(event.middle), parse_cards(event.back)
            )
            tag = (
                player_keys.TAG_FANTASYLAND_REVEAL_SIGNATURE
                if isinstance(event, FantasylandRevealed)
                else player_keys.TAG_REVEAL_SIGNATURE
            )
            message = player_keys.reveal_message(
                table_id, deal_number, event.seat, player, rows, bytes.fromhex(event.nonce), tag=tag
            )
    except MALFORMED as error:
        return f"cannot be read: {error}"
    if not player_keys.signature_holds(key, message, signature):
        return (
            f"the signature by key {event.player_key} does not verify for player {player}"
            " (docs/fairness.md §19)"
        )
    return ""

"""The operator's control of a started tournament: ``decide``'s part for pausing, cancelling,
forfeiting and re-seating (resuming, which may seat a round, is in ``tournament_decide``).

Rules of the house (docs/tournaments.md, "Pause, resume, cancel" and "Forfeit and re-seat"):

- A pause holds the clocks and the rounds: while paused no round is seated, no deal starts at
  the tournament's tables and no deadline runs out there; the pause is never held against a
  player (deadlines that fell in it are extended when it ends, as after a server outage).
- A cancellation ends the tournament with its standings as they stood; nothing is credited
  after it.
- A forfeit takes a player out of every later round. rules.md has no rule for a player who
  leaves ("Highest total wins; equal totals share the place"), so nothing is invented: the deals
  already credited stay the player's, the player stays in the standings by total, marked as
  forfeited, and the seat at the current table is theirs (it times out) until re-seated.
- A re-seat gives a forfeited player's seat at a current-round table to a new player from the
  table's next deal; that player becomes an entrant. Only a forfeited player's seat is re-seated:
  the draw's seating of players still in the tournament is never changed by hand.
"""

from __future__ import annotations

from sapsam.domain.errors import DomainError, Reason
from sapsam.domain.events import Event
from sapsam.domain.tournament_commands import (
    CancelTournament,
    ForfeitPlayer,
    PauseTournament,
    ReseatPlayer,
)
from sapsam.domain.tournament_events import (
    PlayerForfeited,
    SeatReassigned,
    TournamentCancelled,
    TournamentPaused,
)
from sapsam.domain.tournament_state import (
    MAX_REASON_LENGTH,
    TournamentPhase,
    TournamentState,
)

MIN_PLAYERS_LEFT = 2
"""A later round seats at least one table of two."""


def check_reason(reason: str) -> None:
    """A pause's, a cancellation's or a forfeit's reason: 1 to 200 printable characters."""
    if not reason.strip() or len(reason) > MAX_REASON_LENGTH or not reason.isprintable():
        raise DomainError(
            Reason.INVALID_ARGUMENT,
            f"reason must be 1 to {MAX_REASON_LENGTH} printable characters",
            field="reason",
        )


def require_in_play(state: TournamentState, doing: str) -> None:
    """Refuse ``doing`` unless the tournament has started and is not over."""
    phase = state.phase
    if phase is TournamentPhase.COMPLETE:
        raise DomainError(Reason.TOURNAMENT_COMPLETE, f"the tournament is complete: cannot {doing}")
    if phase is TournamentPhase.REGISTRATION:
        raise DomainError(Reason.WRONG_PHASE, f"the tournament has not started: cannot {doing} yet")


def decide_pause(state: TournamentState, command: PauseTournament) -> list[Event]:
    check_reason(command.reason)
    require_in_play(state, "pause it")
    if state.phase is TournamentPhase.PAUSED:
        raise DomainError(Reason.TOURNAMENT_PAUSED, "the tournament is paused already")
    return [TournamentPaused(reason=command.reason, paused_at_ms=command.now_ms)]


def decide_cancel(state: TournamentState, command: CancelTournament) -> list[Event]:
    check_reason(command.reason)
    if state.phase is TournamentPhase.COMPLETE:
        raise DomainError(Reason.TOURNAMENT_COMPLETE, "the tournament is complete already")
    standing = state.standings()
    return [
        TournamentCancelled(
            reason=command.reason,
            cancelled_at_ms=command.now_ms,
            players=tuple(item.player_id for item in standing),
            totals=tuple(item.total for item in standing),
            places=tuple(item.place for item in standing),
        )
    ]


def decide_forfeit(state: TournamentState, command: ForfeitPlayer) -> list[Event]:
    check_reason(command.reason)
    if state.phase is TournamentPhase.REGISTRATION:
        raise DomainError(
            Reason.WRONG_PHASE,
            "the tournament has not started: a player leaves by unregistering",
        )
    require_in_play(state, "forfeit")
    if command.player_id in state.forfeited:
        raise DomainError(Reason.PLAYER_FORFEITED, "that player has forfeited already")
    if command.player_id not in state.entrants:
        raise DomainError(Reason.NOT_REGISTERED, "that player is not in this tournament")
    if state.current_round < state.rounds and len(state.seating_pool) - 1 < MIN_PLAYERS_LEFT:
        raise DomainError(
            Reason.TOO_FEW_PLAYERS,
            f"a forfeit may not leave fewer than {MIN_PLAYERS_LEFT} players for the rounds to"
            " come; cancel the tournament instead",
        )
    return [
        PlayerForfeited(
            player_id=command.player_id,
            round=state.current_round,
            reason=command.reason,
            forfeited_at_ms=command.now_ms,
        )
    ]


def decide_reseat(state: TournamentState, command: ReseatPlayer) -> list[Event]:
    require_in_play(state, "re-seat")
    table = state.tables.get(command.table_id)
    if table is None or table.round != state.current_round:
        raise DomainError(
            Reason.TABLE_NOT_FOUND,
            f"table {command.table_id} is not a table of this tournament's current round",
            field="seat",
        )
    if not 0 <= command.seat < len(table.players):
        raise DomainError(
            Reason.UNKNOWN_SEAT,
            f"seat must be 0 to {len(table.players) - 1}, not {command.seat}",
            field="seat",
        )
    if command.from_deal < 2 or state.table_done(table):
        raise DomainError(
            Reason.WRONG_PHASE,
            "a seat is re-seated between two deals of the round, after the first and before"
            " the table has played its round",
        )
    previous = table.holders[command.seat]
    if previous not in state.forfeited:
        raise DomainError(
            Reason.PLAYER_SEATED,
            "the seat's player is still in the tournament: only a forfeited player's seat is"
            " re-seated (forfeit the player first)",
        )
    if command.player_id in state.forfeited:
        raise DomainError(Reason.PLAYER_FORFEITED, "that player has forfeited this tournament")
    if command.player_id in state.entrants:
        raise DomainError(
            Reason.ALREADY_REGISTERED, "that player is an entrant already, with a seat of its own"
        )
    return [
        SeatReassigned(
            round=table.round,
            table_id=str(command.table_id),
            seat=command.seat,
            previous_player_id=previous,
            player_id=command.player_id,
            from_deal=command.from_deal,
        )
    ]

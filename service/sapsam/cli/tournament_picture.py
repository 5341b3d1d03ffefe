"""What ``sapsam tournament watch`` shows of a tournament, read through the API: the status line,
one line per table of the round (whom it waits for and since when, an ``ALERT`` for a stuck
table or one played out whose deals are not credited, "held" while the tournament is paused),
and each event of the tournament's stream as a sentence."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from sapsam.cli.wording import plural


class Picture:
    """What ``watch`` shows of a tournament, read through the API."""

    def __init__(self, channel: Any, tournament: str, metadata: Any, stuck_after: int) -> None:
        from sapsam_proto.v1 import (
            operator_service_pb2_grpc,
            table_service_pb2_grpc,
            tournament_service_pb2_grpc,
        )

        self.tables = table_service_pb2_grpc.TableServiceStub(channel)
        self.tournaments = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        self.operator = operator_service_pb2_grpc.OperatorServiceStub(channel)
        self.tournament = tournament
        self.metadata = metadata
        self.stuck_after = stuck_after
        self.names: dict[str, str] = {}
        self.view: Any = None
        self.uncredited: set[str] = set()
        """Tables played out with deals not yet credited at the last look."""

    @property
    def finished(self) -> bool:
        """Whether the tournament read last is complete or cancelled (nothing more will come)."""
        from sapsam_proto.v1 import tournament_pb2

        return self.view is not None and self.view.status in (
            tournament_pb2.TOURNAMENT_STATUS_COMPLETE,
            tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
        )

    def who(self, player: str) -> str:
        """A player's display name (its resource name when it has none)."""
        player = player if player.startswith("players/") else f"players/{player}"
        return self.names.get(player) or player

    def read(self) -> list[str]:
        """The picture now: the status line, then one line per table of the round."""
        from sapsam_proto.v1 import (
            operator_service_pb2,
            tournament_pb2,
            tournament_service_pb2,
        )

        view = self.tournaments.GetTournament(
            tournament_service_pb2.GetTournamentRequest(name=self.tournament),
            metadata=self.metadata,
            timeout=30,
        ).tournament
        self.view = view
        self._read_names()
        status = tournament_pb2.TournamentStatus.Name(view.status).removeprefix(
            "TOURNAMENT_STATUS_"
        )
        lines = [self._status_line(view, status)]
        if not view.seated_rounds:
            return lines
        current = view.seated_rounds[-1]
        ours = {table.table: index for index, table in enumerate(current.tables)}
        awaited = self.operator.GetAwaitedTables(
            operator_service_pb2.GetAwaitedTablesRequest(), metadata=self.metadata, timeout=30
        ).tables
        stuck = self.operator.GetStuckTables(
            operator_service_pb2.GetStuckTablesRequest(
                waiting_longer_than_seconds=self.stuck_after
            ),
            metadata=self.metadata,
            timeout=30,
        ).tables
        stuck_names = {table.table for table in stuck}
        uncredited: set[str] = set()
        by_table = {table.table: table for table in awaited}
        now = time.time()
        open_face = view.HasField("open_face_rule_set")
        round_over = view.rounds_completed >= current.round
        for table in current.tables:
            index = ours[table.table]
            players = ", ".join(self.who(player) for player in table.players)
            if open_face:
                # A set's length is not fixed (a Fantasyland deal adds one): no "n/m".
                set_over = round_over or self._set_over(table.table, table.deals_credited)
                credited = plural(table.deals_credited, "deal") + " credited"
                credited += ", set over" if set_over else ""
                head = f"  table {index} {table.table} ({credited}; {players})"
                behind = not set_over
            else:
                credited = f"{table.deals_credited}/{view.deals_per_round}"
                head = f"  table {index} {table.table} ({credited} deals credited; {players})"
                behind = table.deals_credited < view.deals_per_round
            state = by_table.get(table.table)
            if state is None:
                if behind and table.table in self.uncredited:
                    # Played out, yet its deals are not all credited two looks running: the
                    # results process is behind or fails on this table.
                    lines.append(
                        f"ALERT {head}: played out, but not every deal is credited (the results"
                        " process is behind or failing: see sapsam tables stuck and the server's"
                        " log)"
                    )
                else:
                    lines.append(f"{head}: done")
                if behind:
                    uncredited.add(table.table)
                continue
            waiting = self._waiting(state, now)
            if view.status == tournament_pb2.TOURNAMENT_STATUS_PAUSED:
                # Its clocks are held on purpose: no deadline runs out, nothing is stuck.
                lines.append(f"{head}: {waiting} (held: the tournament is paused)")
                continue
            alert = "ALERT " if table.table in stuck_names else ""
            lines.append(f"{alert}{head}: {waiting}")
        self.uncredited = uncredited
        return lines

    def _set_over(self, table: str, credited: int) -> bool:
        """Whether an open-face table's set is over and credited (``TableSetCompleted``): its
        set complete and its last deal credited."""
        import grpc

        from sapsam_proto.v1 import table_pb2, table_service_pb2

        try:
            got = self.tables.GetTable(
                table_service_pb2.GetTableRequest(name=table), metadata=self.metadata, timeout=30
            ).table
        except grpc.RpcError:
            return False
        return bool(
            got.phase == table_pb2.TABLE_PHASE_SERIES_COMPLETE and credited >= got.deal_number
        )

    def _read_names(self) -> None:
        from sapsam_proto.v1 import tournament_service_pb2

        token = ""
        while True:
            page = self.tournaments.GetStandings(
                tournament_service_pb2.GetStandingsRequest(
                    tournament=self.tournament, page_size=100, page_token=token
                ),
                metadata=self.metadata,
                timeout=30,
            )
            for line in page.standings:
                self.names[line.player] = line.display_name
            token = page.next_page_token
            if not token:
                return

    def _status_line(self, view: Any, status: str) -> str:
        current = view.seated_rounds[-1] if view.seated_rounds else None
        credited = sum(table.deals_credited for table in current.tables) if current else 0
        planned = len(current.tables) * view.deals_per_round if current else 0
        line = f"{view.display_name} ({view.name}): {status}"
        if current is not None and view.HasField("open_face_rule_set"):
            line += (
                f", round {current.round} of {view.rounds} (one open-face set a table),"
                f" {plural(credited, 'deal')} credited this round,"
                f" {plural(view.rounds_completed, 'round')} complete"
            )
        elif current is not None:
            line += (
                f", round {current.round} of {view.rounds}, {credited} of"
                f" {plural(planned, 'deal')} credited this round,"
                f" {plural(view.rounds_completed, 'round')} complete"
            )
        else:
            line += f", {len(view.players)} registered"
        if view.status_reason:
            line += f" ({view.status_reason})"
        return line

    def _waiting(self, table: Any, now: float) -> str:
        from sapsam_proto.v1 import operator_service_pb2, table_pb2

        phase = table_pb2.TablePhase.Name(table.phase).removeprefix("TABLE_PHASE_").lower()
        since = max(0, int(now - table.waiting_since.ToMilliseconds() / 1000))
        if table.awaiting == operator_service_pb2.AWAITING_SEATS:
            seats = ", ".join(
                f"seat {seat} ({self.who(player) if player else 'free'})"
                for seat, player in zip(table.seats, table.players, strict=True)
            )
            whom = f"waits for {seats}"
        elif table.awaiting == operator_service_pb2.AWAITING_ANYONE:
            whom = "waits for anyone seated to go on"
        else:
            whom = "waits for the server"
        text = f"{phase}, {whom} for {since} s"
        if table.HasField("deadline_time"):
            left = int(table.deadline_time.ToMilliseconds() / 1000 - now)
            text += f"; past its deadline by {-left} s" if left < 0 else f"; deadline in {left} s"
        return text

    def describe(self, event: Any) -> str:
        """One event of the stream as a sentence."""
        data = json.loads(event.data_json)
        stamp = datetime.fromtimestamp(event.record_time.ToMilliseconds() / 1000, UTC)
        return f"{stamp:%H:%M:%S} {self._sentence(event.type, data)}"

    def _sentence(self, kind: str, data: dict[str, Any]) -> str:
        if kind == "DealCredited":
            results = ", ".join(
                f"{self.who(player)} {delta:+d}"
                for player, delta in zip(data["players"], data["deltas"], strict=False)
            )
            return (
                f"round {data['round']}, table {self._index(data['table_id'])}: deal"
                f" {data['deal_number']} credited ({results})"
            )
        simple = {
            "RoundCompleted": f"round {data.get('round')} is complete",
            "TournamentCompleted": "the tournament is complete: the standings are final",
            "TournamentStarted": f"started with {plural(len(data.get('entrants', [])), 'player')}",
            "TournamentPaused": f"paused by the operator: {data.get('reason')}",
            "TournamentResumed": "resumed by the operator",
            "TournamentCancelled": f"cancelled by the operator: {data.get('reason')}",
            "PlayerRegistered": f"{self.who(str(data.get('player_id')))} registered",
            "PlayerUnregistered": f"{self.who(str(data.get('player_id')))} withdrew",
        }
        if kind in simple:
            return simple[kind]
        if kind == "RoundSeated":
            count = plural(len(data["table_ids"]), "table")
            return f"round {data['round']} seated ({data['method']} draw): {count}"
        if kind == "TableSetCompleted":
            return (
                f"round {data.get('round')}, table {self._index(str(data.get('table_id')))}: set"
                f" over after deal {data.get('last_deal')}"
                f" ({plural(int(data.get('deals_credited', 0)), 'deal')} credited)"
            )
        if kind == "PlayerForfeited":
            return f"{self.who(data['player_id'])} forfeited: {data['reason']}"
        if kind == "SeatReassigned":
            return (
                f"table {self._index(data['table_id'])} seat {data['seat']}:"
                f" {self.who(data['player_id'])} takes over from"
                f" {self.who(data['previous_player_id'])} from deal {data['from_deal']}"
            )
        return kind

    def _index(self, table_id: str) -> str:
        for seated in getattr(self.view, "seated_rounds", []):
            for index, table in enumerate(seated.tables):
                if table.table == f"tables/{table_id}":
                    return str(index)
        return table_id[:8]

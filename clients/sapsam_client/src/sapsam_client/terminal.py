"""``sapsam-play``: Chinese poker at a sapsam table, from a terminal (80×24 is enough).

::

    sapsam-play --server 127.0.0.1:50051                 # pick an open table or create one
    sapsam-play --table tables/<uuid> --name Ann         # join that table
    sapsam-play --create --seats 4 --deals 8             # create a table and wait for players

The first run registers a player and saves its token (``--token-file``, else
``$SAPSAM_TOKEN_FILE``, else ``sapsam/tokens.json`` in the user's config folder); later runs reuse
it. Open commitments are kept next to it (``commitments.json``) until revealed, so a restarted
session can still reveal, and so are the server's signed receipts of every move (``receipts/``,
or ``--receipts DIR``: ``sapsam_client.receipts``). Each deal shows your 13 cards sorted and the
solver's suggestion with each row's value; type the front and middle rows (the back row is what is
left) or press Enter to accept the suggestion.
A foul is announced before you confirm. Committing, confirming and revealing need no typing: the
commitment is computed here and only its hash is sent until every seat has confirmed. After each
deal: every seat's revealed rows, the row-by-row results and the standings. Other seats' cards are
never shown before the reveal (the server does not send them either).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from sapsam_client.client import DEFAULT_SERVER, Client, Hand, connect, seat_position
from sapsam_client.commitment import CardError, Rows, card_index, card_text, row_problem
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.errors import AlreadyExistsError, SapsamError, UnauthenticatedError
from sapsam_client.player_key import KEY_FILE_NAME
from sapsam_client.receipts import ReceiptFolder, default_folder
from sapsam_client.rules import (
    RulesUnavailableError,
    foul_detail,
    row_values,
    rules_module,
    solver_rows,
)
from sapsam_client.seat import CommitmentKeeper, Seat
from sapsam_client.tokens import SavedPlayer, load_player, save_player, token_file
from sapsam_proto.v1 import table_event_pb2, table_pb2

OUTCOME_LETTER: Final = {
    table_pb2.ROW_OUTCOME_FIRST_SEAT_WON: "W",
    table_pb2.ROW_OUTCOME_SECOND_SEAT_WON: "L",
    table_pb2.ROW_OUTCOME_TIE: "=",
}
NAME_WIDTH: Final = 10

Ask = Callable[[str], str]
Say = Callable[[str], None]


class SessionEndedError(Exception):
    """The player ended input (Ctrl-D) or asked to leave."""


def by_rank(cards: Sequence[str]) -> list[str]:
    """Cards strongest first: by rank, then suit (spades high)."""
    return [card_text(index) for index in sorted((card_index(c) for c in cards), reverse=True)]


def row_text(cards: Sequence[str]) -> str:
    """A row, strongest card first."""
    return " ".join(by_rank(cards))


def rows_block(rows: Rows, title: str) -> list[str]:
    """Three lines, one per row, with the row's value."""
    values = row_values(rows) or ("?", "?", "?")
    lines = [title]
    for name, row, value in zip(
        ("front", "middle", "back"), (rows.front, rows.middle, rows.back), values, strict=True
    ):
        lines.append(f"  {name:<6} {row_text(row):<15} {value}"[:79])
    return lines


def parse_row(text: str) -> list[str]:
    """Cards typed by a person: separated by spaces or commas, any case, ``10`` for a ten."""
    return [card_text(card_index(token)) for token in text.replace(",", " ").split()]


class Table:
    """What the terminal knows of the table: seat names for display."""

    def __init__(self, client: Client, seat: Seat) -> None:
        self.client = client
        self.seat = seat
        self.names: dict[str, str] = {}
        self.series_length = 0

    def name_of(self, seat: str) -> str:
        """A seat's player's display name (shortened), or the seat number."""
        name = self.names.get(seat) or f"seat {seat_position(seat)}"
        return name[:NAME_WIDTH]

    def refresh(self) -> None:
        """Read the seats' names from the table."""
        table = self.client.get_table(self.seat.table)
        self.series_length = table.rule_set.series_length
        for seat in table.seats:
            if seat.display_name:
                self.names[seat.name] = seat.display_name


class Terminal:
    """The prompts and the printed table, over two functions (so tests can drive them)."""

    def __init__(self, ask: Ask, say: Say) -> None:
        self.ask = ask
        self.say = say

    def prompt(self, question: str) -> str:
        """Ask a question; Ctrl-D ends the session."""
        try:
            return self.ask(question).strip()
        except EOFError:
            raise SessionEndedError() from None

    def confirm(self, question: str, default: bool) -> bool:
        """A yes/no question."""
        answer = self.prompt(f"{question} [{'Y/n' if default else 'y/N'}] ").lower()
        return default if not answer else answer.startswith("y")

    # -- arranging ------------------------------------------------------------------------------

    def arrange(self, hand: Hand, table: table_pb2.Table, seat: Seat) -> Rows:
        """Show the hand and the suggestion; read rows until the player confirms some."""
        suggestion = solver_rows(hand.cards)
        dealer = seat_position(table.dealer_seat) if table.dealer_seat else "?"
        self.say(
            f"\nDeal {hand.deal_number}: your cards (seat {seat.position}, dealer seat {dealer})"
        )
        self.say("  " + row_text(hand.cards))
        if table.HasField("deadline_time"):
            left = table.deadline_time.ToDatetime(tzinfo=UTC) - datetime.now(UTC)
            self.say(f"time limit: confirm within {max(0, int(left.total_seconds()))} s")
        while True:
            for line in rows_block(suggestion, "Suggested rows:"):
                self.say(line)
            self.say("Type the front (3 cards) and middle (5); the rest is the back.")
            rows = self.read_rows(hand, suggestion)
            for line in rows_block(rows, "Your rows:"):
                self.say(line)
            foul = foul_detail(rows, hand.cards)
            if foul:
                self.say("WARNING: these rows are a FOUL:")
                for line in textwrap.wrap(foul, 76):
                    self.say(f"  {line}")
                self.say("A fouled hand loses every row to every other seat.")
                if self.confirm("Confirm the foul anyway?", default=False):
                    return rows
            elif self.confirm("Confirm these rows?", default=True):
                return rows

    def read_rows(self, hand: Hand, suggestion: Rows) -> Rows:
        """Front and middle typed by the player (Enter on the front takes the suggestion)."""
        while True:
            try:
                front_text = self.prompt("front (Enter = suggestion)> ")
                if not front_text:
                    return suggestion
                front = parse_row(front_text)
                middle = parse_row(self.prompt("middle> "))
            except CardError as error:
                self.say(f"  {error}; cards look like As Td 9c 10h")
                continue
            placed = {card_index(card) for card in front + middle}
            back = [card for card in hand.cards if card_index(card) not in placed]
            rows = Rows.of(front, middle, back)
            problem = row_problem(rows, hand.cards)
            if problem:
                self.say(f"  {problem}; try again")
                continue
            return rows

    # -- what happens at the table --------------------------------------------------------------

    def show_event(self, event: table_event_pb2.TableEvent, table: Table) -> None:
        """One line (or a block) for the events a player wants to see."""
        kind = event.WhichOneof("payload")
        me = table.seat.name
        if kind == "player_seated":
            table.refresh()
            seated = event.player_seated.seat
            who = "you" if seated == me else table.name_of(seated)
            self.say(f"seat {seat_position(seated)}: {who} sat down")
        elif kind == "dealer_chosen":
            dealer = event.dealer_chosen.dealer_seat
            self.say(f"dealer drawn by lot: seat {seat_position(dealer)} ({table.name_of(dealer)})")
        elif kind == "deal_started":
            started = event.deal_started
            total = f" of {table.series_length}" if table.series_length else ""
            self.say(f"-- deal {started.deal_number}{total} started --")
        elif kind == "seat_confirmed" and event.seat_confirmed.seat != me:
            self.say(f"seat {seat_position(event.seat_confirmed.seat)} confirmed its rows")
        elif kind == "reveals_opened":
            self.say("every seat confirmed: revealing")
        elif kind == "seat_timed_out":
            self.say(f"seat {seat_position(event.seat_timed_out.seat)} ran out of time")
        elif kind == "deal_scored":
            for line in self.result_lines(event.deal_scored.result, table):
                self.say(line)
        elif kind == "series_completed":
            for line in self.final_lines(event.series_completed, table):
                self.say(line)

    def result_lines(self, result: table_pb2.DealResult, table: Table) -> list[str]:
        """A scored deal: each seat's rows, the row-by-row results, the standings."""
        lines = [f"== deal {result.deal_number}: the reveal ==  (deal, total)"]
        for seat in result.seats:
            rows = seat.arrangement
            shown = " | ".join(row_text(row) for row in (rows.front, rows.middle, rows.back))
            if not shown.replace("|", "").strip():
                shown = "(no rows revealed)"
            mark = "*" if seat.seat == table.seat.name else " "
            foul = " FOUL" if seat.foul else ""
            lines.append(
                f"{mark}{seat_position(seat.seat)} {table.name_of(seat.seat):<{NAME_WIDTH}} "
                f"{shown:<42} {seat.score_delta:+3d} {seat.series_total:+4d}{foul}"
            )
        pairs = []
        for pair in result.pairs:
            letters = "".join(
                OUTCOME_LETTER.get(outcome, "?") for outcome in (pair.front, pair.middle, pair.back)
            )
            pairs.append(
                f"{seat_position(pair.first_seat)}v{seat_position(pair.second_seat)} "
                f"{letters} {pair.first_seat_delta:+d}"
            )
        lines.append("rows (front middle back, W/L/= for the first seat):")
        for start in range(0, len(pairs), 3):
            lines.append("  " + "   ".join(pairs[start : start + 3]))
        totals = sorted(result.seats, key=lambda s: (-s.series_total, seat_position(s.seat)))
        standing = ", ".join(
            f"{table.name_of(seat.seat)} {seat.series_total:+d}" for seat in totals
        )
        lines.append(f"standings: {standing}"[:79])
        return lines

    def final_lines(self, completed: table_event_pb2.SeriesCompleted, table: Table) -> list[str]:
        """The final table: places, shared when totals are equal."""
        places = [standing.place for standing in completed.standings]
        lines = [f"== final standings after {completed.deals_played} deals =="]
        for standing in sorted(completed.standings, key=lambda s: (s.place, s.seat)):
            shared = "=" if places.count(standing.place) > 1 else " "
            you = "  (you)" if standing.seat == table.seat.name else ""
            lines.append(
                f"  {standing.place}{shared} seat {seat_position(standing.seat)} "
                f"{table.name_of(standing.seat):<{NAME_WIDTH}} {standing.total:+5d}{you}"
            )
        return lines


# -- session set-up -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="sapsam-play", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--server", default=DEFAULT_SERVER, help="host:port of the server")
    parser.add_argument("--tls", action="store_true", help="connect with TLS")
    parser.add_argument("--ca-cert", type=Path, help="PEM root certificates for TLS")
    parser.add_argument("--name", help="display name when registering")
    parser.add_argument("--token-file", help="where the token is saved (default: config dir)")
    parser.add_argument("--new-player", action="store_true", help="register even if saved")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--table", help="join this table (tables/<uuid> or the uuid)")
    where.add_argument("--create", action="store_true", help="create a table and join it")
    parser.add_argument("--seat", type=int, help="take this seat number")
    parser.add_argument("--seats", type=int, default=4, help="with --create: seats, 2 to 4")
    parser.add_argument("--deals", type=int, help="with --create: deals in the series")
    parser.add_argument("--preset", help="with --create: rule set preset (default pagat)")
    parser.add_argument(
        "--receipts",
        type=Path,
        help="keep the server's signed receipts in this folder (default: 'receipts' beside the"
        " token file)",
    )
    return parser


def sign_in(client: Client, arguments: argparse.Namespace, terminal: Terminal) -> SavedPlayer:
    """Reuse the saved token for this server, or register and save a new one."""
    path = token_file(arguments.token_file)
    saved = None if arguments.new_player else load_player(path, arguments.server)
    if saved is not None:
        client.token = saved.token
        try:
            client.get_player(saved.player)
            return saved
        except UnauthenticatedError:
            terminal.say("the saved token is not known to this server: registering anew")
    name = arguments.name or terminal.prompt("Your name: ") or "player"
    registered = client.register(name)
    player = SavedPlayer(registered.player, registered.display_name, registered.token)
    save_player(path, arguments.server, player)
    terminal.say(f"registered as {player.display_name}; the token is saved in")
    terminal.say(f"  {path}")
    return player


def choose_table(client: Client, arguments: argparse.Namespace, terminal: Terminal) -> str:
    """The table to sit at: given, created, or picked from the open ones."""
    if arguments.table:
        return str(arguments.table)
    if not arguments.create:
        open_tables = list(client.list_tables(table_pb2.TABLE_STATUS_OPEN))[:9]
        for number, table in enumerate(open_tables, start=1):
            taken = sum(1 for seat in table.seats if seat.player)
            terminal.say(
                f"  {number}) {table.name}  {taken}/{table.seat_count} seated, "
                f"{table.rule_set.name}, {table.rule_set.series_length} deals"
            )
        if open_tables:
            answer = terminal.prompt("Join which table (number), or Enter for a new one? ")
            if answer.isdigit() and 1 <= int(answer) <= len(open_tables):
                return open_tables[int(answer) - 1].name
    created = client.create_table(
        arguments.seats, preset=arguments.preset, series_length=arguments.deals
    )
    terminal.say(f"created {created.name} ({created.seat_count} seats): share this name")
    return created.name


def take_seat(
    client: Client,
    table: str,
    player: str,
    seat: int | None,
    keeper: CommitmentKeeper | None = None,
) -> Seat:
    """Join ``table``, or take up the seat this player already holds there (with the open
    commitments ``keeper`` kept, so a deal confirmed before a restart can still be revealed)."""
    try:
        return client.join_table(table, seat, keeper=keeper)
    except AlreadyExistsError as error:
        if error.reason != "ALREADY_SEATED":
            raise
        for held in client.get_table(table).seats:
            if held.player == player:
                return client.seat(held.name, keeper)
        raise


def run(arguments: argparse.Namespace, terminal: Terminal) -> int:
    """The whole session; the exit code."""
    rules_module("solver")  # the suggestion, values and foul warnings need the rules extra
    saved_beside = token_file(arguments.token_file)
    receipts = ReceiptFolder(arguments.receipts or default_folder(saved_beside))
    client = connect(
        arguments.server,
        tls=arguments.tls,
        root_certificates=arguments.ca_cert,
        receipts=receipts,
    )
    player = sign_in(client, arguments, terminal)
    terminal.say(f"playing as {player.display_name} on {arguments.server}")
    table_name = choose_table(client, arguments, terminal)
    keeper = CommitmentFile(saved_beside.with_name("commitments.json"))
    # The player's signing key lives beside the token and commitments (docs/fairness.md §19).
    if arguments.token_file:
        client.key_path = saved_beside.with_name(KEY_FILE_NAME)
    seat = take_seat(client, table_name, player.player, arguments.seat, keeper)
    table = Table(client, seat)
    table.refresh()
    terminal.say(f"you sit at seat {seat.position} of {seat.table}")
    terminal.say("waiting for the other players…")
    seat.play_series(
        lambda hand, current: terminal.arrange(hand, current, seat),
        on_event=lambda event: terminal.show_event(event, table),
    )
    terminal.say("the series is over; thanks for playing")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sapsam-play``."""
    arguments = build_parser().parse_args(argv)
    terminal = Terminal(input, lambda line: print(line, flush=True))
    try:
        return run(arguments, terminal)
    except RulesUnavailableError as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        return 2
    except SapsamError as error:
        print(f"sapsam-play: {error}", file=sys.stderr)
        return 1
    except (SessionEndedError, KeyboardInterrupt):
        print("\nbye")
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""`sapsam-play`'s steps with scripted answers: signing in (saved, stale or new token), picking an
open table or creating one, coming back to a seat already held, and a finished deal's results
shown before the next deal's cards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sapsam_client import connect, seat_position, solver_arranger
from sapsam_client.commitment_file import CommitmentFile
from sapsam_client.table_view import TableView
from sapsam_client.terminal import (
    Terminal,
    build_parser,
    choose_table,
    sign_in,
    take_seat,
)
from sapsam_client.terminal import main as terminal_main
from sapsam_client.tokens import SavedPlayer, load_player, save_player
from sapsam_proto.v1.table_event_pb2 import DealScored, TableEvent


def scripted(answers: list[str]) -> tuple[Terminal, list[str]]:
    said: list[str] = []
    replies: Iterator[str] = iter(answers)

    def ask(question: str) -> str:
        said.append(question)
        return next(replies)

    return Terminal(ask, said.append), said


def test_sign_in_saves_reuses_and_replaces_a_token(address: str, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    arguments = build_parser().parse_args(["--server", address, "--token-file", str(tokens)])
    terminal, said = scripted(["Ann"])
    first = sign_in(connect(address), arguments, terminal)
    assert "Your name: " in said and first.display_name == "Ann"
    assert load_player(tokens, address) == first

    terminal, said = scripted([])
    client = connect(address)
    assert sign_in(client, arguments, terminal) == first  # no question asked
    assert client.get_player(first.player).display_name == "Ann"

    # A token this server does not know (say, a fresh database) is replaced by a new player.
    save_player(tokens, address, SavedPlayer(first.player, "Ann", "stale-token"))
    terminal, said = scripted(["Ann again"])
    replaced = sign_in(connect(address), arguments, terminal)
    assert replaced.player != first.player and replaced.display_name == "Ann again"
    assert any("not known" in line for line in said)
    # Other servers' entries are kept.
    save_player(tokens, "elsewhere:1", first)
    assert load_player(tokens, address) == replaced and load_player(tokens, "elsewhere:1") == first


def test_pick_an_open_table_or_create_one(address: str, tmp_path: Path) -> None:
    host = connect(address)
    host.register("host")
    older = host.create_table(2, series_length=1).name
    newer = host.create_table(3, preset="two_four").name
    arguments = build_parser().parse_args(["--server", address])
    terminal, said = scripted(["2"])
    assert choose_table(host, arguments, terminal) == older  # listed newest first
    # The preset asked for as two_four is listed by the rule set's name (renamed in 0d08d99).
    assert any(newer in line and "0/3 seated, pagat_two_four, 8 deals" in line for line in said)

    terminal, said = scripted([""])
    created = choose_table(host, arguments, terminal)
    assert created not in (older, newer) and any("share this name" in line for line in said)

    arguments = build_parser().parse_args(["--server", address, "--create", "--seats", "2"])
    terminal, _ = scripted([])
    made = choose_table(host, arguments, terminal)
    assert host.get_table(made).seat_count == 2


def test_coming_back_finds_the_seat_already_held(address: str) -> None:
    client = connect(address)
    player = client.register("Cy")
    table = client.create_table(2).name
    seat = take_seat(client, table, player.player, 1)
    again = take_seat(client, table, player.player, None)
    assert again.name == seat.name and again.position == 1


def test_a_restarted_seat_reveals_from_its_commitment_file(address: str, tmp_path: Path) -> None:
    keeper_path = tmp_path / "commitments.json"
    clients = [connect(address) for _ in range(2)]
    players = [client.register(f"r{index}") for index, client in enumerate(clients)]
    table = clients[0].create_table(2, series_length=1).name
    seats = [
        take_seat(client, table, player.player, None, CommitmentFile(keeper_path))
        for client, player in zip(clients, players, strict=True)
    ]
    clients[0].choose_dealer(table)
    clients[0].start_deal(table)
    cutter = clients[0].get_table(table).cutter_seat
    clients[seat_position(cutter)].cut_deck(cutter)
    for seat in seats:
        hand = seat.hand()
        seat.commit(hand.deal_number, solver_arranger(hand, clients[0].get_table(table)))
        seat.confirm()
    assert keeper_path.stat().st_mode & 0o077 == 0
    # Both clients "restart": fresh Seat objects know only what the file kept.
    restarted = [
        take_seat(
            connect(address, token=p.token), table, p.player, None, CommitmentFile(keeper_path)
        )
        for p in players
    ]
    for old, new in zip(seats, restarted, strict=True):
        assert new.name == old.name and new.commitments == old.commitments
        new.reveal(1)
    result = clients[0].get_deal_result(f"{table}/deals/1")
    assert result.scored and not any(seat.foul for seat in result.seats)
    assert CommitmentFile(keeper_path).load(seats[0].name) == {}  # forgotten once revealed


def test_a_finished_deal_is_shown_before_the_next_deals_cards(address: str) -> None:
    """The SDK may ask for the next deal's rows before the ``DealScored`` event reaches the
    terminal (the table read after an event is ahead of the stream): the results come first."""
    clients = [connect(address) for _ in range(2)]
    for index, client in enumerate(clients):
        client.register(f"p{index}")
    table = clients[0].create_table(2, series_length=2).name
    seats = [client.join_table(table, index) for index, client in enumerate(clients)]
    clients[0].choose_dealer(table)
    for deal in (1, 2):
        current = clients[0].get_table(table)
        clients[seat_position(current.dealer_seat)].start_deal(table)
        cutter = clients[0].get_table(table).cutter_seat
        clients[seat_position(cutter)].cut_deck(cutter)
        if deal == 2:
            break
        for seat in seats:
            hand = seat.hand()
            seat.commit(hand.deal_number, solver_arranger(hand, current))
            seat.confirm()
        for seat in seats:
            seat.reveal(1)

    terminal, said = scripted(["", "y"])
    view = TableView(terminal, clients[0], seats[0])
    view.refresh()
    rows = view.arranger(seats[0].hand(), clients[0].get_table(table))
    assert len(rows.cards) == 13
    reveal = said.index("== deal 1 of 2: the reveal ==")
    assert reveal < next(i for i, line in enumerate(said) if "Deal 2: your cards" in line)
    assert any(line.startswith("standings after deal 1: ") for line in said[reveal:])
    # The DealScored event, when it comes, does not show the deal again.
    scored = clients[0].get_deal_result(f"{table}/deals/1")
    before = len(said)
    view.show_event(TableEvent(deal_scored=DealScored(result=scored), version=1))
    assert "== deal 1 of 2: the reveal ==" not in said[before:]


def test_a_table_that_refuses_the_seat_prints_no_command_to_resume(
    address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host = connect(address)
    host.register("host")
    table = host.create_table(2).name
    for name in ("Ann", "Bob"):
        player = connect(address)
        player.register(name)
        player.join_table(table)
    tokens = str(tmp_path / "tokens.json")
    argv = ["--server", address, "--table", table, "--token-file", tokens, "--name", "Carol"]
    assert terminal_main([*argv, "--plain"]) == 1
    out, err = capsys.readouterr()
    assert "TABLE_FULL" in err
    assert "to resume" not in out  # there is no seat to take up again

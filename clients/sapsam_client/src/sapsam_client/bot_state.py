"""What ``sapsam-bot`` keeps between runs: its players' tokens and its open commitments.

A bot that exits (a server out of reach for too long, Ctrl-C, its machine restarting) leaves its
seats held by players whose tokens only it knew: run again without them, it could only ask for new
seats and be told ``TABLE_FULL``, and a seat that confirmed could never reveal. So each run keeps
a state file: for each seat this process plays (by its index among ``--seats-here``) the player
and its token, and each seat's open commitments (rows and nonce, until revealed; at a table with
naturals also the declaration and its nonce, kept from before it is sent). The same command
run again loads it, takes up the same seats and reveals what they committed.

The file is ``--state FILE``, else :func:`default_state_file`: in the user's state folder
(``platformdirs.user_state_dir``: ``~/.local/state/sapsam`` on Linux), ``bots/``, one file per
server, table, ``--seat`` option, ``--name`` and slot. A running bot holds a lock on its file, so a
second bot started for the same table at the same time takes the next slot instead of the same
players, and a rerun takes the file of a bot that no longer runs. The name is part of the key so
that another bot command at the same table (``--name Bob`` after ``--name Ann`` stopped) never
takes up the first one's players: only the same command does. The file is readable by its owner
only: a token is a password, and a nonce is secret until the reveal.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import IO, Any

import platformdirs

from sapsam_client.client import table_id
from sapsam_client.commitment_file import (
    commitment_json,
    commitments_from_json,
    declaration_json,
    declarations_from_json,
)
from sapsam_client.discards import DiscardKeeper, KeptDiscard, discards_from_json, with_discard
from sapsam_client.private_file import read_json, write_private
from sapsam_client.seat_types import Commitment, CommitmentKeeper
from sapsam_client.tokens import SavedPlayer, saved_player

MAX_SLOTS = 64
"""Bots running at once for one server, table, ``--seat`` and ``--name``, each with its own file."""


class StateInUseError(Exception):
    """Another running process holds the state file."""


class StateDamagedError(Exception):
    """The state file holds something this bot cannot read (edited by hand, say)."""


def state_folder() -> Path:
    """``bots/`` in the user's state folder for sapsam."""
    return Path(platformdirs.user_state_dir("sapsam")) / "bots"


def _file_word(text: str, fallback: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-") or fallback


def state_name(server: str, table: str, seat: int | None, slot: int, name: str = "bot") -> str:
    """The state file's name for a bot of ``server`` at ``table`` (``--seat`` ``seat``,
    ``--name`` ``name``)."""
    where = "any" if seat is None else f"seat{seat}"
    who = _file_word(name, "bot")
    return f"{_file_word(server, 'server')}_{table_id(table)}_{where}_{who}-{slot}.json"


def _lock(path: Path) -> IO[str] | None:
    """An exclusive lock on ``path``'s lock file, held while the returned file stays open; None
    if another process holds it. (Windows: no lock; every bot takes the first slot.)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path.with_suffix(".lock"), "a", encoding="utf-8")  # noqa: SIM115 - kept open
    if sys.platform != "win32":
        import fcntl

        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
    return handle


class BotState:
    """A bot's state file, locked for this process: players by seat index, and open commitments
    by seat name (a :class:`~sapsam_client.seat_types.CommitmentKeeper`). Safe to share between the
    process's seat threads."""

    def __init__(self, path: Path) -> None:
        """Open (and lock) ``path``; raises :class:`StateInUseError` if another process has it."""
        self.path = path
        self._mutex = threading.Lock()
        handle = _lock(path)
        if handle is None:
            raise StateInUseError(f"another running bot uses the state file {path}")
        self._lock_handle = handle

    @classmethod
    def claim(
        cls,
        server: str,
        table: str,
        seat: int | None,
        folder: Path | None = None,
        name: str = "bot",
    ) -> BotState:
        """The first state file for this server, table, ``--seat`` and ``--name`` that no
        running bot holds (in ``folder``, default :func:`state_folder`)."""
        where = folder or state_folder()
        for slot in range(1, MAX_SLOTS + 1):
            try:
                return cls(where / state_name(server, table, seat, slot, name))
            except StateInUseError:
                continue
        raise StateInUseError(f"{MAX_SLOTS} bots already run for {table} on {server}")

    def close(self) -> None:
        """Let another process have the file."""
        self._lock_handle.close()

    def _read(self) -> dict[str, Any]:
        return read_json(self.path)

    def _section(self, data: dict[str, Any], name: str) -> dict[str, Any]:
        section = data.setdefault(name, {})
        if not isinstance(section, dict):
            section = data[name] = {}
        return section

    # -- players --------------------------------------------------------------------------------

    def player(self, index: int) -> SavedPlayer | None:
        """The player kept for seat index ``index`` of this process, if any."""
        with self._mutex:
            return saved_player(self._section(self._read(), "players").get(str(index)))

    def keep_player(self, index: int, player: SavedPlayer) -> None:
        """Keep the player of seat index ``index`` (at once: its token is shown only once)."""
        with self._mutex:
            data = self._read()
            self._section(data, "players")[str(index)] = {
                "player": player.player,
                "display_name": player.display_name,
                "token": player.token,
            }
            write_private(self.path, data)

    # -- open commitments (CommitmentKeeper) ----------------------------------------------------

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        with self._mutex:
            entries = self._section(self._read(), "commitments").get(seat, {})
        try:
            return commitments_from_json(entries)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self._damaged(seat, error) from None

    def _damaged(self, seat: str, error: Exception) -> StateDamagedError:
        return StateDamagedError(
            f"the state file {self.path} holds an unreadable commitment of {seat[:80]}"
            f" ({type(error).__name__}); move it away (or use --state / --no-state) to"
            " start without it"
        )

    def load_declarations(self, seat: str) -> dict[int, tuple[str, bytes]]:
        """The seat's kept natural declarations by deal number: (declaration, nonce)."""
        with self._mutex:
            entries = self._section(self._read(), "commitments").get(seat, {})
        try:
            return declarations_from_json(entries)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self._damaged(seat, error) from None

    def save_declaration(self, seat: str, deal: int, declaration: str, nonce: bytes) -> None:
        """Keep a natural declaration and its nonce before it is sent: a bot that dies before
        committing its rows still opens it at the reveal."""
        with self._mutex:
            data = self._read()
            seats = self._section(data, "commitments")
            seats.setdefault(seat, {})[str(deal)] = declaration_json(declaration, nonce)
            write_private(self.path, data)

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment before it is sent (replacing one for the same deal)."""
        with self._mutex:
            data = self._read()
            seats = self._section(data, "commitments")
            seats.setdefault(seat, {})[str(committed.deal_number)] = commitment_json(committed)
            write_private(self.path, data)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a commitment once revealed."""
        with self._mutex:
            data = self._read()
            seats = self._section(data, "commitments")
            entries = seats.get(seat, {})
            if entries.pop(str(deal), None) is not None:
                if not entries:
                    seats.pop(seat, None)
                write_private(self.path, data)

    # -- Pineapple's discards (DiscardKeeper) ---------------------------------------------------

    def load_discards(self, seat: str) -> dict[int, list[KeptDiscard]]:
        """The seat's kept discards by deal number, in street order."""
        with self._mutex:
            entries = self._section(self._read(), "discards").get(seat, {})
        try:
            return discards_from_json(entries)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self._damaged(seat, error) from None

    def save_discard(self, seat: str, kept: KeptDiscard) -> None:
        """Keep a discard (its cards and nonce) before its commitment is sent."""
        with self._mutex:
            data = self._read()
            with_discard(self._section(data, "discards").setdefault(seat, {}), kept)
            write_private(self.path, data)

    def forget_discards(self, seat: str, deal: int) -> None:
        """Drop a deal's discards once opened."""
        with self._mutex:
            data = self._read()
            seats = self._section(data, "discards")
            if seats.get(seat, {}).pop(str(deal), None) is not None:
                if not seats[seat]:
                    seats.pop(seat)
                write_private(self.path, data)


class SharedKeeper:
    """A commitment keeper shared by this process's seat threads: one call at a time, so two
    seats never rewrite the same file over each other."""

    def __init__(self, keeper: CommitmentKeeper) -> None:
        self.keeper = keeper
        self.lock = threading.Lock()

    def load(self, seat: str) -> dict[int, Commitment]:
        """The seat's open commitments by deal number."""
        with self.lock:
            return self.keeper.load(seat)

    def save(self, seat: str, committed: Commitment) -> None:
        """Keep a commitment before it is sent."""
        with self.lock:
            self.keeper.save(seat, committed)

    def forget(self, seat: str, deal: int) -> None:
        """Drop a commitment once revealed."""
        with self.lock:
            self.keeper.forget(seat, deal)

    def load_declarations(self, seat: str) -> dict[int, tuple[str, bytes]]:
        """The seat's kept natural declarations by deal number."""
        with self.lock:
            return self.keeper.load_declarations(seat)

    def save_declaration(self, seat: str, deal: int, declaration: str, nonce: bytes) -> None:
        """Keep a natural declaration before it is sent."""
        with self.lock:
            self.keeper.save_declaration(seat, deal, declaration, nonce)

    def load_discards(self, seat: str) -> dict[int, list[KeptDiscard]]:
        """The seat's kept discards (Pineapple) by deal number."""
        with self.lock:
            return self.keeper.load_discards(seat) if isinstance(self.keeper, DiscardKeeper) else {}

    def save_discard(self, seat: str, kept: KeptDiscard) -> None:
        """Keep a discard before its commitment is sent."""
        with self.lock:
            if isinstance(self.keeper, DiscardKeeper):
                self.keeper.save_discard(seat, kept)

    def forget_discards(self, seat: str, deal: int) -> None:
        """Drop a deal's discards once opened."""
        with self.lock:
            if isinstance(self.keeper, DiscardKeeper):
                self.keeper.forget_discards(seat, deal)

"""What every ``sapsam tournament`` action shares: the database options, the services over it,
ids and player names from the command line, and one way to fail.

The database is ``--database-url``, else ``DATABASE_URL``, else the embedded one in
``--data-dir``. A command that cannot run (a bad id, an unknown or ambiguous player name, a
refusal by the tournament) prints one line and exits 2, having written nothing.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final

FAILED: Final = 1
CANNOT_RUN: Final = 2


class CommandError(Exception):
    """The command cannot run; the message is shown as one line."""


def database_options(parser: argparse.ArgumentParser) -> None:
    """``--database-url`` and ``--data-dir``."""
    parser.add_argument(
        "--database-url", help="PostgreSQL to use (default: DATABASE_URL, else the embedded one)"
    )
    parser.add_argument(
        "--data-dir",
        help="the embedded server's data folder (default: SAPSAM_DATA_DIR, else the user's data"
        " folder)",
    )


def guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``handler`` with a refusal or an unusable argument said in one line (exit 2)."""

    def run(arguments: argparse.Namespace) -> int:
        from sapsam.domain.errors import DomainError

        try:
            return handler(arguments)
        except CommandError as error:
            print(f"sapsam tournament: {error}", file=sys.stderr)
            return CANNOT_RUN
        except DomainError as error:
            print(f"sapsam tournament: {error.reason.value}: {error.message}", file=sys.stderr)
            return CANNOT_RUN

    return run


def parse_id(text: str, prefix: str) -> uuid.UUID:
    """The id of ``text``: a UUID, or ``prefix`` followed by one."""
    try:
        return uuid.UUID(text.removeprefix(prefix))
    except ValueError:
        raise CommandError(f"{text!r} is not an id") from None


def looks_like_id(text: str, prefix: str) -> bool:
    """Whether ``text`` is a UUID or ``prefix`` + a UUID (else it is taken for a name)."""
    try:
        uuid.UUID(text.removeprefix(prefix))
    except ValueError:
        return False
    return True


@contextmanager
def prepared_database(arguments: argparse.Namespace) -> Iterator[tuple[str, Any]]:
    """The chosen database (migrated first, the read models prepared): its URL and an unopened
    store on it."""
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import open_database
    from sapsam.store.event_store import EventStore
    from sapsam.store.projections import registered_projectors
    from sapsam.store.table_projections import projectors as table_projectors

    try:
        with open_database(
            arguments.database_url, getattr(arguments, "data_dir", None), migrate=True
        ) as handle:
            store = EventStore.unopened(
                handle.url, projectors=[*table_projectors(), *registered_projectors()]
            )
            store.prepare()
            yield handle.url, store
    except DatabaseOpenError as error:
        raise CommandError(str(error)) from None


@contextmanager
def connection(arguments: argparse.Namespace) -> Iterator[Any]:
    """A synchronous connection to the prepared database, for the offline readers."""
    import psycopg

    with prepared_database(arguments) as (url, _), psycopg.connect(url, autocommit=True) as opened:
        yield opened


@asynccontextmanager
async def services(arguments: argparse.Namespace) -> AsyncIterator[Any]:
    """The tournament service, with the operator's controls, over the chosen database; its pool
    on the command's event loop."""
    from sapsam.app.tables import TableService
    from sapsam.app.tournament_control import TournamentControl

    with prepared_database(arguments) as (_, store):
        await store.open()
        try:
            yield TournamentControl(store, TableService(store))
        finally:
            await store.close()


def resolve_players(opened: Any, named: Sequence[str]) -> list[str]:
    """The player id of each argument: an id (``players/{id}`` or a bare UUID) of a registered
    player, or the display name of exactly one. All are resolved before any is used, so one
    unknown or ambiguous name refuses the whole command, having written nothing."""
    from sapsam.store.player_names import display_names, players_named

    resolved: list[str] = []
    problems: list[str] = []
    for text in named:
        if looks_like_id(text, "players/"):
            player_id = str(parse_id(text, "players/"))
            if not display_names(opened, [player_id]):
                problems.append(f"no player players/{player_id} (register players first)")
                continue
            resolved.append(player_id)
            continue
        found = players_named(opened, text)
        if not found:
            problems.append(f"no player is named {text!r}")
        elif len(found) > 1:
            ids = ", ".join(f"players/{item}" for item in found)
            problems.append(f"{len(found)} players are named {text!r} ({ids}): give the id")
        else:
            resolved.append(found[0])
    if problems:
        raise CommandError("; ".join(problems) + "; nothing was done")
    return resolved

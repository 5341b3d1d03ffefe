"""The SDK's connection: one method per RPC, retries that reuse the request_id, typed errors.

::

    client = connect("127.0.0.1:50051")
    client.register("Ann")                      # the token is kept on the client
    table = client.create_table(seat_count=2)
    seat = client.join_table(table.name)        # a Seat: see sapsam_client.seat

Every mutating call gets a fresh ``request_id`` (a UUID) once; a retry after ``UNAVAILABLE``
(a server stopping, a database out of reach), ``CANCELLED`` (grpc's answer to a call that
reached a server as it stopped), ``DEADLINE_EXCEEDED``, a lost race
(``ABORTED``/``CONCURRENCY_CONFLICT``) or a limit that says when to come back
(``RESOURCE_EXHAUSTED`` with RetryInfo, after at least that delay) sends the very same request,
so the server answers it at most once (docs/api.md, "Retries and concurrency"). Between attempts
the client backs off, capped and exponentially, with jitter (``sapsam_client.backoff``). A refused
call raises a :class:`~sapsam_client.errors.SapsamError` subclass with the reason code.
``connect``'s channel keeps an open stream alive through NATs and proxies
(``sapsam_client.keepalive``).

The plumbing (the channel, ``call`` and its retries, resource names) is
``sapsam_client.connection``; the PlayerService calls are ``sapsam_client.player_calls``.
"""

from __future__ import annotations

import secrets
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import grpc

from sapsam_client.audit_calls import AuditCalls
from sapsam_client.backoff import DEFAULT_RECONNECT_SECONDS, RECONNECT_OPTIONS
from sapsam_client.connection import (
    Connection,
    deal_number,
    request_id,
    seat_position,
    table_id,
    table_name,
)
from sapsam_client.errors import (
    ResourceExhaustedError,
    SapsamError,
    UnavailableError,
    from_rpc_error,
)
from sapsam_client.keepalive import KEEPALIVE_OPTIONS
from sapsam_client.open_face import OpenFaceCalls
from sapsam_client.player_calls import PlayerCalls, Registration
from sapsam_client.tournament_calls import TournamentCalls
from sapsam_proto.v1 import (
    rule_set_pb2,
    table_event_pb2,
    table_pb2,
    table_service_pb2,
)

if TYPE_CHECKING:
    from sapsam_client.receipts import ReceiptKeeper
    from sapsam_client.seat import Seat
    from sapsam_client.seat_types import CommitmentKeeper

DEFAULT_SERVER: Final = "127.0.0.1:50051"


@dataclass(frozen=True)
class Hand:
    """A seat's 13 cards in one deal, in canonical order."""

    deal: str
    cards: tuple[str, ...]

    @property
    def deal_number(self) -> int:
        """The deal's number within the series."""
        return deal_number(self.deal)


class NoDeadlineWarning(UserWarning):
    """A table was created without an arranging or reveal deadline (it may wait forever)."""


class Client(PlayerCalls, TournamentCalls, AuditCalls, OpenFaceCalls, Connection):
    """A connection to a sapsam server, acting as one player (or the operator, or nobody): one
    method per RPC (the player calls from :class:`~sapsam_client.player_calls.PlayerCalls`, a
    player's tournament calls from :class:`~sapsam_client.tournament_calls.TournamentCalls`, the
    hand history and disputes from :class:`~sapsam_client.audit_calls.AuditCalls`, open face's
    from :class:`~sapsam_client.open_face.OpenFaceCalls`, the plumbing from
    :class:`~sapsam_client.connection.Connection`).

    ``attempts`` bounds how often one request is sent; ``timeout`` is each attempt's deadline in
    seconds; ``backoff_seconds`` and ``max_backoff_seconds`` shape the pauses between attempts
    (``sapsam_client.backoff.retry_pause``). The client is safe to share between threads.
    """

    def __enter__(self) -> Client:
        return self

    # -- tables ---------------------------------------------------------------------------------

    def create_table(
        self,
        seat_count: int = 2,
        *,
        preset: str | None = None,
        rule_set: rule_set_pb2.RuleSet | None = None,
        series_length: int | None = None,
    ) -> table_pb2.Table:
        """Create a table (the base game unless a preset or rule set is given); not seated.

        A rule set choosing no arranging or reveal deadline is allowed, but such a table can wait
        for an absent player forever: each warning of the server's (``CreateTableResponse
        .warnings``) is raised as a :class:`NoDeadlineWarning`, which Python prints by default."""
        request = table_service_pb2.CreateTableRequest(
            request_id=request_id(), seat_count=seat_count
        )
        if preset is not None:
            request.rule_set_preset = preset
        if rule_set is not None:
            request.rule_set.CopyFrom(rule_set)
        if series_length is not None:
            request.series_length = series_length
        response = self.call(
            self.tables.CreateTable, request, table_service_pb2.CreateTableResponse
        )
        for warning in response.warnings:
            warnings.warn(f"{response.table.name}: {warning}", NoDeadlineWarning, stacklevel=2)
        return response.table

    def get_table(self, table: str) -> table_pb2.Table:
        """A table's public state."""
        return self.call(
            self.tables.GetTable,
            table_service_pb2.GetTableRequest(name=table_name(table)),
            table_service_pb2.GetTableResponse,
        ).table

    def list_tables(
        self, status: table_pb2.TableStatus.ValueType = table_pb2.TABLE_STATUS_UNSPECIFIED
    ) -> Iterator[table_pb2.Table]:
        """Every table (newest first), optionally only those in ``status``, page after page."""
        token = ""
        while True:
            page = self.call(
                self.tables.ListTables,
                table_service_pb2.ListTablesRequest(page_token=token, status=status),
                table_service_pb2.ListTablesResponse,
            )
            yield from page.tables
            token = page.next_page_token
            if not token:
                return

    def join_table(
        self,
        table: str,
        seat: int | None = None,
        *,
        expected_version: int | None = None,
        keeper: CommitmentKeeper | None = None,
    ) -> Seat:
        """Take a seat (the lowest free one unless ``seat`` is given); returns the :class:`Seat`
        (which keeps its open commitments in ``keeper``, if given)."""
        from sapsam_client.seat import Seat

        request = table_service_pb2.JoinTableRequest(
            request_id=request_id(), table=table_name(table)
        )
        if seat is not None:
            request.seat = seat
        if expected_version is not None:
            request.expected_version = expected_version
        return Seat(
            self,
            self.call(self.tables.JoinTable, request, table_service_pb2.JoinTableResponse).seat,
            keeper,
        )

    def seat(self, name: str, keeper: CommitmentKeeper | None = None) -> Seat:
        """A :class:`Seat` for a seat this client's player already holds (e.g. after a restart);
        with a ``keeper``, its open commitments are loaded from there."""
        from sapsam_client.seat import Seat

        return Seat(self, name, keeper)

    def choose_dealer(self, table: str, *, expected_version: int | None = None) -> str:
        """Draw the first dealer by lot; returns the dealer's seat name."""
        request = table_service_pb2.ChooseDealerRequest(
            request_id=request_id(), table=table_name(table)
        )
        if expected_version is not None:
            request.expected_version = expected_version
        return self.call(
            self.tables.ChooseDealer, request, table_service_pb2.ChooseDealerResponse
        ).dealer_seat

    def start_deal(self, table: str, *, expected_version: int | None = None) -> str:
        """Start the next deal (the server commits to a secret seed); returns the deal name."""
        request = table_service_pb2.StartDealRequest(
            request_id=request_id(), table=table_name(table)
        )
        if expected_version is not None:
            request.expected_version = expected_version
        return self.call(self.tables.StartDeal, request, table_service_pb2.StartDealResponse).deal

    # -- a seat's moves -------------------------------------------------------------------------

    def contribute_entropy(self, seat: str, entropy: bytes | None = None) -> int:
        """Mix random bytes (32 fresh ones by default) into the shuffle; returns the version."""
        request = table_service_pb2.ContributeEntropyRequest(
            request_id=request_id(), seat=seat, entropy=entropy or secrets.token_bytes(32)
        )
        return self.call(
            self.tables.ContributeEntropy, request, table_service_pb2.ContributeEntropyResponse
        ).version

    def cut_deck(self, seat: str, position: int | None = None) -> int:
        """Cut (at a random position 1..51 by default) and deal; returns the version."""
        cut = position if position is not None else 1 + secrets.randbelow(51)
        request = table_service_pb2.CutDeckRequest(request_id=request_id(), seat=seat, position=cut)
        return self.call(self.tables.CutDeck, request, table_service_pb2.CutDeckResponse).version

    def get_my_hand(self, seat: str) -> Hand:
        """The seat's own 13 cards in the current deal."""
        response = self.call(
            self.tables.GetMyHand,
            table_service_pb2.GetMyHandRequest(seat=seat),
            table_service_pb2.GetMyHandResponse,
        )
        return Hand(response.deal, tuple(response.cards))

    def commit_arrangement(
        self,
        seat: str,
        commitment: bytes,
        deal: int | None = None,
        *,
        scheme: int = 1,
        signature: tuple[bytes, bytes] | None = None,
        confirm: bool = False,
    ) -> int:
        """Send a 32-byte commitment of ``scheme`` (see :mod:`sapsam_client.commitment`); returns
        the version. With ``confirm`` the server also confirms it, in the same call and append
        (no :meth:`confirm_arrangement` needed).

        With ``deal`` (the deal number the rows were chosen for) the server refuses the call with
        reason ``WRONG_DEAL`` once another deal is current, so a late commitment never lands in
        the next deal; the same holds for confirm and reveal.
        """
        request = table_service_pb2.CommitArrangementRequest(
            request_id=request_id(),
            seat=seat,
            commitment=commitment,
            deal_number=deal,
            commitment_scheme=scheme,
            confirm=confirm,
        )
        if signature is not None:
            request.signature.public_key, request.signature.signature = signature
        return self.call(
            self.tables.CommitArrangement, request, table_service_pb2.CommitArrangementResponse
        ).version

    def declare_natural(
        self,
        seat: str,
        commitment: bytes,
        deal: int | None = None,
        *,
        signature: tuple[bytes, bytes] | None = None,
    ) -> int:
        """Send the 32-byte commitment to the seat's natural declaration
        (:func:`sapsam_client.commitment.declaration_commitment`), at a table with naturals,
        before :meth:`commit_arrangement`; returns the version."""
        request = table_service_pb2.DeclareNaturalRequest(
            request_id=request_id(), seat=seat, commitment=commitment, deal_number=deal
        )
        if signature is not None:
            request.signature.public_key, request.signature.signature = signature
        return self.call(
            self.tables.DeclareNatural, request, table_service_pb2.DeclareNaturalResponse
        ).version

    def confirm_arrangement(self, seat: str, deal: int | None = None) -> int:
        """Lock the seat's last commitment (in deal number ``deal``, if given); returns the
        version."""
        request = table_service_pb2.ConfirmArrangementRequest(
            request_id=request_id(), seat=seat, deal_number=deal
        )
        return self.call(
            self.tables.ConfirmArrangement, request, table_service_pb2.ConfirmArrangementResponse
        ).version

    def announce_surrender(
        self,
        seat: str,
        surrender: bool,
        deal: int | None = None,
        *,
        signature: tuple[bytes, bytes] | None = None,
    ) -> int:
        """Announce play (``surrender`` false) or surrender for the seat, on its turn, at a table
        whose rule set has surrender (docs/rules.md §2.8); returns the version. Refused with
        reason ``NOT_YOUR_TURN`` before or after the seat's turn (``Table.announcing_seat``),
        ``SURRENDER_OFF`` at a table without surrender. ``signature``, as for
        :meth:`commit_arrangement`: (public key, signature) of the ``announce`` message
        (``player_key.announce_message``)."""
        choice = (
            table_pb2.SURRENDER_CHOICE_SURRENDER if surrender else table_pb2.SURRENDER_CHOICE_PLAY
        )
        request = table_service_pb2.AnnounceSurrenderRequest(
            request_id=request_id(), seat=seat, choice=choice, deal_number=deal
        )
        if signature is not None:
            request.signature.public_key, request.signature.signature = signature
        return self.call(
            self.tables.AnnounceSurrender, request, table_service_pb2.AnnounceSurrenderResponse
        ).version

    def reveal_arrangement(
        self,
        seat: str,
        front: list[str],
        middle: list[str],
        back: list[str],
        nonce: bytes,
        deal: int | None = None,
        *,
        signature: tuple[bytes, bytes] | None = None,
        natural: str = "",
        natural_nonce: bytes = b"",
    ) -> int:
        """Reveal the committed rows and nonce (of deal number ``deal``, if given); returns the
        version. ``signature``, as for :meth:`commit_arrangement`: (public key, signature).
        At a table with naturals, ``natural`` and ``natural_nonce`` open the declaration."""
        request = table_service_pb2.RevealArrangementRequest(
            request_id=request_id(),
            seat=seat,
            arrangement=table_pb2.Arrangement(front=front, middle=middle, back=back),
            nonce=nonce,
            deal_number=deal,
            natural=natural,
            natural_nonce=natural_nonce,
        )
        if signature is not None:
            request.signature.public_key, request.signature.signature = signature
        return self.call(
            self.tables.RevealArrangement, request, table_service_pb2.RevealArrangementResponse
        ).version

    def get_deal_result(self, deal: str) -> table_pb2.DealResult:
        """A deal's public record: hands, nonces and the seed once the seed is revealed."""
        return self.call(
            self.tables.GetDealResult,
            table_service_pb2.GetDealResultRequest(name=deal),
            table_service_pb2.GetDealResultResponse,
        ).result

    # -- watching -------------------------------------------------------------------------------

    def watch(self, table: str, after_version: int = 0) -> Iterator[table_event_pb2.TableEvent]:
        """The table's events after ``after_version``, live, until the series is complete.

        A ``cards_dealt`` event on a seat holder's stream carries the seat's own cards
        (``my_cards``, as :meth:`get_my_hand` returns them); empty for anyone else.

        A stream that breaks (``UNAVAILABLE``: its server stopping, the database out of reach),
        ends before the series is complete, or is refused for now (``TOO_MANY_STREAMS``, with
        RetryInfo) is resumed from the last version received, on whichever server process
        answers, up to ``attempts`` times in a row without an event; a server out of reach, for
        ``reconnect_seconds`` since the last event (``sapsam_client.backoff``).
        """
        last = after_version
        failures = 0
        failing_since = 0.0
        told = False  # on_reachability heard that the server is out of reach
        while True:
            # In batches (fewer messages, cheaper on both sides: docs/api.md), handed on one by
            # one as before.
            request = table_service_pb2.WatchTableRequest(
                table=table_name(table), after_version=last, batch_events=True
            )
            stream = self.tables.WatchTable(request, metadata=self.metadata())
            try:
                for response in stream:
                    failures = 0
                    if told and self.on_reachability is not None:
                        self.on_reachability(None)
                    told = False
                    for event in _events_of(response):
                        last = event.version
                        yield event
                        if event.WhichOneof("payload") == "series_completed":
                            return
                error: SapsamError = UnavailableError(
                    "UNAVAILABLE", "UNAVAILABLE", "the table's stream ended before the series"
                )
            except grpc.RpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                if not isinstance(error, UnavailableError) and not (
                    isinstance(error, ResourceExhaustedError) and error.retryable
                ):
                    raise error from None
            finally:
                stream.cancel()
            if failures == 0:
                failing_since = time.monotonic()
            if not self.keep_trying(error, failures, failing_since):
                raise error
            if not told:
                told = self.tell_unreachable(error)
            time.sleep(self._pause(error, failures))
            failures += 1


def _events_of(
    response: table_service_pb2.WatchTableResponse,
) -> Sequence[table_event_pb2.TableEvent]:
    """The events of one message: its batch, or its one event (a server from before
    ``batch_events`` ignores the field and sends one event a message)."""
    if response.events:
        return response.events
    return [response.event] if response.HasField("event") else []


def connect(
    target: str = DEFAULT_SERVER,
    *,
    token: str | None = None,
    tls: bool = False,
    root_certificates: bytes | Path | None = None,
    server_name: str | None = None,
    attempts: int = 5,
    timeout: float = 30.0,
    receipts: ReceiptKeeper | None = None,
    reconnect_seconds: float = DEFAULT_RECONNECT_SECONDS,
) -> Client:
    """A :class:`Client` on ``host:port``; TLS with the system's roots or ``root_certificates``.

    ``server_name`` overrides the name checked against the server's certificate. The channel
    carries the SDK's keepalive (``sapsam_client.keepalive.KEEPALIVE_OPTIONS``) and reconnects
    within ``sapsam_client.backoff.MAX_BACKOFF_SECONDS`` of a server's return; a server out of
    reach is tried again for ``reconnect_seconds`` before a call gives up. ``receipts``
    keeps every signed receipt a response carries (``sapsam_client.receipts.ReceiptFolder``).
    """
    if tls or root_certificates is not None:
        roots = (
            root_certificates.read_bytes()
            if isinstance(root_certificates, Path)
            else root_certificates
        )
        options: tuple[tuple[str, Any], ...] = KEEPALIVE_OPTIONS + RECONNECT_OPTIONS
        if server_name:
            options += (("grpc.ssl_target_name_override", server_name),)
        channel = grpc.secure_channel(
            target, grpc.ssl_channel_credentials(root_certificates=roots), options=options
        )
    else:
        channel = grpc.insecure_channel(target, options=KEEPALIVE_OPTIONS + RECONNECT_OPTIONS)
    client = Client(
        channel,
        token,
        attempts=attempts,
        timeout=timeout,
        receipts=receipts,
        reconnect_seconds=reconnect_seconds,
    )
    client.server = target
    return client


__all__ = [
    "DEFAULT_SERVER",
    "Client",
    "Hand",
    "Registration",
    "SapsamError",
    "connect",
    "deal_number",
    "seat_position",
    "table_id",
    "table_name",
]

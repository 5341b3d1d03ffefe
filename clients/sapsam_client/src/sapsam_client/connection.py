"""The SDK's plumbing: a connection to a server, and its calls sent and retried unchanged.

:class:`Connection` holds the channel, the token and the retry policy; ``call`` sends one request
through a stub method, retrying what is safe to retry with the very same request (its
``request_id`` built once), backing off with jitter between attempts. The resource-name helpers
(``table_name``, ``seat_position`` …) are here too. ``sapsam_client.client.Client`` builds the
calls of every RPC on it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from sapsam_client.backoff import (
    DEFAULT_BACKOFF_SECONDS,
    DEFAULT_RECONNECT_SECONDS,
    MAX_BACKOFF_SECONDS,
    MAX_RETRY_DELAY_SECONDS,
    keep_trying,
    retry_pause,
)
from sapsam_client.errors import SapsamError, UnavailableError, from_rpc_error
from sapsam_client.player_key import PlayerKey
from sapsam_proto.v1 import (
    player_service_pb2_grpc,
    table_service_pb2_grpc,
    tournament_service_pb2_grpc,
)

if TYPE_CHECKING:
    from sapsam_client.receipts import ReceiptKeeper

ResponseT = TypeVar("ResponseT")
now = time.monotonic


def table_id(name: str) -> uuid.UUID:
    """The UUID of a table, seat or deal name (``tables/{uuid}/…``)."""
    parts = name.split("/")
    if len(parts) < 2 or parts[0] != "tables":
        raise ValueError(f"not a table resource name: {name!r}")
    return uuid.UUID(parts[1])


def table_name(name: str) -> str:
    """``tables/{uuid}`` of a table, seat or deal name, or of a bare UUID."""
    if not name.startswith("tables/"):
        return f"tables/{uuid.UUID(name)}"
    return f"tables/{table_id(name)}"


def seat_position(seat: str) -> int:
    """The seat number of ``tables/{t}/seats/{n}``."""
    return int(seat.rsplit("/", 1)[1])


def deal_number(deal: str) -> int:
    """The deal number of ``tables/{t}/deals/{n}``."""
    return int(deal.rsplit("/", 1)[1])


def request_id() -> str:
    """A fresh request id (a UUID), made once per request and kept across its retries."""
    return str(uuid.uuid4())


class Connection:
    """A connection to a sapsam server, acting as one player (or the operator, or nobody); the
    plumbing every ``Client`` call goes through.

    ``attempts`` bounds how often one request is sent, except to a server out of reach
    (``UNAVAILABLE``), tried again for ``reconnect_seconds`` after the first failure however many
    attempts that takes (``sapsam_client.backoff``); ``timeout`` is each attempt's deadline in
    seconds; ``backoff_seconds`` and ``max_backoff_seconds`` shape the pauses between attempts
    (``sapsam_client.backoff.retry_pause``). The client is safe to share between threads.
    """

    def __init__(
        self,
        channel: grpc.Channel,
        token: str | None = None,
        *,
        attempts: int = 5,
        backoff_seconds: float = DEFAULT_BACKOFF_SECONDS,
        max_backoff_seconds: float = MAX_BACKOFF_SECONDS,
        timeout: float = 30.0,
        receipts: ReceiptKeeper | None = None,
        reconnect_seconds: float = DEFAULT_RECONNECT_SECONDS,
    ) -> None:
        self.channel = channel
        self.receipts = receipts
        """Keeps every receipt a response carries (``sapsam_client.receipts``); None: none."""
        self.token = token
        self.attempts = max(1, attempts)
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.timeout = timeout
        self.reconnect_seconds = reconnect_seconds
        # Told when a call or the watch first finds the server out of reach (the error), and
        # when one gets through again (None): e.g. sapsam-play says so. Called from the thread
        # that made the call.
        self.on_reachability: Callable[[SapsamError | None], None] | None = None
        self.players = player_service_pb2_grpc.PlayerServiceStub(channel)
        self.tables = table_service_pb2_grpc.TableServiceStub(channel)
        self.tournaments = tournament_service_pb2_grpc.TournamentServiceStub(channel)
        # The player's Ed25519 key (docs/fairness.md §19): loaded or created on the first move,
        # registered once per process, used to sign every commit and reveal. ``sign_moves =
        # False`` turns signing off; ``key_path`` overrides where the key is kept.
        self.sign_moves = True
        self.server = ""
        self.key_path: Path | None = None
        self.player_key: PlayerKey | None = None
        self._key_lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata: the bearer token, when there is one."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def call(
        self, method: Callable[..., Any], request: Any, response_type: type[ResponseT]
    ) -> ResponseT:
        """Send ``request`` through a stub method, retrying what is safe to retry, unchanged.

        The request (with its request_id) is built once by the caller, so every attempt is the
        same request and the server acts on it at most once, however often it is sent.
        """
        failing_since = 0.0
        told = False  # on_reachability heard that the server is out of reach
        attempt = 0
        while True:
            try:
                response = method(request, metadata=self.metadata(), timeout=self.timeout)
                if not isinstance(response, response_type):
                    raise TypeError(f"expected {response_type.__name__}, got {type(response)}")
                self._keep_receipt(response, request)
                if told and self.on_reachability is not None:
                    self.on_reachability(None)
                return response
            except grpc.RpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                # A stale etag fails the same way again: only a lost race is worth repeating.
                retry = error.retryable and error.reason != "VERSION_MISMATCH"
                if attempt == 0:
                    failing_since = now()
                if not retry or not self.keep_trying(error, attempt, failing_since):
                    raise error from None
                told = told or self.tell_unreachable(error)
                time.sleep(self._pause(error, attempt))
                attempt += 1

    def tell_unreachable(self, error: SapsamError) -> bool:
        """Tell ``on_reachability`` that a server out of reach is being tried again; whether
        ``error`` said so."""
        if not isinstance(error, UnavailableError):
            return False
        if self.on_reachability is not None:
            self.on_reachability(error)
        return True

    def keep_trying(self, error: SapsamError, attempt: int, failing_since: float) -> bool:
        """Whether a retryable ``error`` is worth attempt ``attempt + 2`` (see
        ``sapsam_client.backoff.keep_trying``)."""
        return keep_trying(
            isinstance(error, UnavailableError),
            attempt,
            self.attempts,
            failing_since,
            time.monotonic(),
            self.reconnect_seconds,
        )

    def _keep_receipt(self, response: Any, request: Any) -> None:
        """Hand the response's signed receipt, if it has one, to ``receipts``, with the
        request_id the call sent (a receipt must be of this very call)."""
        if (
            self.receipts is not None
            and "receipt" in response.DESCRIPTOR.fields_by_name
            and response.HasField("receipt")
        ):
            sent = getattr(request, "request_id", None)
            self.receipts.keep(response.receipt, sent if isinstance(sent, str) and sent else None)

    def _pause(self, error: SapsamError, attempt: int) -> float:
        """How long to wait before retry ``attempt + 1``: a jittered back-off, or at least the
        server's RetryInfo delay when it sent one. Raises ``error`` if the server asks for more
        than we would wait."""
        if error.retry_delay is not None and error.retry_delay > MAX_RETRY_DELAY_SECONDS:
            raise error from None
        return retry_pause(
            attempt,
            error.retry_delay,
            backoff=self.backoff_seconds,
            max_backoff=self.max_backoff_seconds,
        )

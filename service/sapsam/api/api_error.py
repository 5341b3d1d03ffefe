"""``ApiError``, apart from the gRPC mapping in ``sapsam.api.errors`` (which re-exports it): the
resource-name parsers raise it, and ``sapsam players revoke`` parses a player's name without
loading gRPC."""

from __future__ import annotations

from collections.abc import Mapping


class ApiError(Exception):
    """An error raised by the API layer itself (auth, resource names, etags).

    Servicers raise it; the error interceptor turns it into a status like a domain error.
    """

    def __init__(
        self,
        reason: str,
        message: str,
        field: str | None = None,
        metadata: Mapping[str, str] | None = None,
        *,
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.field = field
        self.metadata: Mapping[str, str] = dict(metadata or {})
        self.retry_delay = retry_delay
        """Seconds after which a retry may succeed; sent as ``google.rpc.RetryInfo``."""

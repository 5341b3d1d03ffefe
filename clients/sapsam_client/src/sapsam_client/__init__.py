"""The sapsam client: a typed SDK over gRPC, a terminal client (``sapsam-play``) and bots
(``sapsam-bot``) for the sapsam Chinese poker service.

::

    from sapsam_client import connect, solver_arranger

    client = connect("127.0.0.1:50051")
    client.register("Ann")
    seat = client.join_table("tables/…")
    outcome = seat.play_series(solver_arranger)

The package depends only on grpcio, protobuf and googleapis-common-protos, and carries its own
copy of the generated API code (``sapsam_proto.v1``). Hand values, foul checks and the
solver come from the optional ``rules`` extra (``sapsam_client.rules``).
"""

from sapsam_client.client import (
    DEFAULT_SERVER,
    Client,
    Hand,
    NoDeadlineWarning,
    Registration,
    connect,
    deal_number,
    seat_position,
    table_id,
    table_name,
)
from sapsam_client.commitment import Rows, arrangement_commitment, fresh_nonce
from sapsam_client.errors import (
    AbortedError,
    AlreadyExistsError,
    ErrorReason,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    SapsamError,
    UnauthenticatedError,
    UnavailableError,
)
from sapsam_client.seat import Seat
from sapsam_client.seat_types import (
    Arranger,
    Commitment,
    DealEndedError,
    SeatReplacedError,
    SeriesOutcome,
)


def solver_arranger(hand: Hand, table: object) -> Rows:
    """Play the solver's rows (needs the ``rules`` extra; imported on first use)."""
    from sapsam_client.rules import solver_rows

    del table
    return solver_rows(hand.cards)


__version__ = "0.1.0"
"""The version of the ``sapsam-client`` distribution (its pyproject.toml reads it from here)."""

__all__ = [
    "DEFAULT_SERVER",
    "AbortedError",
    "AlreadyExistsError",
    "Arranger",
    "Client",
    "Commitment",
    "DealEndedError",
    "ErrorReason",
    "FailedPreconditionError",
    "Hand",
    "InternalError",
    "InvalidArgumentError",
    "NoDeadlineWarning",
    "NotFoundError",
    "PermissionDeniedError",
    "Registration",
    "ResourceExhaustedError",
    "Rows",
    "SapsamError",
    "Seat",
    "SeatReplacedError",
    "SeriesOutcome",
    "UnauthenticatedError",
    "UnavailableError",
    "arrangement_commitment",
    "connect",
    "deal_number",
    "fresh_nonce",
    "seat_position",
    "solver_arranger",
    "table_id",
    "table_name",
]

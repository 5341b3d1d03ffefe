"""Who may call each RPC: one table from method to the credential it needs.

The auth interceptor (``sapsam.api.auth``) consults this table right after it has identified the
caller and before the servicer reads the request, so a caller who may not make a call is told so
whatever the request holds: ``StartTournament{}`` from a player is OPERATOR_ONLY, never
MISSING_FIELD. That order keeps the refusals from revealing which checks a call makes.

What a servicer still decides is the caller's right to a particular resource named in the request
(a seat held by someone else is NOT_YOUR_SEAT, a deal of another table DEAL_NOT_FINISHED): that
needs the request. tests/api/test_authorisation_order.py walks every RPC of every service
descriptor, so a new RPC missing here fails a test.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final


class Access(enum.Enum):
    """The credential a method needs."""

    PUBLIC = "public"
    """Anyone, with or without a token."""
    CALLER = "caller"
    """Any authenticated caller: a player or the operator."""
    PLAYER = "player"
    """A player; the operator holds no seat (PLAYERS_ONLY)."""
    OPERATOR = "operator"
    """The operator only (OPERATOR_ONLY)."""


def _methods(service: str, access: Access, *names: str) -> dict[str, Access]:
    return {f"/sapsam.v1.{service}/{name}": access for name in names}


METHOD_ACCESS: Final[Mapping[str, Access]] = MappingProxyType(
    {
        **_methods(
            "TableService",
            Access.CALLER,
            "CreateTable",
            "GetTable",
            "ListTables",
            # Seated players or the operator: the servicer checks the seat against the table.
            "ChooseDealer",
            "StartDeal",
            "GetDealResult",
            "WatchTable",
        ),
        **_methods(
            "TableService",
            Access.PLAYER,
            "JoinTable",
            "ContributeEntropy",
            "CutDeck",
            "GetMyHand",
            "GetSuggestion",
            "CommitArrangement",
            "DeclareNatural",
            "ConfirmArrangement",
            "AnnounceSurrender",
            "RevealArrangement",
            "PlaceCards",
            "CommitFantasyland",
            "RevealFantasyland",
            "RevealDiscards",
            # A player's own hand history: the operator has none.
            "ListMyDeals",
        ),
        # The presets are public facts, the same for everyone.
        **_methods("TableService", Access.PUBLIC, "ListRuleSets"),
        **_methods("PlayerService", Access.PUBLIC, "RegisterPlayer"),
        **_methods("PlayerService", Access.CALLER, "GetPlayer"),
        **_methods("PlayerService", Access.PLAYER, "RotateToken", "RegisterPlayerKey"),
        **_methods("PlayerService", Access.OPERATOR, "RevokePlayerTokens"),
        **_methods("AuditService", Access.CALLER, "ExportDeal", "VerifyDeal", "ReplayDeal"),
        # Monitors and witnesses need no account: nothing here is secret, and the one write (a
        # cosignature) is taken only from a witness key the operator lists.
        **_methods(
            "TransparencyService",
            Access.PUBLIC,
            "GetServerKey",
            "GetCheckpoint",
            "GetInclusionProof",
            "GetConsistencyProof",
            "GetLeaves",
            "AddCheckpointCosignature",
        ),
        **_methods(
            "OperatorService",
            Access.OPERATOR,
            "GetAwaitedTables",
            "GetStuckTables",
            "ForceSeatTimeout",
            "VoidDeal",
            "ReplaceSeat",
        ),
        **_methods(
            "TournamentService",
            Access.OPERATOR,
            "CreateTournament",
            "StartTournament",
            "PauseTournament",
            "ResumeTournament",
            "CancelTournament",
            "ReplaceTournamentSeat",
        ),
        **_methods(
            "TournamentService",
            Access.CALLER,
            # A player registers, unregisters and forfeits itself; only the operator may name
            # another (the servicer checks).
            "RegisterTournamentPlayer",
            "UnregisterTournamentPlayer",
            "ForfeitTournamentPlayer",
            "GetTournament",
            "ListTournaments",
            "GetStandings",
            "WatchTournament",
            "GetLeaderboard",
        ),
    }
)
"""Every sapsam RPC (full method name, ``/package.Service/Method``) and the credential it needs."""

PUBLIC_SERVICE_PREFIXES: Final = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)
"""Services anyone may call: health checking and server reflection."""


def required_access(method: str) -> Access:
    """The credential ``method`` needs; a method not in the table needs an authenticated caller."""
    found = METHOD_ACCESS.get(method)
    if found is not None:
        return found
    return Access.PUBLIC if method.startswith(PUBLIC_SERVICE_PREFIXES) else Access.CALLER

"""The generated gRPC modules, wherever this checkout keeps them (``sapsam_proto.v1`` once the
one shared copy exists, the SDK's own copy before), so the benchmarks run on either."""

from __future__ import annotations

try:
    from sapsam_proto.v1 import (  # type: ignore[import-not-found, unused-ignore]
        player_service_pb2,
        player_service_pb2_grpc,
        table_pb2,
        table_service_pb2,
        table_service_pb2_grpc,
    )
except ImportError:
    from sapsam_client.generated.v1 import (  # type: ignore[no-redef, unused-ignore]
        player_service_pb2,
        player_service_pb2_grpc,
        table_pb2,
        table_service_pb2,
        table_service_pb2_grpc,
    )

__all__ = [
    "player_service_pb2",
    "player_service_pb2_grpc",
    "table_pb2",
    "table_service_pb2",
    "table_service_pb2_grpc",
]

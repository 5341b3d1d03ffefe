"""The full server lists every service it serves in reflection and reports each one healthy."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from sapsam.api.server import RunningServer

SERVED = (
    "sapsam.v1.TableService",
    "sapsam.v1.PlayerService",
    "sapsam.v1.AuditService",
    "sapsam.v1.TournamentService",
    "sapsam.v1.TransparencyService",
)


def test_every_service_is_listed_and_healthy(server: RunningServer) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (listed,) = list(stub.ServerReflectionInfo(iter([request])))
        names = {service.name for service in listed.list_services_response.service}
        assert set(SERVED) <= names
        health = health_pb2_grpc.HealthStub(channel)
        for service in SERVED:
            response = health.Check(health_pb2.HealthCheckRequest(service=service))
            assert response.status == health_pb2.HealthCheckResponse.SERVING

"""The TransparencyService servicer: the server's key, signed checkpoints and Merkle proofs.

Each RPC converts the request, asks ``sapsam.app.transparency`` (which checks every number
against the latest checkpoint before anything is read) and converts the answer. A refusal
becomes an ``ApiError`` with its reason and field; the error interceptor and its reason table
(``sapsam.api.errors``) make the status. Nothing here writes but AddCheckpointCosignature (a
listed witness's verified cosignature; ``sapsam.app.transparency.add_cosignature``).
"""

from __future__ import annotations

from typing import Any

import grpc

from sapsam.api.errors import ApiError
from sapsam.app import transparency
from sapsam.app.transparency import TransparencyQuestionError, TransparencyReads
from sapsam.keys import ServerKeys
from sapsam_proto.v1 import transparency_service_pb2 as messages
from sapsam_proto.v1 import transparency_service_pb2_grpc


def _api_error(refusal: TransparencyQuestionError) -> ApiError:
    return ApiError(refusal.reason, refusal.message, refusal.field)


class TransparencyServicer(transparency_service_pb2_grpc.TransparencyServiceServicer):
    """GetServerKey, GetCheckpoint, GetInclusionProof, GetConsistencyProof, GetLeaves and
    AddCheckpointCosignature."""

    def __init__(self, reads: TransparencyReads, keys: ServerKeys) -> None:
        self._reads = reads
        self._keys = keys

    async def GetServerKey(  # noqa: N802 - the generated method name
        self, request: messages.GetServerKeyRequest, context: Any
    ) -> messages.GetServerKeyResponse:
        """The current verifier key and the retired ones."""
        return messages.GetServerKeyResponse(
            origin=self._keys.origin,
            verifier_key=self._keys.signer.verifier.vkey(),
            retired_verifier_keys=[key.vkey() for key in self._keys.retired],
        )

    async def GetCheckpoint(  # noqa: N802 - the generated method name
        self, request: messages.GetCheckpointRequest, context: Any
    ) -> messages.GetCheckpointResponse:
        """The latest signed checkpoint, or the one of a tree size."""
        try:
            found = await transparency.checkpoint(self._reads, request.tree_size)
        except TransparencyQuestionError as refusal:
            raise _api_error(refusal) from None
        return messages.GetCheckpointResponse(
            signed_note=await transparency.witnessed_note(self._reads, found),
            tree_size=found.size,
            root_hash=found.root,
        )

    async def GetInclusionProof(  # noqa: N802 - the generated method name
        self, request: messages.GetInclusionProofRequest, context: Any
    ) -> messages.GetInclusionProofResponse:
        """The audit path of one leaf in a checkpointed tree."""
        which = request.WhichOneof("leaf")
        try:
            answer = await transparency.inclusion_proof(
                self._reads,
                request.position if which == "position" else None,
                request.leaf_index if which == "leaf_index" else None,
                request.tree_size,
            )
        except TransparencyQuestionError as refusal:
            raise _api_error(refusal) from None
        return messages.GetInclusionProofResponse(
            leaf_index=answer.leaf_index,
            position=answer.position,
            tree_size=answer.tree_size,
            hashes=answer.hashes,
        )

    async def GetConsistencyProof(  # noqa: N802 - the generated method name
        self, request: messages.GetConsistencyProofRequest, context: Any
    ) -> messages.GetConsistencyProofResponse:
        """The proof that one checkpointed tree extends another."""
        try:
            old_size, new_size, hashes = await transparency.consistency_proof(
                self._reads, request.old_size, request.new_size
            )
        except TransparencyQuestionError as refusal:
            raise _api_error(refusal) from None
        return messages.GetConsistencyProofResponse(
            old_size=old_size, new_size=new_size, hashes=hashes
        )

    async def GetLeaves(  # noqa: N802 - the generated method name
        self, request: messages.GetLeavesRequest, context: Any
    ) -> messages.GetLeavesResponse:
        """A range of leaves: each event's position and chained hash."""
        try:
            found = await transparency.leaves(self._reads, request.start_index, request.end_index)
        except TransparencyQuestionError as refusal:
            raise _api_error(refusal) from None
        return messages.GetLeavesResponse(
            start_index=request.start_index,
            leaves=[messages.Leaf(position=position, hash=value) for position, value in found],
        )

    async def AddCheckpointCosignature(  # noqa: N802 - the generated method name
        self, request: messages.AddCheckpointCosignatureRequest, context: Any
    ) -> messages.AddCheckpointCosignatureResponse:
        """Keep a listed witness's cosignature of a checkpoint the server issued."""
        try:
            note, added = await transparency.add_cosignature(
                self._reads, self._keys, request.tree_size, request.witness_key, request.cosignature
            )
        except TransparencyQuestionError as refusal:
            raise _api_error(refusal) from None
        return messages.AddCheckpointCosignatureResponse(signed_note=note, added=added)


def add_transparency_service(
    servicer: TransparencyServicer | None, server: grpc.aio.Server
) -> None:
    """Register the servicer on a server (nothing when there is none, e.g. in shell tests)."""
    if servicer is not None:
        transparency_service_pb2_grpc.add_TransparencyServiceServicer_to_server(servicer, server)

"""The SDK's calls for a player's own record: the hand history and disputes (a part of
``sapsam_client.client.Client``).

``deal_history`` pages through ``TableService.ListMyDeals``; ``export_deal`` is
``AuditService.ExportDeal``; ``dispute`` fetches a deal's export and verifies it here
(``sapsam_client.dispute``: the sapsam package's offline verifier, the ``audit`` extra).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import grpc

from sapsam_client.connection import Connection, request_id
from sapsam_client.errors import from_rpc_error
from sapsam_client.player_key import kept_key, key_file
from sapsam_client.receipts import ReceiptFolder
from sapsam_proto.v1 import (
    audit_service_pb2,
    audit_service_pb2_grpc,
    table_service_pb2,
    transparency_service_pb2,
    transparency_service_pb2_grpc,
)

if TYPE_CHECKING:
    from sapsam_client.dispute import DisputeVerdict

MAX_SERVER_KEYS = 64


class AuditCalls(Connection):
    """A player's hand history and disputes."""

    def deal_history(self, page_size: int = 50) -> Iterator[table_service_pb2.PlayedDeal]:
        """This client's player's scored deals, newest table first, its latest deal first,
        ``page_size`` (1 to 100) a page (``ListMyDeals``)."""
        token = ""
        while True:
            page = self.call(
                self.tables.ListMyDeals,
                table_service_pb2.ListMyDealsRequest(page_size=page_size, page_token=token),
                table_service_pb2.ListMyDealsResponse,
            )
            yield from page.deals
            token = page.next_page_token
            if not token:
                return

    def export_deal(self, deal: str) -> audit_service_pb2.ExportDealResponse:
        """A scored deal's export (``tables/{t}/deals/{n}``) as a seated player may have it:
        refused ``DEAL_NOT_FINISHED`` while it is played, ``NOT_SEATED`` at another's table."""
        stub = audit_service_pb2_grpc.AuditServiceStub(self.channel)
        return self.call(
            stub.ExportDeal,
            audit_service_pb2.ExportDealRequest(request_id=request_id(), name=deal),
            audit_service_pb2.ExportDealResponse,
        )

    def server_verifier_keys(self) -> list[str]:
        """The log's keys as the server gives them now (current, then retired: ``GetServerKey``);
        empty when the server signs nothing (UNIMPLEMENTED)."""
        stub = transparency_service_pb2_grpc.TransparencyServiceStub(self.channel)
        try:
            answer = stub.GetServerKey(
                transparency_service_pb2.GetServerKeyRequest(), timeout=self.timeout
            )
        except grpc.RpcError as error:
            if isinstance(error, grpc.Call) and error.code() is grpc.StatusCode.UNIMPLEMENTED:
                return []
            raise from_rpc_error(error) from None
        keys = [answer.verifier_key, *answer.retired_verifier_keys]
        return [key for key in keys if key][:MAX_SERVER_KEYS]

    def dispute(
        self,
        deal: str,
        *,
        server_keys: Sequence[str] = (),
        receipts: ReceiptFolder | Path | None = None,
        export: str | None = None,
        player: str | None = None,
    ) -> DisputeVerdict:
        """Fetch ``deal``'s export (unless ``export``, a saved one, is given) and verify it here
        with the sapsam package's verifier (``sapsam_client.dispute``), anchored under
        ``server_keys``, else the keys ``receipts`` pinned for this server's log, else the
        server's key now (pinned in ``receipts`` then: ``ReceiptFolder.pin_from``); the receipts
        kept for the table are checked too. With ``player`` (``players/{id}``, the caller),
        the key this client keeps for that player on this server is pinned: every move of the
        player's signed by another key fails the verdict (``pinned_player_key``)."""
        from sapsam_client.dispute import verifier_module, verify_deal_export

        verifier_module("audit.verifier")  # before any call: say what is missing first
        folder = ReceiptFolder(receipts) if isinstance(receipts, Path) else receipts
        if export is None:
            export = self.export_deal(deal).export
        keys, source = list(server_keys), "the server key you gave"
        if not keys and folder is not None:
            # The folder may serve several servers: pin_from adds this server's key only when
            # no key of its log is pinned yet (and never replaces one), as sapsam-play does.
            before = set(folder.server_keys)
            if folder.pin_from(self.channel):
                keys = [key.vkey for key in folder.server_keys]
                if set(folder.server_keys) - before:
                    source = (
                        "the server key the server gave just now (not pinned before), "
                        f"now pinned in {folder.folder}"
                    )
                else:
                    source = f"the server key pinned in {folder.folder} when you first played"
        if not keys:
            keys = self.server_verifier_keys()
            source = "the server key the server gave just now (not pinned before)"
        pins: list[str] = []
        if player is not None:
            own = kept_key(key_file(self.key_path), self.server, player)
            if own is not None:
                pins.append(f"{player}={own.public_key.hex()}")
        return verify_deal_export(deal, export, keys, source, folder, pins)

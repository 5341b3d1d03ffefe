"""The SDK's PlayerService calls: register, rotate the token, the player's signing key, profiles
(a part of ``sapsam_client.client.Client``)."""

from __future__ import annotations

from dataclasses import dataclass

from sapsam_client.connection import Connection, request_id
from sapsam_client.player_key import PlayerKey, key_file, load_or_create
from sapsam_proto.v1 import player_pb2, player_service_pb2


@dataclass(frozen=True)
class Registration:
    """A new player: its resource name, display name and bearer token (shown only once)."""

    player: str
    display_name: str
    token: str


class PlayerCalls(Connection):
    """The PlayerService calls of a :class:`~sapsam_client.client.Client`."""

    # -- players --------------------------------------------------------------------------------

    def register(self, display_name: str) -> Registration:
        """Register a new player and act as it from now on (the token is kept on the client)."""
        response = self.call(
            self.players.RegisterPlayer,
            player_service_pb2.RegisterPlayerRequest(
                request_id=request_id(), display_name=display_name
            ),
            player_service_pb2.RegisterPlayerResponse,
        )
        self.token = response.token
        return Registration(response.player.name, response.player.display_name, response.token)

    def rotate_token(self) -> str:
        """Replace this client's player token with a new one, use it from now on, and return it.

        The old token stops working at once. One request id serves every attempt, and each
        retry goes out with the old token: should an answer be lost, the retry gets the same new
        token (the server accepts the old token for that retry only). Save the returned token
        wherever the old one was kept.
        """
        response = self.call(
            self.players.RotateToken,
            player_service_pb2.RotateTokenRequest(request_id=request_id()),
            player_service_pb2.RotateTokenResponse,
        )
        self.token = response.token
        return response.token

    def register_player_key(self, key: PlayerKey, player: str) -> list[bytes]:
        """Register ``key``'s public half for ``player`` (``players/{id}``, this client's own
        player), proving it holds the key; idempotent. Every key the player has, oldest first."""
        request = player_service_pb2.RegisterPlayerKeyRequest(
            request_id=request_id(),
            public_key=key.public_key,
            proof=key.proof(player.removeprefix("players/")),
        )
        response = self.call(
            self.players.RegisterPlayerKey, request, player_service_pb2.RegisterPlayerKeyResponse
        )
        return list(response.public_keys)

    def key_for(self, player: str) -> PlayerKey | None:
        """The key this client signs ``player``'s moves with (None when ``sign_moves`` is off):
        the one kept in the key file for this server and player, created there on first use,
        and registered once per process."""
        if not self.sign_moves:
            return None
        with self._key_lock:
            if self.player_key is None:
                key = load_or_create(key_file(self.key_path), self.server, player)
                self.register_player_key(key, player)
                self.player_key = key
            return self.player_key

    def revoke_player_tokens(self, player: str) -> int:
        """Revoke every token of ``players/{player}`` (the operator's client only); how many."""
        return self.call(
            self.players.RevokePlayerTokens,
            player_service_pb2.RevokePlayerTokensRequest(request_id=request_id(), player=player),
            player_service_pb2.RevokePlayerTokensResponse,
        ).revoked_token_count

    def player_keys(self, name: str) -> list[bytes]:
        """Every Ed25519 public key ``players/{id}`` registered, oldest first (``GetPlayer``'s
        ``public_keys``): what an auditor pins (``sapsam audit verify --player-key``)."""
        return list(
            self.call(
                self.players.GetPlayer,
                player_service_pb2.GetPlayerRequest(name=name),
                player_service_pb2.GetPlayerResponse,
            ).public_keys
        )

    def get_player(self, name: str) -> player_pb2.Player:
        """A player's public profile."""
        return self.call(
            self.players.GetPlayer,
            player_service_pb2.GetPlayerRequest(name=name),
            player_service_pb2.GetPlayerResponse,
        ).player

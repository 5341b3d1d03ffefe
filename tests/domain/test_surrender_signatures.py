"""A player's signed play-or-surrender announcement (docs/fairness.md §19, §20): given these
events, when this command, then these events.

A player with a registered key signs its announcement as it signs its commits: unsigned is
SIGNATURE_REQUIRED, a key it has not registered or a signature of another message BAD_SIGNATURE,
each deciding nothing; the signed announcement records the key and the signature. The server's
announcement for a missed turn is unsigned. ``SurrenderAnnounced`` of schema 1 reads as unsigned,
signing scheme 1.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from test_surrender_turns import arranged, confirm_all, dealer
from test_table import PLAYERS, TABLE_ID

from sapsam.domain.commands import AnnounceSurrender, PlayerSignature, TimeOutSeats
from sapsam.domain.errors import Reason
from sapsam.domain.event_codec import DEFAULT_CODEC
from sapsam.domain.events import SurrenderAnnounced
from sapsam.domain.table_surrender import announcing_order
from sapsam.fairness import player_keys

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PUBLIC = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _announce(seat: int, surrender: bool, signature: PlayerSignature | None) -> AnnounceSurrender:
    return AnnounceSurrender(
        PLAYERS[seat], surrender, 2_000, signature=signature, player_keys=(PUBLIC,)
    )


def _signed(seat: int, surrender: bool) -> PlayerSignature:
    message = player_keys.announce_message(TABLE_ID, 1, seat, PLAYERS[seat], surrender)
    return PlayerSignature(PUBLIC, KEY.sign(message))


def test_a_player_with_a_key_signs_its_announcement_and_the_event_records_it() -> None:
    table, _ = arranged(3)
    confirm_all(table)
    first, second, _last = announcing_order(dealer(table), 3)
    refused = table.refused(_announce(first, True, None), Reason.SIGNATURE_REQUIRED)
    assert "registered a key" in str(refused)
    # A signature of the other choice (the operator's "surrender" for the player's "play").
    table.refused(_announce(first, True, _signed(first, False)), Reason.BAD_SIGNATURE)
    other = Ed25519PrivateKey.generate()
    unregistered = PlayerSignature(
        other.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw),
        other.sign(player_keys.announce_message(TABLE_ID, 1, first, PLAYERS[first], True)),
    )
    table.refused(_announce(first, True, unregistered), Reason.BAD_SIGNATURE)
    signature = _signed(first, True)
    (said,) = table.run(_announce(first, True, signature))
    assert said == SurrenderAnnounced(
        deal_number=1,
        seat=first,
        surrender=True,
        timed_out=False,
        deadline_ms=22_000,
        player_key=PUBLIC.hex(),
        signature=signature.signature.hex(),
        signing_scheme=2,
    )
    assert DEFAULT_CODEC.decode(*DEFAULT_CODEC.encode(said)) == said
    # A player without a key announces unsigned, as before.
    (unsigned,) = table.run(AnnounceSurrender(PLAYERS[second], False, 3_000))
    assert isinstance(unsigned, SurrenderAnnounced)
    assert (unsigned.player_key, unsigned.signature, unsigned.signing_scheme) == (None, None, 2)


def test_the_servers_announcement_for_a_missed_turn_is_unsigned() -> None:
    table, _ = arranged(3)
    confirm_all(table, now_ms=1_000)
    first = announcing_order(dealer(table), 3)[0]
    (missed,) = table.run(TimeOutSeats(now_ms=21_000))
    assert isinstance(missed, SurrenderAnnounced)
    assert missed.seat == first and missed.timed_out and not missed.surrender
    assert (missed.player_key, missed.signature) == (None, None)


def test_an_announcement_of_schema_1_reads_as_unsigned_scheme_1() -> None:
    data = {"deal_number": 3, "seat": 1, "surrender": True, "timed_out": False, "deadline_ms": 5}
    event = DEFAULT_CODEC.decode("SurrenderAnnounced", 1, data)
    assert event == SurrenderAnnounced(3, 1, True, False, 5, None, None, signing_scheme=1)
    assert SurrenderAnnounced.SCHEMA_VERSION == 2

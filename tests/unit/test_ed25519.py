"""sapsam.fairness.ed25519: libsodium's signatures are cryptography's, byte for byte, and what
verifies is exactly what cryptography (OpenSSL) accepts, edge cases included."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.fairness import ed25519
from sapsam.fairness.player_keys import signature_holds

# RFC 8032 section 7.1, TEST 2 (one-byte message).
RFC_SEED = bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
RFC_PUBLIC = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
RFC_MESSAGE = bytes.fromhex("72")
RFC_SIGNATURE = bytes.fromhex(
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)
# The group order L, little-endian: S + L is the same scalar, not canonical.
ORDER = 2**252 + 27742317777372353535851937790883648493
# The neutral point's encoding: a small-order key (and R) that libsodium refuses outright.
IDENTITY = (1).to_bytes(32, "little")


def openssl_holds(public_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def test_the_rfc_vector() -> None:
    secret = ed25519.secret_key(RFC_SEED)
    assert secret[32:] == RFC_PUBLIC
    assert ed25519.sign(secret, RFC_MESSAGE) == RFC_SIGNATURE
    assert ed25519.holds(RFC_PUBLIC, RFC_SIGNATURE, RFC_MESSAGE)
    assert not ed25519.holds(RFC_PUBLIC, RFC_SIGNATURE, b"\x73")


@settings(max_examples=60, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=300))
def test_signatures_are_cryptographys(seed: bytes, message: bytes) -> None:
    expected = Ed25519PrivateKey.from_private_bytes(seed).sign(message)
    signature = ed25519.sign(ed25519.secret_key(seed), message)
    assert signature == expected
    public = ed25519.secret_key(seed)[32:]
    assert ed25519.holds(public, signature, message)
    assert signature_holds(public, message, signature)


def _edge_cases() -> list[tuple[str, bytes, bytes, bytes]]:
    seed = bytes(range(32))
    public = ed25519.secret_key(seed)[32:]
    message = b"a move"
    good = ed25519.sign(ed25519.secret_key(seed), message)
    s = int.from_bytes(good[32:], "little")
    flipped = bytes([good[0] ^ 1]) + good[1:]
    not_canonical = good[:32] + (s + ORDER).to_bytes(32, "little")
    return [
        ("valid", public, good, message),
        ("another message", public, good, b"a mov3"),
        ("R altered", public, flipped, message),
        ("S not canonical (S + L)", public, not_canonical, message),
        # With the neutral key, R = neutral and S = 0 satisfy [S]B = R + [k]A for any message:
        # OpenSSL accepts it, libsodium refuses it (small order); holds must answer as OpenSSL.
        ("small-order key and R", IDENTITY, IDENTITY + bytes(32), message),
        ("small-order key, other message", IDENTITY, IDENTITY + bytes(32), b"anything"),
        ("key that is no point", bytes([2]) + bytes(31), good, message),
        ("all-zero key", bytes(32), good, message),
    ]


@pytest.mark.parametrize(("case", "public", "signature", "message"), _edge_cases())
def test_verdicts_are_openssls(case: str, public: bytes, signature: bytes, message: bytes) -> None:
    assert ed25519.holds(public, signature, message) == openssl_holds(public, signature, message)
    assert signature_holds(public, message, signature) == openssl_holds(public, signature, message)


def test_the_edge_cases_are_live() -> None:
    # OpenSSL accepts the small-order forgery: the fallback is what keeps holds' answers the same.
    assert openssl_holds(IDENTITY, IDENTITY + bytes(32), b"anything")
    verdicts = {case: openssl_holds(p, s, m) for case, p, s, m in _edge_cases()}
    assert verdicts["valid"] and not verdicts["S not canonical (S + L)"]


def test_wrong_sizes_are_false() -> None:
    secret = ed25519.secret_key(RFC_SEED)
    signature = ed25519.sign(secret, RFC_MESSAGE)
    assert not ed25519.holds(RFC_PUBLIC[:31], signature, RFC_MESSAGE)
    assert not ed25519.holds(RFC_PUBLIC, signature[:63], RFC_MESSAGE)
    with pytest.raises(ValueError, match="32 bytes"):
        ed25519.secret_key(RFC_SEED[:31])


# Without PyNaCl (an environment from before it became a dependency): cryptography does it all.
WITHOUT_SODIUM = """
import sys
sys.modules["nacl"] = None
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sapsam.fairness import ed25519
assert not ed25519.SODIUM
seed = bytes(range(32))
secret = ed25519.secret_key(seed)
signature = ed25519.sign(secret, b"a move")
assert signature == Ed25519PrivateKey.from_private_bytes(seed).sign(b"a move")
assert ed25519.holds(secret[32:], signature, b"a move")
assert not ed25519.holds(secret[32:], signature, b"a mov3")
identity = (1).to_bytes(32, "little")
assert ed25519.holds(identity, identity + bytes(32), b"anything")
print("ok")
"""


@pytest.mark.parametrize("size", [0, 32, 63, 65])
def test_signing_with_a_secret_key_of_the_wrong_size_is_refused(size: int) -> None:
    # libsodium would read 64 bytes past a shorter buffer: the size is checked before the call.
    with pytest.raises(ValueError, match="secret key has 64 bytes"):
        ed25519.sign(bytes(size), b"message")


def test_without_pynacl_cryptography_does_it_all() -> None:
    assert ed25519.SODIUM
    completed = subprocess.run(
        [sys.executable, "-c", WITHOUT_SODIUM],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"

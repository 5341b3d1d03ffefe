"""Ed25519 signing and verification (RFC 8032) on the server's hot path: libsodium first.

Why: a game call signs a receipt (18 of a deal's 24 calls) and verifies a player's signature
(the 8 commits and reveals). ``cryptography`` (OpenSSL) takes ~27 us of CPU to sign and ~87 us
to verify here; libsodium, through PyNaCl, ~17 and ~42 (docs/performance.md, "2026-12-03
(morning)"). Ed25519 signatures are deterministic, so a signature made here is byte for byte the
one ``cryptography`` makes with the same key.

What verifies is unchanged: libsodium accepts a subset of what OpenSSL accepts (both check
``[S]B = R + [k]A`` without the cofactor and compare R's encoding; libsodium also refuses a
non-canonical or small-order key and a small-order R). So a signature libsodium accepts holds,
and one it refuses is decided by ``cryptography``, as before: the same answers for every input,
the faster path for every honest signature.

An environment installed before PyNaCl became a dependency (``SODIUM`` False) signs and verifies
with ``cryptography`` alone: the same bytes and verdicts, at the old speed.

Imported only where a key signs or verifies, as ``cryptography`` was: parsing costs no start-up.
Pure: no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

try:
    # nacl.bindings initialises libsodium (sodium_init) on import; its ``crypto_sign`` and
    # ``crypto_sign_open`` wrappers copy the whole signed message out and back, so signing and
    # verifying call the same libsodium functions through PyNaCl's cffi ``lib`` directly.
    from nacl._sodium import ffi, lib  # type: ignore[import-not-found]  # cffi module, no stubs
    from nacl.bindings import crypto_sign_seed_keypair

    SODIUM = True
except ImportError:  # pragma: no cover - tested in a subprocess without it
    SODIUM = False

PUBLIC_KEY_SIZE: Final = 32
SEED_SIZE: Final = 32
SECRET_KEY_SIZE: Final = 64
SIGNATURE_SIZE: Final = 64


def secret_key(seed: bytes) -> bytes:
    """libsodium's 64-byte secret key (seed, then public key) of a 32-byte RFC 8032 seed."""
    if len(seed) != SEED_SIZE:
        raise ValueError(f"an Ed25519 seed has {SEED_SIZE} bytes, not {len(seed)}")
    if SODIUM:
        return bytes(crypto_sign_seed_keypair(seed)[1])
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = _openssl_key(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return seed + public


def sign(secret: bytes, message: bytes) -> bytes:
    """The 64-byte signature of ``message`` by ``secret`` (``secret_key``'s result)."""
    if len(secret) != SECRET_KEY_SIZE:
        # libsodium's crypto_sign reads 64 bytes of the key unchecked (PyNaCl's wrapper checked).
        raise ValueError(f"an Ed25519 secret key has {SECRET_KEY_SIZE} bytes, not {len(secret)}")
    if SODIUM:
        signed = ffi.new("unsigned char[]", len(message) + SIGNATURE_SIZE)
        if lib.crypto_sign(signed, ffi.NULL, message, len(message), secret) != 0:
            raise RuntimeError("libsodium could not sign")
        signature: bytes = ffi.buffer(signed, SIGNATURE_SIZE)[:]
        return signature
    return _openssl_key(secret[:SEED_SIZE]).sign(message)


def holds(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is ``public_key``'s signature of ``message``, exactly as
    ``cryptography``'s ``Ed25519PublicKey.verify`` decides (see the module docstring); a key or
    signature of the wrong size, or a key that is no curve point, is False."""
    if len(public_key) != PUBLIC_KEY_SIZE or len(signature) != SIGNATURE_SIZE:
        return False
    if not SODIUM:
        return _holds_for_openssl(public_key, signature, message)
    signed = signature + message
    opened = ffi.new("unsigned char[]", len(signed))
    if lib.crypto_sign_open(opened, ffi.NULL, signed, len(signed), public_key) != 0:
        return _holds_for_openssl(public_key, signature, message)
    return True


def _holds_for_openssl(public_key: bytes, signature: bytes, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _openssl_key(seed: bytes) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(seed)

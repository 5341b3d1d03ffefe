"""sapsam.log.signed_note against Go's published vectors and the C2SP rules.

Go vectors transcribed (data only) from github.com/golang/mod ``sumdb/note/note_test.go``
(package golang.org/x/mod/sumdb/note): the PeterNeumann signing and verifier keys
(``TestNewSigner``, ``TestNewVerifier``), the note it signs and its exact signature line
(``TestSign``), the EnochRoot key and signature (``TestOpen``, ``TestVerifierList``), and the
malformed notes and manglings those tests refuse.
"""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from sapsam.log.signed_note import (
    COSIGNATURE_V1,
    ED25519,
    MAX_SIGNATURES,
    NoteError,
    NoteSigner,
    NoteVerificationError,
    Signature,
    VerifierKey,
    add_signature,
    key_id,
    open_note,
    parse_note,
    sign_note,
)

PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_SIG = (
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6"
    "KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33W"
    "Wd1RvMc+QQ=\n"
)
PETER = VerifierKey.parse(PETER_VKEY)
ENOCH = VerifierKey.parse(ENOCH_VKEY)


def test_the_published_key_signs_the_published_note_byte_for_byte() -> None:
    signer = NoteSigner.from_skey(PETER_SKEY)
    assert signer.verifier == PETER
    assert signer.verifier.vkey() == PETER_VKEY
    assert signer.skey() == PETER_SKEY
    assert PETER.key_id == 0xC74F20A3 == key_id("PeterNeumann", ED25519, PETER.public_key)
    assert ENOCH.key_id == 0xAF0CFE78
    assert sign_note(TEXT, [signer]) == TEXT + "\n" + PETER_SIG
    # Signing again replaces the signature by the same key (Go's "existing signature replaced").
    assert add_signature(TEXT + "\n" + PETER_SIG, signer) == TEXT + "\n" + PETER_SIG


def test_the_key_id_is_the_recommended_hash() -> None:
    expected = hashlib.sha256(b"PeterNeumann\n\x01" + PETER.public_key).digest()[:4]
    assert PETER.key_id == int.from_bytes(expected, "big")


def test_every_mangling_of_the_published_keys_is_refused() -> None:
    for key, parse in ((PETER_VKEY, VerifierKey.parse), (PETER_SKEY, NoteSigner.from_skey)):
        for start in range(len(key) + 1):
            for end in range(start + 1, len(key) + 1):
                if (start, end) != (0, len(key)):
                    with pytest.raises(NoteError):
                        parse(key[start:end])
        for position in range(len(key)):
            changed = key[:position] + chr(ord(key[position]) + 1) + key[position + 1 :]
            with pytest.raises(NoteError):
                parse(changed)
    for bad in [
        # wrong length key, with adjusted key hash; unknown algorithm, with adjusted key hash
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ]:
        with pytest.raises(NoteError):
            VerifierKey.parse(bad)


def test_opening_with_one_two_or_no_known_keys() -> None:
    message = TEXT + "\n" + PETER_SIG + ENOCH_SIG
    opened = open_note(message, [PETER])
    assert opened.text == TEXT
    assert [entry.key for entry in opened.verified] == [PETER]
    assert [signature.name for signature in opened.unverified] == ["EnochRoot"]
    opened = open_note(message, [PETER, ENOCH])
    assert [entry.key for entry in opened.verified] == [PETER, ENOCH]
    assert opened.unverified == ()
    with pytest.raises(NoteVerificationError, match="no verifiable signatures"):
        open_note(message, [])
    # A known key listed twice is one key.
    assert open_note(TEXT + "\n" + ENOCH_SIG, [ENOCH, PETER, ENOCH]).verified[0].key == ENOCH


def test_a_known_key_whose_signature_fails_refuses_the_note() -> None:
    broken = TEXT + "\n" + PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]
    with pytest.raises(NoteVerificationError, match="invalid signature for key PeterNeumann"):
        open_note(broken, [PETER])
    # The same broken signature by a key the reader does not know is only ignored.
    enoch_broken = ENOCH_SIG[:60] + "ABCD" + ENOCH_SIG[60:]
    opened = open_note(
        TEXT + "\n" + PETER_SIG + PETER_SIG + ENOCH_SIG + ENOCH_SIG + enoch_broken, [PETER]
    )
    assert [entry.key for entry in opened.verified] == [PETER]
    assert len(opened.unverified) == 2
    with pytest.raises(NoteVerificationError):
        open_note(TEXT.replace("cryptography", "cryptographY") + "\n" + PETER_SIG, [PETER])


def test_signatures_that_share_only_a_name_or_only_an_id_are_unknown() -> None:
    renamed = PETER_SIG.replace("PeterNeumann", "CarmenSandiego")
    assert open_note(TEXT + "\n" + renamed + PETER_SIG, [PETER]).unverified[0].name == (
        "CarmenSandiego"
    )
    wrong_id = PETER_SIG.replace("x08g", "xxxx")
    with pytest.raises(NoteVerificationError):
        open_note(TEXT + "\n" + wrong_id, [PETER])


@pytest.mark.parametrize(
    "message",
    [
        TEXT,
        TEXT + "\n",
        TEXT + "\n" + PETER_SIG[:-1],
        "\x01" + TEXT + "\n" + PETER_SIG,
        TEXT + "\n" + "— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2p"
        "ZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
        TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
        TEXT + "\n" + PETER_SIG * (MAX_SIGNATURES + 1),
        TEXT + "\n" + "— PeterNeumann AAAA\n",
        TEXT + "\n" + "— PeterNeumann not*base64\n",
        TEXT + "\n" + "— Peter+Neumann " + PETER_SIG.split(" ")[2],
    ],
)
def test_malformed_notes_are_refused(message: str) -> None:
    with pytest.raises(NoteError):
        open_note(message, [PETER])


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(NoteError):
        parse_note(b"\xff" + (TEXT + "\n" + PETER_SIG).encode())


def test_several_signatures_and_witness_cosignatures() -> None:
    server = NoteSigner.from_seed("sapsam/test", bytes(range(32)))
    witness = NoteSigner.from_seed("witness.example/w1", bytes(32), COSIGNATURE_V1)
    stranger = NoteSigner.from_seed("witness.example/w2", b"\x07" * 32, COSIGNATURE_V1)
    text = "sapsam/test\n3\n" + base64.b64encode(bytes(32)).decode() + "\n"
    message = sign_note(text, [server])
    message = add_signature(message, witness, timestamp=1_700_000_000)
    message = add_signature(message, stranger, timestamp=1_700_000_001)
    opened = open_note(message, [server.verifier, witness.verifier])
    assert [(entry.key, entry.timestamp) for entry in opened.verified] == [
        (server.verifier, None),
        (witness.verifier, 1_700_000_000),
    ]
    assert [signature.name for signature in opened.unverified] == ["witness.example/w2"]
    assert open_note(message, [witness.verifier]).verified_by(witness.verifier)
    # The cosignature is C2SP tlog-cosignature/v1: time || Ed25519 over the header and the text.
    line = message.splitlines()[-2]
    raw = base64.b64decode(line.split(" ")[2])
    assert int.from_bytes(raw[:4], "big") == key_id(
        "witness.example/w1", COSIGNATURE_V1, witness.verifier.public_key
    )
    assert int.from_bytes(raw[4:12], "big") == 1_700_000_000
    signed = b"cosignature/v1\ntime 1700000000\n" + text.encode()
    Ed25519PublicKey.from_public_bytes(witness.verifier.public_key).verify(raw[12:], signed)
    assert witness.verifier.vkey().split("+")[2].startswith("B")  # base64 of 0x04 || key


def test_signers_refuse_what_they_cannot_sign() -> None:
    server = NoteSigner.from_seed("sapsam/test", bytes(32))
    witness = NoteSigner.from_seed("w", bytes(32), COSIGNATURE_V1)
    for text in ["no newline", "a\x00b\n"]:
        with pytest.raises(NoteError):
            server.sign(text)
    with pytest.raises(NoteError):
        server.sign("x\n", timestamp=5)
    with pytest.raises(NoteError):
        witness.sign("x\n")
    with pytest.raises(NoteError):
        NoteSigner.from_seed("bad name", bytes(32))
    with pytest.raises(NoteError):
        NoteSigner.from_seed("ok", bytes(31))
    with pytest.raises(NoteError):
        VerifierKey("k", 0x02, bytes(32))


def test_a_signature_line_round_trips() -> None:
    signature = Signature("PeterNeumann", 0xC74F20A3, b"\x01" * 64)
    assert Signature.parse(signature.line()[:-1]) == signature


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=0, max_size=40),
        min_size=1,
        max_size=6,
    )
)
def test_any_text_round_trips_through_signing(lines: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    signer = NoteSigner.from_seed("sapsam/prop", bytes(32))
    message = sign_note(text, [signer])
    assert open_note(message, [signer.verifier]).text == text
    assert open_note(message.encode(), [signer.verifier]).text == text


def test_two_known_keys_with_one_name_and_key_id_are_ambiguous() -> None:
    # A 32-bit key id collides after ~2**16 keys (birthday); public keys need not be on the
    # curve to be listed, so find two deterministically.
    seen: dict[int, bytes] = {}
    number = 0
    while True:
        public = hashlib.sha256(b"%d" % number).digest()
        identifier = key_id("EnochRoot", ED25519, public)
        if identifier in seen:
            break
        seen[identifier] = public
        number += 1
    first = VerifierKey("EnochRoot", ED25519, seen[identifier])
    second = VerifierKey("EnochRoot", ED25519, public)
    raw = identifier.to_bytes(4, "big") + bytes(64)
    line = "— EnochRoot " + base64.b64encode(raw).decode() + "\n"
    with pytest.raises(NoteVerificationError, match="ambiguous key"):
        open_note(TEXT + "\n" + line, [first, second])


def test_text_that_is_not_utf8_or_too_long_is_refused() -> None:
    signer = NoteSigner.from_seed("sapsam/test", bytes(32))
    for text in ["\ud800\n", "x" * (1 << 16) + "\n", "tab\there\n"]:
        with pytest.raises(NoteError):
            signer.sign(text)
        with pytest.raises(NoteError):
            parse_note(text + "\n" + PETER_SIG)
    # DEL (U+007F) is not below U+0020: allowed, as C2SP says.
    assert open_note(sign_note("del\x7f\n", [signer]), [signer.verifier]).text == "del\x7f\n"

"""The faster forms the offline verifier uses give exactly what the reference forms give.

Issue #7 (audit speed) replaced a few steps of the verification by quicker ones; each is checked
here against the plain function it stands for, on ordinary and on odd inputs.
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import random
import types
from typing import Any

import pytest

from sapsam.audit import Requester, select_deal, write_lines
from sapsam.audit import deal_checks as deal_checks_module
from sapsam.audit.export_format import ExportedEvent, ExportFormatError
from sapsam.audit.export_header_reading import header_from_dict
from sapsam.audit.proof_format import MAX_CHECKPOINT_CHARS, MAX_CONSISTENCY_PROOFS
from sapsam.audit.report import AuditCheck, Status, passed_check
from sapsam.audit.sample_series import recorded_stream
from sapsam.domain import published as published_module
from sapsam.fairness import verification_checks
from sapsam.fairness.deal import (
    cut_deck,
    cut_deck_digest,
    cut_deck_record_message,
    deal_hand_bytes,
    deal_hands,
    deck_digest,
    deck_record_message,
    hand_digest,
    hand_record_message,
)
from sapsam.fairness.encoding import FairnessError, card_bytes, keyed_hmac_sha256
from sapsam.fairness.published import Reveal
from sapsam.fairness.verification_checks import Check
from sapsam.log.chain import (
    GENESIS_HASH,
    canonical_event_bytes,
    chain_hash,
    verify_chain_of_stream,
)
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import DECK, parse_cards
from sapsam.rules.scoring import PairResult


@pytest.mark.parametrize("key_size", [0, 1, 16, 32, 63, 64, 65, 100, 200])
def test_keyed_hmac_is_hmac_sha256(key_size: int) -> None:
    rng = random.Random(key_size)
    key = rng.randbytes(key_size)
    mac = keyed_hmac_sha256(key)
    for size in (0, 1, 8, 55, 56, 64, 65, 200):
        message = rng.randbytes(size)
        assert mac(message) == hmac.digest(key, message, "sha256")
    # The states are copied, never consumed: the same message again gives the same value.
    assert mac(b"again") == mac(b"again") == hmac.digest(key, b"again", "sha256")


@pytest.mark.parametrize("seat_count", [2, 3, 4])
def test_record_digests_from_card_bytes_match(seat_count: int) -> None:
    rng = random.Random(seat_count)
    key = rng.randbytes(32)
    mac = keyed_hmac_sha256(key)
    for _ in range(20):
        deck = list(DECK)
        rng.shuffle(deck)
        position = rng.randint(1, 51)
        dealer = rng.randrange(seat_count)
        cards = card_bytes(deck)
        assert mac(deck_record_message(cards)) == deck_digest(key, deck)
        after_cut = cut_deck(deck, position)
        cut_cards = cards[position:] + cards[:position]
        assert cut_cards == card_bytes(after_cut)
        assert mac(cut_deck_record_message(cut_cards)) == cut_deck_digest(key, after_cut)
        hands = deal_hands(after_cut, dealer, seat_count)
        dealt = deal_hand_bytes(cut_cards, dealer, seat_count)
        assert dealt == tuple(card_bytes(hand) for hand in hands)
        for seat, hand in enumerate(hands):
            assert mac(hand_record_message(seat, dealt[seat])) == hand_digest(key, seat, hand)


@pytest.mark.parametrize(
    ("dealer", "seat_count"), [(4, 4), (-1, 3), (True, 2), (0, 5), (0, 1), ("0", 2)]
)
def test_deal_hand_bytes_refuses_what_deal_hands_refuses(dealer: object, seat_count: int) -> None:
    cards = card_bytes(DECK)
    with pytest.raises(FairnessError) as reference:
        deal_hands(DECK, dealer, seat_count)  # type: ignore[arg-type]
    with pytest.raises(FairnessError) as fast:
        deal_hand_bytes(cards, dealer, seat_count)  # type: ignore[arg-type]
    assert str(fast.value) == str(reference.value)


def _header_variants() -> list[dict[str, Any]]:
    events = recorded_stream(3, deals=2)
    header = json.loads(next(iter(write_lines(select_deal(events, 2, Requester.operator())))))
    assert len(header["segments"]) == 2
    variants = [header]

    def changed(path: tuple[object, ...], new: object) -> None:
        variant = json.loads(json.dumps(header))
        target = variant
        for step in path[:-1]:
            target = target[step]
        if new is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = new
        variants.append(variant)

    for name in header:
        changed((name,), _DELETE)
        for odd in (None, True, 1, "x", [], {}, [1, "2"], 2.5):
            changed((name,), odd)
    for field in ("anchor", "first_version", "last_version", "last_hash"):
        changed(("segments", 1, field), _DELETE)
        for odd in (None, False, 3, "00" * 31, "AB" * 32, " " + "ab" * 32, "zz" * 32, {}):
            changed(("segments", 1, field), odd)
    for field in ("version", "hash"):
        changed(("segments", 0, "anchor", field), _DELETE)
        for odd in (None, True, -1, "00" * 33, "0" * 63):
            changed(("segments", 0, "anchor", field), odd)
    changed(("segments", 1), "not an object")
    changed(("deals", 0), True)
    changed(("finished_deals", 0), "1")
    # The proof an export carries (docs/audit.md §2.5): the usual object and what is not.
    note = "sapsam/test\n5\n" + "A" * 44 + "\n\n\u2014 sapsam/test abcd\n"
    for transparency in (
        {"checkpoint": note},
        {"checkpoint": note, "consistency": []},
        {"checkpoint": note, "consistency": [{"old_size": 1, "new_size": 5, "proof": ""}]},
        {"checkpoint": note, "consistency": [{"old_size": 1}]},
        {"checkpoint": note, "consistency": {}},
        {"checkpoint": note, "consistency": None},
        {"checkpoint": note, "consistency": [None] * (MAX_CONSISTENCY_PROOFS + 1)},
        {"checkpoint": note, "witness": note},
        {"checkpoint": note, "consistency": [], "witness": note},
        {"checkpoint": ""},
        {"checkpoint": 5},
        {"checkpoint": "x" * (MAX_CHECKPOINT_CHARS + 1)},
        {"checkpoint": "x" * MAX_CHECKPOINT_CHARS},
        {"consistency": []},
        {},
        [],
        note,
        None,
    ):
        changed(("transparency",), transparency)
    return variants


_DELETE = object()


def test_header_read_without_formatting_is_the_header_read_field_by_field() -> None:
    variants = _header_variants()
    assert len(variants) > 150
    for variant in variants:
        try:
            fast = header_from_dict(variant)
        except ExportFormatError as error:
            fast_error: str | None = str(error)
        else:
            fast_error = None
        # A read-only view is not a dict, so it always takes the field-by-field checks.
        try:
            checked = header_from_dict(types.MappingProxyType(variant))
        except ExportFormatError as error:
            assert fast_error == str(error)
        else:
            assert fast_error is None
            assert fast == checked
            assert [type(value) for value in vars(fast).values()] == [
                type(value) for value in vars(checked).values()
            ]


def _same_instance(fast: object, reference: object) -> None:
    assert type(fast) is type(reference)
    assert fast == reference
    assert repr(fast) == repr(reference)
    # The same attributes in the same order as the dataclass's own __init__ sets them.
    assert list(vars(fast).items()) == list(vars(reference).items())
    assert [field.name for field in dataclasses.fields(type(fast))] == list(vars(fast))  # type: ignore[arg-type]


def test_values_made_without_init_are_the_constructors_values() -> None:
    front, middle, back = DECK[0:3], DECK[3:8], DECK[8:13]
    arrangement = Arrangement.of_card_rows(front, middle, back)
    _same_instance(arrangement, Arrangement(front, middle, back))
    _same_instance(published_module._reveal(arrangement, b"n" * 16), Reveal(arrangement, b"n" * 16))
    _same_instance(
        published_module._pair_result(0, 2, (1, -1, 0), 3),
        PairResult(seat_a=0, seat_b=2, rows=(1, -1, 0), delta=3),
    )
    for passed in (True, False):
        _same_instance(
            verification_checks.check_result("cut", passed, "e", "f", "d"),
            Check(name="cut", passed=passed, expected="e", found="f", detail="d"),
        )
    for status in Status:
        _same_instance(
            deal_checks_module._deal_check("dealer", status, "d", "e", "f", 3),
            AuditCheck("dealer", status, "d", expected="e", found="f", deal=3),
        )
    # AuditCheck's __post_init__ changes only a forged deal number or an overlong text, which
    # _deal_check hands to the constructor; the rest it makes without it, equal.
    long_text = "x" * 5_000
    for deal, text in ((True, "d"), (0, "d"), (2**40, "d"), (3, long_text)):
        _same_instance(
            deal_checks_module._deal_check("dealer", Status.FAILED, text, "e", "f", deal),
            AuditCheck("dealer", Status.FAILED, text, expected="e", found="f", deal=deal),
        )
    # Of the others, only Arrangement has a __post_init__, and it keeps rows that are tuples of
    # Card as they are (the only rows published_deal gives Arrangement.of_card_rows).
    for kind in (Reveal, PairResult, Check):
        assert not hasattr(kind, "__post_init__")
    assert parse_cards(("As", "Kd", "2c")) == Arrangement.parse("As Kd 2c", "", "").front


def test_fair_dealings_passes_made_without_make_checks_tests_are_the_constructors() -> None:
    """``fairness_checks`` makes its passes by ``passed_check`` where the deal number and the
    detail need no test: the same checks as the constructor's. A forged deal number (one equal
    to the events', as True is to 1) is named in every detail, as make_check has it named."""
    from sapsam.audit.deal_events import DealEvents
    from sapsam.domain.event_codec import DEFAULT_CODEC
    from sapsam.domain.events import DealStarted, PlayerSeated, TableCreated

    _same_instance(
        passed_check("cut", "d", "no reveal", 3),
        AuditCheck("cut", Status.PASSED, "d", expected="", found="no reveal", deal=3),
    )
    events = [
        DEFAULT_CODEC.decode(recorded.type, recorded.schema_version, recorded.data)
        for recorded in recorded_stream(4, deals=1)
    ]
    created = next(event for event in events if isinstance(event, TableCreated))
    seated = [event for event in events if isinstance(event, PlayerSeated)]
    start = next(i for i, event in enumerate(events) if isinstance(event, DealStarted))
    for number in (1, True):
        deal = DealEvents(number)
        deal.events.extend(events[start:])
        checks, totals = deal_checks_module.fairness_checks(deal, created, None, seated)
        assert len(checks) >= 10
        if number is True:  # named in each detail by the constructor, as make_check does
            assert all(check.deal is None for check in checks)
            assert all(check.detail.startswith("deal True: ") for check in checks)
            continue
        assert totals is not None
        for check in checks:
            assert check.status is Status.PASSED
            reference = AuditCheck(check.name, Status.PASSED, check.detail, "", check.found, 1)
            _same_instance(check, reference)


def test_a_deals_first_event_of_a_type_is_the_one_a_walk_finds() -> None:
    from sapsam.audit.deal_events import DealEvents
    from sapsam.domain.event_codec import DEFAULT_CODEC
    from sapsam.domain.events import DealScored, DealStarted, DeckCut, Event

    stream = recorded_stream(2, deals=2)
    events: list[Event] = [
        DEFAULT_CODEC.decode(recorded.type, recorded.schema_version, recorded.data)
        for recorded in stream
    ]
    deal = DealEvents(1)
    kinds = (DealStarted, DeckCut, DealScored)
    for event in events:
        deal.events.append(event)
        for kind in kinds:  # asked again after each event appended: never a stale answer
            expected = next((e for e in deal.events if isinstance(e, kind)), None)
            assert deal.first(kind) is expected
            assert deal.first(kind) is expected
    assert deal.first(DealScored) is not None and deal.finished
    assert DealEvents(1, list(events)) == deal  # what a deal keeps of its look-ups is no field


def test_the_header_rule_set_compared_as_it_is_gives_what_json_values_give() -> None:
    from sapsam.audit.export_reading import read_export
    from sapsam.audit.opening_checks import _as_json, header_check
    from sapsam.audit.verifier import _decode
    from sapsam.domain.event_codec import DEFAULT_CODEC
    from sapsam.domain.events import TableCreated

    lines = list(write_lines(select_deal(recorded_stream(2), 1, Requester.operator())))
    decoded, _ = _decode(read_export(lines).events, DEFAULT_CODEC)
    created = next(event for _, event in decoded if isinstance(event, TableCreated))
    header = json.loads(lines[0])
    recorded = header["rule_set"]
    edits: list[dict[str, Any]] = [
        {},
        {"series_length": recorded["series_length"] + 1},
        {"pair_units": {"x": [1, 2]}},
        {"extra": [1, [2, 3]]},
    ]
    for edit in edits:
        edited = dict(header, rule_set={**recorded, **edit})
        export = read_export([json.dumps(edited), *lines[1:]])
        detail = header_check(export, decoded, created, None).detail
        differs = _as_json(export.header.rule_set) != _as_json(created.rule_set)
        assert ("differs from the one recorded" in detail) is differs
        assert differs is bool(edit)


def test_header_records_made_without_init_are_the_constructors_records() -> None:
    # The usual header's records (ExportHeader, its Segments and ChainAnchors, its
    # ExportTransparency) are made without the frozen __init__: the same instances.
    read = 0
    for variant in _header_variants():
        try:
            fast = header_from_dict(variant)
            checked = header_from_dict(types.MappingProxyType(variant))
        except ExportFormatError:
            continue
        read += 1
        _same_instance(fast, checked)
        for segment, reference in zip(fast.segments, checked.segments, strict=True):
            _same_instance(segment, reference)
            _same_instance(segment.anchor, reference.anchor)
        if fast.transparency is not None:
            _same_instance(fast.transparency, checked.transparency)
    assert read > 10


def test_a_verification_s_records_made_without_init_are_the_constructors_records() -> None:
    # The report (with its anchor), the chain's report, fair dealing's report and each deal's
    # context are made without the frozen __init__: the same instances as the constructors'.
    from sapsam.audit.anchoring import Trust
    from sapsam.audit.families import DealContext
    from sapsam.audit.sample_anchored import anchored_log
    from sapsam.audit.verifier import _deal_context, verify_export
    from sapsam.fairness import verify_deal
    from sapsam.fairness.example_deals import example_published_deal
    from sapsam.fairness.vectors import DEAL_INPUTS
    from sapsam.log.signed_note import NoteSigner

    signer = NoteSigner.from_seed("sapsam/test", bytes(32))
    log = anchored_log([recorded_stream(4)], signer)
    lines = list(write_lines(log.anchored(select_deal(log.streams[0], 2, Requester.operator()))))
    report = verify_export(lines, trust=Trust(server_keys=(signer.verifier,)))
    assert report.anchor is not None and report.ok
    for record in (report, report.anchor):
        _same_instance(record, type(record)(**vars(record)))
    tampered = [*lines[:-1], lines[-1].replace('"version":', '"version":1', 1)]
    failed = verify_export(tampered, trust=Trust(server_keys=(signer.verifier,)))
    assert failed.anchor is None and not failed.ok
    _same_instance(failed, type(failed)(**vars(failed)))
    data, metadata = {"deal_number": 1}, {"actor": "a"}
    event_bytes = canonical_event_bytes("table-1", 1, "DealStarted", 1, data, metadata)
    event = ExportedEvent(
        10, 1, "DealStarted", 1, data, metadata, chain_hash(GENESIS_HASH, event_bytes)
    )
    chain = verify_chain_of_stream("table-1", [event], parsed_json=True)
    assert chain.intact
    _same_instance(chain, type(chain)(**vars(chain)))
    deal_report = verify_deal(example_published_deal(DEAL_INPUTS[5]))
    assert deal_report.ok
    _same_instance(deal_report, type(deal_report)(**vars(deal_report)))
    context_fields = (None, None, 4, "close", None, (), ())
    _same_instance(_deal_context(*context_fields), DealContext(*context_fields))

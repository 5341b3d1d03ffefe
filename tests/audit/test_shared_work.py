"""What verifications in one process share (``sapsam.audit.verifier.forget_shared_work``: the
checkpoints opened under pinned keys, the inclusion walks, the lots redrawn, the rule sets read,
the opening lines read, decoded and chained) never changes a verdict: a forged export verified
after the honest one, with all of that kept, gets exactly the report it gets in a process of its
own."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from sapsam.audit import Requester, select_deal, verify_export, write_lines
from sapsam.audit.anchoring import Trust
from sapsam.audit.inclusion_walk import EVENT_ROOTS
from sapsam.audit.opening_checks import _read_rule_set, opening_check
from sapsam.audit.report import Status, Verdict
from sapsam.audit.sample_anchored import AnchoredLog, anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.audit.verifier import forget_shared_work
from sapsam.domain.events import DealStarted, PlayerSeated, TableCreated
from sapsam.log.signed_note import NoteSigner
from sapsam.rules.ruleset import RuleSet, RuleSetError

SIGNER = NoteSigner.from_seed("sapsam/test", bytes(32))
STRANGER = NoteSigner.from_seed("sapsam/test", bytes([9]) * 32)
PINNED = Trust(server_keys=(SIGNER.verifier,))


@pytest.fixture(scope="module")
def honest() -> list[str]:
    log: AnchoredLog = anchored_log([recorded_stream(3, 2), recorded_stream(4, 2)], SIGNER)
    return list(write_lines(log.anchored(select_deal(log.streams[1], 2, Requester.operator()))))


def _edit(lines: list[str], index: int, change: Callable[[dict[str, Any]], None]) -> list[str]:
    value = json.loads(lines[index])
    change(value)
    return [*lines[:index], json.dumps(value), *lines[index + 1 :]]


def _line_of(lines: list[str], event_type: str) -> int:
    return next(i for i, line in enumerate(lines) if json.loads(line).get("type") == event_type)


def _flip_hex(text: str, at: int) -> str:
    return text[:at] + ("1" if text[at] == "0" else "0") + text[at + 1 :]


def _forgeries(lines: list[str]) -> dict[str, list[str]]:
    lot = _line_of(lines, "DealerChosen")
    created = _line_of(lines, "TableCreated")
    note = json.loads(lines[0])["transparency"]["checkpoint"]
    signature_at = note.rindex(" ") + 20  # inside the signature, past the key id
    flipped = (
        note[:signature_at] + ("B" if note[signature_at] == "A" else "A") + note[signature_at + 1 :]
    )

    def set_data(name: str, value: object) -> Callable[[dict[str, Any]], None]:
        return lambda event: event["data"].__setitem__(name, value)

    def set_proof(at: int) -> Callable[[dict[str, Any]], None]:
        return lambda event: event["inclusion"].__setitem__(
            "proof", _flip_hex(event["inclusion"]["proof"], at)
        )

    return {
        "lot seed": _edit(lines, lot, set_data("lot_seed", "00" * 32)),
        "lot seed not hex": _edit(lines, lot, set_data("lot_seed", "zz")),
        # Another seat than the drawn one (the honest history's lot is random).
        "dealer": _edit(
            lines, lot, lambda e: e["data"].__setitem__("dealer", (e["data"]["dealer"] + 1) % 4)
        ),
        "lot commitment": _edit(lines, created, set_data("lot_commitment", "11" * 32)),
        "seat count": _edit(lines, created, set_data("seat_count", 3)),
        "rule set": _edit(
            lines, created, lambda e: e["data"]["rule_set"].__setitem__("row_unit", 2)
        ),
        # A rule set's object values are part of what its reading is kept by (version 6).
        "pair units": _edit(
            lines, created, lambda e: e["data"]["rule_set"].__setitem__("pair_units", {"0-1": 2})
        ),
        "pair units not integers": _edit(
            lines,
            created,
            lambda e: e["data"]["rule_set"].__setitem__("pair_units", {"0-1": True}),
        ),
        "signature": _edit(
            lines, 0, lambda h: h["transparency"].__setitem__("checkpoint", flipped)
        ),
        "lowest proof hash": _edit(lines, lot, set_proof(0)),
        "highest proof hash": _edit(lines, len(lines) - 1, set_proof(-1)),
        "leaf index": _edit(
            lines,
            lot,
            lambda e: e["inclusion"].__setitem__("leaf_index", e["inclusion"]["leaf_index"] + 1),
        ),
        # The opening's lines are read once for many exports (export_reading): honest lines read
        # before, in another place or twice, and an honest line edited, are judged as alone.
        "seats swapped": [
            *lines[: created + 1],
            lines[created + 2],
            lines[created + 1],
            *lines[created + 3 :],
        ],
        "seat line twice": [*lines[: created + 2], lines[created + 1], *lines[created + 2 :]],
        "player id": _edit(lines, created + 1, set_data("player_id", "mallory")),
    }


@pytest.mark.parametrize(
    "forgery",
    [
        "lot seed",
        "lot seed not hex",
        "dealer",
        "lot commitment",
        "seat count",
        "rule set",
        "pair units",
        "pair units not integers",
        "signature",
        "lowest proof hash",
        "highest proof hash",
        "leaf index",
        "seats swapped",
        "seat line twice",
        "player id",
    ],
)
def test_a_forgery_after_the_honest_export_gets_the_report_it_gets_alone(
    honest: list[str], forgery: str
) -> None:
    forged = _forgeries(honest)[forgery]
    forget_shared_work()
    alone = verify_export(forged, trust=PINNED)
    assert alone.verdict is Verdict.FAILED
    for trust in (PINNED, Trust(server_keys=(STRANGER.verifier, SIGNER.verifier))):
        assert verify_export(honest, trust=trust).verdict is Verdict.ANCHORED  # remembered
    after_honest = verify_export(forged, trust=PINNED)
    assert after_honest.to_dict() == alone.to_dict()
    # And the honest export after the forgery: still anchored, the same report as alone.
    kept = verify_export(honest, trust=PINNED).to_dict()
    forget_shared_work()
    assert kept == verify_export(honest, trust=PINNED).to_dict()


def test_an_opening_events_root_is_kept_for_its_tree_alone(honest: list[str]) -> None:
    """A table's deal exports share its opening events (read once): the root each one's proof
    reached is kept by the event, for a tree of that size and that root only."""
    forget_shared_work()
    alone = verify_export(honest, trust=PINNED).to_dict()
    kept = list(EVENT_ROOTS.items())
    assert len(kept) == 6  # TableCreated, four PlayerSeated, DealerChosen
    # Roots kept for a tree of another size are not taken: the proofs are walked again.
    for key, (event, size, root) in kept:
        EVENT_ROOTS[key] = (event, size + 1, root)
    assert verify_export(honest, trust=PINNED).to_dict() == alone
    assert sorted(EVENT_ROOTS.items()) == sorted(kept)
    assert verify_export(honest, trust=PINNED).to_dict() == alone  # taken as kept


def test_an_opening_check_is_kept_for_the_same_events_alone() -> None:
    """The opening check of the same events (by identity, as a table's deal exports share
    them) is the one made before; equal events that are other objects are checked again."""
    forget_shared_work()
    created = TableCreated(
        table_id="t", rule_set={}, seat_count=2, lot_commitment="00", created_by="o"
    )
    seated = [PlayerSeated(seat=0, player_id="a"), PlayerSeated(seat=1, player_id="b")]
    decoded = [
        (1, created),
        (2, seated[0]),
        (3, seated[1]),
        (4, DealStarted(deal_number=1, dealer=0, seed_commitment="00")),
    ]
    first = opening_check(decoded, created)
    assert first.status is Status.PASSED
    assert opening_check(list(decoded), created) is first
    # The same seat twice, in an equal event of its own: checked, not taken as kept.
    twice = [(1, created), (2, seated[0]), (3, dataclasses.replace(seated[0]))]
    assert opening_check(twice, created).status is Status.FAILED
    other = dataclasses.replace(created)
    assert opening_check([(1, other), *decoded[1:]], other) is not first
    assert opening_check(decoded, created) is first
    forget_shared_work()
    assert opening_check(decoded, created) is not first


def test_a_stranger_key_is_not_taken_for_the_pinned_one(honest: list[str]) -> None:
    forget_shared_work()
    assert verify_export(honest, trust=PINNED).verdict is Verdict.ANCHORED
    stranger = verify_export(honest, trust=Trust(server_keys=(STRANGER.verifier,)))
    assert stranger.verdict is Verdict.FAILED and stranger.failed_names() == ("checkpoint",)


def test_a_rule_set_with_object_values_is_read_once() -> None:
    """From rules version 6 ``pair_units`` and ``royalty_amounts`` are JSON objects: an equal rule
    set is the one read before, one whose object holds a value of another type is not."""
    rule_set = RuleSet().to_dict()
    assert rule_set["rules_version"] >= 6 and type(rule_set["pair_units"]) is dict
    forget_shared_work()
    first = _read_rule_set(json.loads(json.dumps(rule_set)))
    assert _read_rule_set(json.loads(json.dumps(rule_set))) is first
    staked = {**rule_set, "pair_units": {"0-1": 2}}
    assert _read_rule_set(staked).pair_units == {"0-1": 2}
    assert _read_rule_set({**rule_set, "pair_units": {"0-1": 2}}) is _read_rule_set(staked)
    with pytest.raises(RuleSetError):
        _read_rule_set({**rule_set, "pair_units": {"0-1": True}})
    with pytest.raises(RuleSetError):  # errors are not kept
        _read_rule_set({**rule_set, "pair_units": {"0-1": True}})

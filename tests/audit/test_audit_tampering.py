"""Each tampering of an exported file, applied alone, is caught and named by the offline verifier.

Every case is tried twice: as a plain edit (the hash chain breaks at the edited event), and with the
chain recomputed from the edit on, as a forger would, so that the chain holds and the check that
owns the altered fact has to catch it (the anchor, a commitment, the sequence or the rescoring).
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from sapsam.app.tables import TableService
from sapsam.audit import Requester, verify_export, write_lines
from sapsam.audit import database as audit_database
from sapsam.audit.sample_play import play_series
from sapsam.log.chain import canonical_event_bytes, chain_hash
from sapsam.rules.cards import DECK, format_cards, parse_cards
from sapsam.store.event_store import EventStore
from sapsam.store.table_projections import projectors

Json = dict[str, Any]


@dataclass
class Exported:
    """An export split into its header and event objects, ready to be edited."""

    header: Json
    events: list[Json]

    def lines(self) -> list[str]:
        return [json.dumps(self.header)] + [json.dumps(event) for event in self.events]

    def index_of(self, event_type: str, nth: int = 0) -> int:
        found = [i for i, event in enumerate(self.events) if event["type"] == event_type]
        return found[nth]

    def segment_events(self, segment: int) -> list[Json]:
        """The events of a segment: the first ones for segment 0, the rest for segment 1."""
        size = _segment_size(self.header["segments"][0])
        return self.events[:size] if segment == 0 else self.events[size:]

    def rechain(self, segment: int) -> None:
        """Renumber and re-hash a segment from its anchor, and update the header to match."""
        spec = self.header["segments"][segment]
        previous = bytes.fromhex(spec["anchor"]["hash"])
        block = self.segment_events(segment)
        for offset, event in enumerate(block):
            event["version"] = spec["first_version"] + offset
            previous = chain_hash(
                previous,
                canonical_event_bytes(
                    self.header["stream_id"],
                    event["version"],
                    event["type"],
                    event["schema_version"],
                    event["data"],
                    event["metadata"],
                ),
            )
            event["hash"] = previous.hex()
        spec["last_version"] = block[-1]["version"]
        spec["last_hash"] = block[-1]["hash"]


def _segment_size(spec: Json) -> int:
    return int(spec["last_version"]) - int(spec["first_version"]) + 1


def _parse(lines: list[str]) -> Exported:
    header, *events = (json.loads(line) for line in lines)
    return Exported(header, events)


@dataclass(frozen=True)
class Played:
    """A two-deal, 2-seat table: deal 2's export has two segments, deal 1's one."""

    deal_two: list[str]
    deal_one: list[str]


@pytest.fixture(scope="module")
def played(database_factory: Any) -> Iterator[Played]:
    name, url = database_factory.create()
    try:
        table_id = asyncio.run(_played_table(url))  # a loop of its own: the module's fixture
        with psycopg.connect(url, autocommit=True) as connection:
            two = audit_database.export_deal(connection, table_id, 2, Requester.operator())
            one = audit_database.export_deal(connection, table_id, 1, Requester.operator())
        yield Played(list(write_lines(two)), list(write_lines(one)))
    finally:
        database_factory.drop(name)


async def _played_table(url: str) -> uuid.UUID:
    store = await EventStore.connect(url, projectors=projectors())
    store.prepare()
    try:
        return await _table_with_nonzero_scores(TableService(store))
    finally:
        await store.close()


async def _table_with_nonzero_scores(service: TableService) -> uuid.UUID:
    # A rule change must change the score, so deal 2 needs a non-zero result: play tables until
    # one has it (almost always the first).
    for _ in range(20):
        table_id = await play_series(service, 2, deals=2)
        totals = [
            event.data["totals"]
            for event in await service.events(table_id)
            if event.type == "DealScored"
        ]
        if totals[1] != [0, 0]:
            return table_id
    raise AssertionError("twenty tables in a row scored deal 2 as a draw")


def _failed(lines: list[str]) -> tuple[str, ...]:
    report = verify_export(lines)
    assert not report.ok
    return report.failed_names()


# -- the edits ------------------------------------------------------------------------------------


def remove_an_event(export: Exported) -> None:
    del export.events[export.index_of("SeatConfirmed")]


def swap_two_events(export: Exported) -> None:
    first = export.index_of("ArrangementCommitted")
    export.events[first], export.events[first + 1] = export.events[first + 1], export.events[first]


def change_a_card_in_a_reveal(export: Exported) -> None:
    reveal = export.events[export.index_of("ArrangementRevealed")]["data"]
    used = {card for row in ("front", "middle", "back") for card in parse_cards(reveal[row])}
    outsider = next(card for card in DECK if card not in used)
    reveal["front"] = [format_cards([outsider]), *reveal["front"][1:]]


def change_a_nonce(export: Exported) -> None:
    reveal = export.events[export.index_of("ArrangementRevealed", 1)]["data"]
    reveal["nonce"] = ("00" if reveal["nonce"][:2] != "00" else "11") + reveal["nonce"][2:]


def change_the_seed(export: Exported) -> None:
    data = export.events[export.index_of("SeedRevealed")]["data"]
    data["seed"] = ("ff" if data["seed"][:2] != "ff" else "ee") + data["seed"][2:]


def change_the_cut(export: Exported) -> None:
    data = export.events[export.index_of("DeckCut")]["data"]
    data["position"] = data["position"] % 51 + 1


def change_a_score(export: Exported) -> None:
    data = export.events[export.index_of("DealScored")]["data"]
    data["totals"] = [data["totals"][0] + 1, data["totals"][1] - 1]
    data["pairs"][0]["delta"] += 1


def change_a_rule_parameter(export: Exported) -> None:
    # Doubling the unit doubles every non-zero score; the header changes alike, as a forger would.
    for rules in (export.events[0]["data"]["rule_set"], export.header["rule_set"]):
        rules["row_unit"] = 2


def insert_an_entropy_contribution(export: Exported) -> None:
    started = export.events[export.index_of("DealStarted")]
    inserted = copy.deepcopy(started)
    inserted["type"] = "EntropyContributed"
    inserted["data"] = {"deal_number": 2, "seat": 1, "entropy": "ab" * 16}
    export.events.insert(export.index_of("DealStarted") + 1, inserted)


def insert_a_second_reveal(export: Exported) -> None:
    position = export.index_of("ArrangementRevealed")
    duplicate = copy.deepcopy(export.events[position])
    data = duplicate["data"]
    data["front"], data["back"] = data["back"][:3], data["front"] + data["back"][3:]
    export.events.insert(position + 1, duplicate)


Edit = Callable[[Exported], None]

# (edit, the segment a forger re-hashes, what must catch the forged version)
CASES: list[tuple[Edit, int, str]] = [
    (remove_an_event, 1, "sequence"),
    (swap_two_events, 1, "sequence"),
    (change_a_card_in_a_reveal, 1, "reveal_commitment[0]"),
    (change_a_nonce, 1, "reveal_commitment[1]"),
    (change_the_seed, 1, "seed_commitment"),
    (change_the_cut, 1, "cut"),
    (change_a_score, 1, "scores"),
    (change_a_rule_parameter, 0, "scores"),
    (insert_an_entropy_contribution, 1, "contributions"),
    (insert_a_second_reveal, 1, "sequence"),
]


@pytest.mark.parametrize(("edit", "segment", "owner"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_plain_edit_breaks_the_chain_at_the_edited_event(
    played: Played, edit: Edit, segment: int, owner: str
) -> None:
    export = _parse(played.deal_two)
    edit(export)
    report = verify_export(export.lines())
    assert not report.ok
    first = report.first_divergence
    assert first is not None
    assert first.name == "chain", report.failed_names()
    assert "was altered" in first.detail


@pytest.mark.parametrize(("edit", "segment", "owner"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_forged_edit_with_the_chain_recomputed_is_named(
    played: Played, edit: Edit, segment: int, owner: str
) -> None:
    export = _parse(played.deal_two)
    edit(export)
    export.rechain(segment)
    failed = _failed(export.lines())
    assert "chain" not in failed  # the forgery holds together as a chain ...
    assert owner in failed, failed  # ... and the check owning the altered fact names it


def test_the_rule_parameter_changed_in_the_header_alone_is_named(played: Played) -> None:
    export = _parse(played.deal_two)
    export.header["rule_set"]["scoop_bonus"] = 3
    assert _failed(export.lines()) == ("header",)


def test_an_inserted_event_without_a_matching_header_fails_coverage(played: Played) -> None:
    export = _parse(played.deal_two)
    insert_an_entropy_contribution(export)
    size = len(export.segment_events(1))
    export.rechain(1)
    export.header["segments"][1]["last_version"] -= 1  # the header as exported
    export.header["segments"][1]["last_hash"] = export.events[-2]["hash"]
    assert size == len(export.segment_events(1))
    assert "coverage" in _failed(export.lines())


def test_a_forged_opening_is_caught_by_the_anchor_of_the_deal_that_hangs_on_it(
    played: Played,
) -> None:
    # Deal 1 follows the opening directly. Split its export into the two segments a deal export
    # would have, then forge the opening (an extra seat) and re-hash it: the deal's anchor, the
    # opening's real last hash, no longer matches the forged chain.
    export = _parse(played.deal_one)
    whole = export.header["segments"][0]
    opening_size = export.index_of("DealStarted")
    last_opening = export.events[opening_size - 1]
    export.header["segments"] = [
        {
            "anchor": whole["anchor"],
            "first_version": 1,
            "last_version": last_opening["version"],
            "last_hash": last_opening["hash"],
        },
        {
            "anchor": {"version": last_opening["version"], "hash": last_opening["hash"]},
            "first_version": last_opening["version"] + 1,
            "last_version": whole["last_version"],
            "last_hash": whole["last_hash"],
        },
    ]
    assert verify_export(export.lines()).ok  # the split itself is a valid export
    export.events[1]["data"]["player_id"] = "mallory"
    export.rechain(0)
    failed = _failed(export.lines())
    assert "chain" not in failed and "anchor" in failed


def test_an_unreadable_file_fails_the_format_check() -> None:
    report = verify_export(["{not json"])
    assert report.failed_names() == ("format",)
    assert verify_export([]).failed_names() == ("format",)
    assert verify_export(['{"format": "something else"}']).failed_names() == ("format",)


def test_the_report_explains_the_first_divergence_in_words(played: Played) -> None:
    export = _parse(played.deal_two)
    change_the_cut(export)
    export.rechain(1)
    report = verify_export(export.lines())
    first = report.first_divergence
    assert first is not None and first.name == "cut" and first.deal == 2
    assert "cutting at position" in first.detail
    as_json = report.to_dict()
    assert as_json["ok"] is False
    assert as_json["first_divergence"]["name"] == "cut"

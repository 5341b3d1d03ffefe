"""Writes the sample exports the page's verifier is tested on (web/test/export.test.ts and
web/test/series.test.ts), made by sapsam itself without a database, and what `sapsam audit verify`
says of each: the page must say the same.

* table.jsonl, deal2.jsonl: a 3-seat table of two deals, whole and deal 2 alone;
* series.jsonl, series_deal4.jsonl: a whole short series with surrender and a voided deal
  (sample_series.py), whole and its last deal alone;
* naturals.jsonl: the same at a capsa_susun table (naturals declared, surrender), series of 2;

each anchored by a checkpoint signed with a fixed test key (server.vkey), with the verdict with and
without the key pinned (verdicts.json). tampered/*.jsonl are re-chained forgeries of them (each
event's hash recomputed after the change, the proofs dropped, as a careful forger would), with the
verdict and the failed checks (`name@deal`) sapsam gives each (tampered.json). Regenerate (seeds
are random, so the files change):

    python web/test/data/make_exports.py
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sapsam.audit.export_format import Requester, export_text
from sapsam.audit.export_selection import select_deal, select_table
from sapsam.audit.sample_anchored import SAMPLE_TIME, AnchoredLog, anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.chain import GENESIS_HASH, canonical_event_bytes, chain_hash
from sapsam.log.checkpoint import sapsam_checkpoint, sign_checkpoint
from sapsam.log.cosignature import cosign
from sapsam.log.receipt import receipt_of, sign_receipt
from sapsam.log.records import RecordedEvent
from sapsam.log.signed_note import COSIGNATURE_V1, NoteSigner
from sapsam.rules.presets import preset

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from sample_series import series_with_void  # noqa: E402

TABLE_ID = uuid.UUID("3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8")
SERIES_ID = uuid.UUID("5e71e5a0-0d1d-4c2b-9a3e-7b6c5d4e3f21")
NATURALS_ID = uuid.UUID("0a7c1e2d-3b4f-4a5e-8c6d-9e0f1a2b3c4d")

Events = list[dict[str, Any]]


def main() -> None:
    signer = NoteSigner.from_seed("sapsam/web-tests.example", bytes(range(32)))
    other = recorded_stream(2, deals=1)  # a second table, so the log interleaves streams
    series = series_with_void(SERIES_ID)
    naturals = series_with_void(
        NATURALS_ID, dataclasses.replace(preset("capsa_susun"), series_length=2), deals=3
    )
    log = anchored_log(
        [recorded_stream(3, deals=2, table_id=TABLE_ID), other, series, naturals], signer
    )
    operator = Requester.operator()
    files = {
        "table.jsonl": export_text(log.anchored(select_table(log.streams[0], operator))),
        "deal2.jsonl": export_text(log.deal_export(0, 2)),
        "series.jsonl": export_text(log.anchored(select_table(log.streams[2], operator))),
        "series_deal4.jsonl": export_text(log.deal_export(2, 4)),
        "naturals.jsonl": export_text(log.anchored(select_table(log.streams[3], operator))),
    }
    (HERE / "server.vkey").write_text(signer.verifier.vkey() + "\n", encoding="utf-8")
    verdicts: dict[str, dict[str, str]] = {}
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
        verdicts[name] = {
            "with_key": _report(HERE / name, "--server-key", str(HERE / "server.vkey"))[0],
            "without_key": _report(HERE / name)[0],
        }
    (HERE / "verdicts.json").write_text(json.dumps(verdicts, indent=2) + "\n", encoding="utf-8")

    (HERE / "tampered").mkdir(exist_ok=True)
    outcomes: dict[str, dict[str, Any]] = {}
    for name, (base, change) in FORGERIES.items():
        path = HERE / "tampered" / f"{name}.jsonl"
        path.write_text(_rechained(files[base], change), encoding="utf-8")
        verdict, failed = _report(path)
        outcomes[name] = {"file": f"tampered/{name}.jsonl", "verdict": verdict, "failed": failed}
    (HERE / "tampered.json").write_text(json.dumps(outcomes, indent=2) + "\n", encoding="utf-8")
    _consistency(log)
    _receipts(log)
    _open_face(signer)


def _open_face(signer: NoteSigner) -> None:
    """Open-face sets played by the domain's test driver (tests/domain/open_face_deals.py), each
    of which the page must pass as `sapsam audit verify` does: a whole ofc_classic set of three
    seats, a set with a Fantasyland, a Pineapple set; the moves the service makes for a seat
    (docs/rules.md §8.6-§8.7): forced moves, a timeout under 001's policy (dead for the set) and
    under 003's (the set ends early), a Fantasyland hand timed out and set by the service, a
    Pineapple seat timed out (its discard made for it); a 2-7 Pineapple set (§8.12); the
    operator's forced timeout under 003's policy with no move limit; a voided deal and a
    replaced seat; a committed Fantasyland hand never opened (an outage extending its reveal
    deadline, then timed out dead); a Fantasyland set and a Pineapple set whose seat 0 signed
    its own moves (player_signature). The sets with a timeout also anchored by a checkpoint of
    ``signer`` (open_face_anchored.json: the verdict with and without the key pinned; deal
    exports of deals 1 and 2 too). Then the forgeries of make_open_face_tampered.py."""
    sys.path[:0] = [str(HERE.parents[2] / "tests" / "domain"), str(HERE.parents[2] / "tests")]
    from open_face_deals import (
        DrivenTable,
        export_lines,
        fantasyland_table,
        open_face_table,
    )
    from test_open_face_audit_signatures import _signed
    from test_open_face_reveal_deadline import _committed_deal

    from sapsam.domain.commands import ReplaceSeat, VoidDeal
    from sapsam.domain.open_face.commands import PlaceForSeat
    from sapsam.domain.open_face.table_state import OpenFaceTablePhase
    from sapsam.domain.table_deadlines import UnservedWindow

    def played(table: DrivenTable, first: dict[str, Any] | None = None, **rest: Any) -> DrivenTable:
        """The set played out: the first deal with ``first``'s options, the others with ``rest``."""
        options = first
        while table.state.phase is not OpenFaceTablePhase.SERIES_COMPLETE:
            table.start_deal()
            table.play_deal(solver=True, **(rest if options is None else options))
            options = None
        return table

    def fantasyland_timeout() -> DrivenTable:
        """Seat 0 earns Fantasyland in deal 1 and lets its time run out setting it in deal 2."""
        table = fantasyland_table(seats=2, move_seconds=30)
        return played(table, {"late": {0}})

    def operator_timeout() -> DrivenTable:
        """003 without move limits: the operator's ForceSeatTimeout of the first seat on turn,
        the rest of its hand made for it (named by nobody), the set ended after the deal."""
        table = open_face_table("ofc_russian", 3)
        table.start_deal()
        table.run_street(now_ms=0)
        turn = table.state.play.turn if table.state.play is not None else None
        assert turn is not None
        table.run(PlaceForSeat(table.cards[0][turn], 1_000, True, forced_seat=turn))
        table.play_deal(solver=True)
        return played(table)

    def outage() -> DrivenTable:
        """Seat 0 earns Fantasyland in deal 1; in deal 2 a server restart covers its hand's and
        seat 1's placement's deadlines (both extended, docs/events.md), seat 0 then sets its
        hand and seat 1 times out at the extended deadline; the rest of the set played."""
        window = UnservedWindow(10_000, 45_000, "server_restart")
        table = fantasyland_table(seats=2, move_seconds=30)
        table.start_deal()
        table.run_street(now_ms=1_000)
        play = table.state.play
        assert play is not None and play.turn is not None
        table.run(PlaceForSeat(table.cards[0][play.turn], 46_000, True, (window,), 30_000))
        table.commit(0)
        table.play_deal(solver=True, late={play.turn})
        return played(table)

    def reveal_timeout() -> DrivenTable:
        """Deal 2: seat 0's Fantasyland hand committed, never opened; an outage extends the
        reveal deadline (stage revealing), then the hand is timed out dead and the service sets
        it with the seed; the rest of the set played."""
        table = _committed_deal()
        window = UnservedWindow(20_000, 50_000, "server_restart")
        table.run(PlaceForSeat((), 51_000, True, (window,), 30_000))
        table.run(PlaceForSeat((), 80_000, True, (window,), 30_000))
        table.play_deal()  # the seed's reveal and the score
        return played(table)

    def discard_outage() -> DrivenTable:
        """Pineapple: the discards' deadline fell in an outage (extended, stage discarding),
        the seat's discards opened by the service past the extended deadline."""
        table = open_face_table("pineapple", 3, 30)
        table.unopened = {2}
        table.discard_outage_ms = 60_000
        return played(table)

    def voided_and_replaced() -> DrivenTable:
        """001: seat 1 times out in deal 1 (dead for the set); deal 2 is voided after its first
        street and seat 1 is given to another player, whose hand is not dead; the set goes on."""
        table = open_face_table("ofc_classic", 3, 30)
        table.start_deal()
        table.play_deal(solver=True, late={1})
        table.start_deal()
        table.run_street(now_ms=1_000)
        table.run(VoidDeal("a fault", table.seed))
        table.run(ReplaceSeat(1, "eve"))
        return played(table)

    folder = HERE / "open_face"
    folder.mkdir(exist_ok=True)
    verdicts: dict[str, str] = {}
    for name, table in [
        ("ofc_classic.jsonl", played(open_face_table("ofc_classic", 3))),
        ("fantasyland.jsonl", played(fantasyland_table())),
        ("pineapple.jsonl", played(open_face_table("pineapple", 3))),
        ("forced.jsonl", played(open_face_table("ofc_classic", 3), forced=True)),
        ("timeout.jsonl", played(open_face_table("ofc_classic", 3, 30), {"late": {1}})),
        ("timeout_003.jsonl", played(open_face_table("ofc_russian", 3, 30), {"late": {2}})),
        ("fantasyland_timeout.jsonl", fantasyland_timeout()),
        ("pineapple_timeout.jsonl", played(open_face_table("pineapple", 3, 30), {"late": {1}})),
        ("pineapple_2_7.jsonl", played(open_face_table("pineapple_2_7", 3), forced=True)),
        ("operator_timeout_003.jsonl", operator_timeout()),
        ("outage.jsonl", outage()),
        ("discard_outage.jsonl", discard_outage()),
        ("voided_replaced.jsonl", voided_and_replaced()),
        ("reveal_timeout.jsonl", reveal_timeout()),
        ("signed_fantasyland.jsonl", played(fantasyland_table())),
        ("signed_pineapple.jsonl", played(open_face_table("pineapple", 3))),
    ]:
        # The signed sets: seat 0's player had a key and signed each of its own moves.
        events = _signed(list(table.events)) if name.startswith("signed_") else table.events
        (folder / name).write_text("\n".join(export_lines(events)) + "\n", encoding="utf-8")
        verdicts[name] = _report(folder / name)[0]
    (HERE / "open_face.json").write_text(json.dumps(verdicts, indent=2) + "\n", encoding="utf-8")
    anchored: dict[str, dict[str, str]] = {}
    for name in ("timeout.jsonl", "timeout_003.jsonl", "fantasyland_timeout.jsonl"):
        lines = (folder / name).read_text(encoding="utf-8").splitlines()[1:]
        log = anchored_log([_recorded(lines)], signer)
        path = folder / f"anchored_{name}"
        path.write_text(
            export_text(log.anchored(select_table(log.streams[0], Requester.operator()))),
            encoding="utf-8",
        )
        # A deal export: deal 1 holds the table's opening (re-decided, anchored); deal 2 starts
        # from what deal 1 decided, which it does not hold (not covered, never anchored).
        exports = {path: path.name}
        if name == "timeout.jsonl":
            for deal in (1, 2):
                deal_path = folder / f"anchored_deal{deal}_{name}"
                deal_path.write_text(export_text(log.deal_export(0, deal)), encoding="utf-8")
                exports[deal_path] = deal_path.name
        for path in exports:
            anchored[path.name] = {
                "with_key": _report(path, "--server-key", str(HERE / "server.vkey"))[0],
                "without_key": _report(path)[0],
            }
    (HERE / "open_face_anchored.json").write_text(
        json.dumps(anchored, indent=2) + "\n", encoding="utf-8"
    )
    from make_open_face_tampered import main as open_face_forgeries

    open_face_forgeries()


def _recorded(lines: list[str]) -> list[RecordedEvent]:
    """An exported stream's event lines as the store recorded them."""
    stream = "table-" + str(json.loads(lines[0])["data"]["table_id"])
    recorded = []
    for line in lines:
        e = json.loads(line)
        recorded.append(
            RecordedEvent(
                e["position"],
                stream,
                e["version"],
                e["type"],
                e["schema_version"],
                e["data"],
                e["metadata"],
                bytes.fromhex(e["hash"]),
            )
        )
    return recorded


def _receipts(log: AnchoredLog) -> None:
    """Kept receipts (audit.md §4.6) of the series' stream, three events each: the SDK's JSON
    lines, and one bare note signed by another key; with sapsam's verdict and `receipts` status
    for the whole series, its last deal, and a re-chained forgery."""
    events = log.streams[2]
    notes = [
        sign_receipt(receipt_of(log.signer.name, events[i : i + 3]), log.signer)
        for i in range(0, len(events), 3)
    ]
    folder = HERE / "receipts"
    folder.mkdir(exist_ok=True)
    lines = [json.dumps({"signed_note": note}) for note in notes]
    (folder / "kept.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    stranger = NoteSigner.from_seed(log.signer.name, bytes(range(1, 33)))
    forged = sign_receipt(receipt_of(log.signer.name, events[:2]), stranger)
    (HERE / "receipts-stranger.receipt").write_text(forged, encoding="utf-8")
    cases: dict[str, dict[str, Any]] = {}
    for export, kept in [
        ("series.jsonl", "receipts"),
        ("series_deal4.jsonl", "receipts"),
        ("tampered/series_totals.jsonl", "receipts"),
        ("series.jsonl", "receipts-stranger.receipt"),
    ]:
        report = _json_report(
            HERE / export, "--server-key", str(HERE / "server.vkey"), "--receipts", str(HERE / kept)
        )
        status = next(c["status"] for c in report["checks"] if c["name"] == "receipts")
        cases[f"{export} {kept}"] = {"verdict": report["verdict"], "receipts": status}
    (HERE / "receipts.json").write_text(json.dumps(cases, indent=2) + "\n", encoding="utf-8")


def _consistency(log: AnchoredLog) -> None:
    """`--checkpoint` (audit.md §4.5): deal 2 of the first table with the proof from a smaller tree
    the reader holds, the same file against a reader's tree no proof links, and a fork (the
    reader's tree of the export's size with another root, signed by the same key)."""
    size = log.tree.size
    known = size - 7
    linked = export_text(log.anchored(log.deal_export(0, 2), known_size=known))
    (HERE / "consistency").mkdir(exist_ok=True)
    fork_root = hashlib.sha256(b"another history").digest()
    notes = {
        "older.note": log.checkpoint_note(known),
        "unlinked.note": log.checkpoint_note(size - 3),
        "fork.note": sign_checkpoint(
            sapsam_checkpoint(log.signer.name, size, fork_root, SAMPLE_TIME), log.signer
        ),
    }
    (HERE / "consistency" / "deal2.jsonl").write_text(linked, encoding="utf-8")
    cases: dict[str, dict[str, Any]] = {}
    for name, note in notes.items():
        (HERE / "consistency" / name).write_text(note, encoding="utf-8")
        report = _json_report(
            HERE / "consistency" / "deal2.jsonl",
            "--server-key",
            str(HERE / "server.vkey"),
            "--checkpoint",
            str(HERE / "consistency" / name),
        )
        status = next(c["status"] for c in report["checks"] if c["name"] == "consistency")
        cases[name] = {
            "verdict": report["verdict"],
            "consistency": status,
            "anchor": report["anchor"],
        }
    (HERE / "consistency.json").write_text(json.dumps(cases, indent=2) + "\n", encoding="utf-8")
    _witnessed(log)


def _witnessed(log: AnchoredLog) -> None:
    """A witnessed anchor (audit.md §4.5): deal 2 of the first table anchored on a checkpoint a
    witness cosigned, and on a smaller one with a proof to the reader's larger, cosigned tree;
    sapsam's verdict and anchor with and without the witness key pinned."""
    witness = NoteSigner.from_seed("witness.example/w", bytes([5]) * 32, COSIGNATURE_V1)
    folder = HERE / "witnessed"
    folder.mkdir(exist_ok=True)
    (folder / "witness.vkey").write_text(witness.verifier.vkey() + "\n", encoding="utf-8")
    size = log.tree.size

    def cosigned(note: str) -> str:
        return note + cosign(note, witness, SAMPLE_TIME + 100).line()

    lines = export_text(log.deal_export(0, 2)).splitlines()
    header = json.loads(lines[0])
    # the header is not hashed (§3): the export's checkpoint replaced by the cosigned one
    header["transparency"]["checkpoint"] = cosigned(header["transparency"]["checkpoint"])
    (folder / "deal2.jsonl").write_text(
        "\n".join([json.dumps(header, sort_keys=True, separators=(",", ":")), *lines[1:]]) + "\n",
        encoding="utf-8",
    )
    # The export anchored on a smaller tree, the reader holding the whole one, cosigned.
    smaller = size - 4
    operator = Requester.operator()
    (folder / "deal2-smaller.jsonl").write_text(
        export_text(log.anchored(select_deal(log.streams[0], 2, operator), smaller, size)),
        encoding="utf-8",
    )
    (folder / "reader.note").write_text(cosigned(log.checkpoint_note(size)), encoding="utf-8")
    server = ("--server-key", str(HERE / "server.vkey"))
    pin_witness = ("--witness-key", str(folder / "witness.vkey"))
    reader = ("--checkpoint", str(folder / "reader.note"))
    cases: dict[str, dict[str, Any]] = {}
    for name, file, args in [
        ("witnessed", "deal2.jsonl", (*server, *pin_witness)),
        ("witness not pinned", "deal2.jsonl", server),
        ("yours, larger and witnessed", "deal2-smaller.jsonl", (*server, *pin_witness, *reader)),
        ("yours, witness not pinned", "deal2-smaller.jsonl", (*server, *reader)),
    ]:
        report = _json_report(folder / file, *args)
        cases[name] = {
            "file": f"witnessed/{file}",
            "witness": "--witness-key" in args,
            "reader": "--checkpoint" in args,
            "verdict": report["verdict"],
            "anchor": report["anchor"],
        }
    (HERE / "witnessed.json").write_text(json.dumps(cases, indent=2) + "\n", encoding="utf-8")


def _of(
    events: Events, type_name: str, deal: int | None = None, seat: int | None = None
) -> dict[str, Any]:
    return next(
        e
        for e in events
        if e["type"] == type_name
        and (deal is None or e["data"].get("deal_number") == deal)
        and (seat is None or e["data"].get("seat") == seat)
    )


def _swap_announcements(events: Events) -> None:
    first = _of(events, "SurrenderAnnounced", deal=3, seat=0)
    second = _of(events, "SurrenderAnnounced", deal=3, seat=1)
    i, j = events.index(first), events.index(second)
    events[i], events[j] = second, first


def _declare_after_commit(events: Events) -> None:
    declared = _of(events, "NaturalDeclared", deal=1, seat=0)
    committed = _of(events, "ArrangementCommitted", deal=1, seat=0)
    i, j = events.index(declared), events.index(committed)
    events[i], events[j] = committed, declared


def _drop(type_name: str) -> Callable[[Events], None]:
    return lambda events: events.remove(_of(events, type_name))


def _set(type_name: str, deal: int | None, **changes: Any) -> Callable[[Events], None]:
    def change(events: Events) -> None:
        data = _of(events, type_name, deal=deal)["data"]
        for key, value in changes.items():
            data[key] = value(data[key]) if callable(value) else value

    return change


def _retype(old: str, new: str) -> Callable[[Events], None]:
    def change(events: Events) -> None:
        _of(events, old)["type"] = new

    return change


def _shift_totals(totals: list[int]) -> list[int]:
    return [totals[0] + 1, totals[1] - 1, *totals[2:]]


def _swap_places(standings: list[dict[str, int]]) -> list[dict[str, int]]:
    return [dict(s, place={1: 2, 2: 1}.get(s["place"], s["place"])) for s in standings]


FORGERIES: dict[str, tuple[str, Callable[[Events], None]]] = {
    "surrender_out_of_turn": ("series.jsonl", _swap_announcements),
    "announcing_order": ("series.jsonl", _set("AnnouncementsOpened", 3, order=lambda o: o[::-1])),
    "voided_seed": ("series.jsonl", _set("DealVoided", 2, seed="00" * 32)),
    "series_totals": ("series.jsonl", _set("DealScored", 3, series_totals=_shift_totals)),
    "standings_places": ("series.jsonl", _set("SeriesCompleted", None, standings=_swap_places)),
    "deals_played": ("series.jsonl", _set("SeriesCompleted", None, deals_played=4)),
    "series_not_completed": ("series.jsonl", _drop("SeriesCompleted")),
    "unknown_type": ("series.jsonl", _retype("RevealsOpened", "RevealsOpen")),
    "wrong_deal_number": ("series.jsonl", _set("DeckCut", 3, deal_number=2)),
    "deal4_standings": (
        "series_deal4.jsonl",
        _set("SeriesCompleted", None, standings=_swap_places),
    ),
    "natural_declared_after_commit": ("naturals.jsonl", _declare_after_commit),
    "natural_revealed_changed": ("naturals.jsonl", _set("NaturalRevealed", 3, natural="dragon")),
    "dealer_moved": ("deal2.jsonl", _set("DealStarted", 2, dealer=lambda d: (d + 1) % 3)),
    "table_series_totals": ("table.jsonl", _set("DealScored", 1, series_totals=_shift_totals)),
}


def _rechained(
    text: str, change: Callable[[Events], None], header: dict[str, Any] | None = None
) -> str:
    """``text`` with ``change`` applied to its events, every hash recomputed from the anchors and
    the versions renumbered (an event removed or moved), without the proofs. ``header``: the
    file's header as already read (and changed: a rule parameter), else read from ``text``."""
    lines = text.splitlines()
    if header is None:
        header = json.loads(lines[0])
    events: Events = [json.loads(line) for line in lines[1:]]
    segments = header["segments"]
    owner = [
        k for k, s in enumerate(segments) for _ in range(s["last_version"] - s["first_version"] + 1)
    ]
    for e, k in zip(events, owner, strict=True):
        e["_segment"] = k
        e.pop("inclusion", None)
    change(events)
    header.pop("transparency", None)
    for k, segment in enumerate(segments):
        previous = bytes.fromhex(segment["anchor"]["hash"]) if k else GENESIS_HASH
        version = segment["first_version"]
        for e in (e for e in events if e["_segment"] == k):
            e["version"] = version
            version += 1
            previous = chain_hash(
                previous,
                canonical_event_bytes(
                    header["stream_id"],
                    e["version"],
                    e["type"],
                    e["schema_version"],
                    e["data"],
                    e["metadata"],
                    checked=False,
                ),
            )
            e["hash"] = previous.hex()
        segment["last_version"], segment["last_hash"] = version - 1, previous.hex()
    for e in events:
        del e["_segment"]
    lines = [json.dumps(x, sort_keys=True, separators=(",", ":")) for x in [header, *events]]
    return "\n".join(lines) + "\n"


def _json_report(path: Path, *args: str) -> dict[str, Any]:
    cli = "from sapsam.cli import main; main()"
    command = [sys.executable, "-c", cli, "audit", "verify", str(path), "--json", *args]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def failed_checks(report: dict[str, Any]) -> list[str]:
    """The checks of a ``--json`` report that failed or were skipped, as the files record them:
    ``name@deal``, or ``name`` for a check of no one deal (tests/audit/test_web_sample_verdicts.py
    reads them the same way)."""
    return [
        c["name"] + ("" if c["deal"] is None else f"@{c['deal']}")
        for c in report["checks"]
        if c["status"] in ("failed", "skipped")
    ]


def _report(path: Path, *args: str) -> tuple[str, list[str]]:
    report = _json_report(path, *args)
    return str(report["verdict"]), failed_checks(report)


if __name__ == "__main__":
    main()

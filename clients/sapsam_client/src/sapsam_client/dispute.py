"""Disputes: take one of your deals home over the API and verify it here, not on the server.

A report from the server that dealt the cards proves little on its own, so the SDK fetches the
deal's export (``AuditService.ExportDeal``, which a seated player may call once the deal is
scored) and verifies it with the ``sapsam`` package's own offline verifier
(``sapsam.audit.verify_export``: pure code, no database, no network; docs/audit.md §4). The
verifier comes with the ``audit`` extra, ``pip install 'sapsam-client[audit]'``: the same
``sapsam`` distribution the ``rules`` extra installs, imported only when a dispute is verified
(the client imports no server code at module level; tests/clients/test_client_independence.py).
Without it, :class:`VerifierUnavailableError` says how to install it; the SDK never falls back to
the server's own ``VerifyDeal``, which would be the server vouching for itself.

The verdict is one of docs/audit.md §4.5's three, anchored against a server key:

1. the keys given (``server_keys``: vkeys you got out of band, e.g. from the operator);
2. else the keys the receipts folder pinned when you first played on this server
   (``<folder>/.server-keys``, ``sapsam_client.receipts.ReceiptFolder``);
3. else the key the server gives now (``GetServerKey``), pinned in the receipts folder if there
   is one: this shows the log is the one the server signed, not that it is the log you were
   shown before; the verdict says which key it used.

The receipts the SDK kept for this table (``<folder>/table-<id>.jsonl``) are checked against the
export too (docs/audit.md §4.6): a receipted event the export changed or lost fails the verdict.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from sapsam_client.connection import deal_number, table_id
from sapsam_client.receipts import ReceiptFolder

INSTALL_HINT: Final = (
    "verifying a deal needs the sapsam package's offline verifier: "
    "pip install 'sapsam-client[audit]' (it installs the sapsam distribution; nothing of it "
    "runs a server or opens a database)"
)
ANCHORED: Final = "anchored"
INTERNALLY_CONSISTENT_ONLY: Final = "internally_consistent_only"
FAILED: Final = "failed"

# What each check confirms, in words a player reads (docs/audit.md §4.1-4.6 say it precisely).
CHECK_WORDS: Final = {
    "format": "the file is a well-formed export",
    "chain": "each event's hash links it to the one before (the record was not edited)",
    "anchor": "the deal hangs on the table's own history",
    "coverage": "the file holds every event of the deal, and nothing else",
    "decode": "every event is one the game knows, well formed",
    "header": "the file's summary agrees with its events",
    "opening": "the table's opening (rules, seats) is the one recorded",
    "dealer_lot": "the first dealer was drawn by the committed lot",
    "sequence": "the deal's events came in the game's order",
    "dealer_rotation": "the deal went to the right dealer",
    "dealer": "dealing from the dealer's left gives the hands recorded",
    "seed_commitment": "the published seed is the one the server committed to before the cut",
    "contributions": "the seed and the players' entropy give the deck recorded",
    "cut": "cutting at the recorded position gives the cut deck recorded",
    "reveal_commitment": "the revealed hand is what the seat committed to",
    "player_signature": "the player's signature on their moves verifies",
    "fouls": "the reveals judged against the dealt hands give the fouls recorded",
    "solver_arrangement": "the hand the server arranged for a seat is the solver's",
    "reveal_fouls": "each reveal's foul was judged by the rules",
    "scores": "the scores follow from the revealed hands and the rules",
    "scored_arrangements": "the hands scored are the hands revealed",
    "series_totals": "the running totals add up",
    "standings": "the standings follow from the totals",
    "checkpoint": "the log's checkpoint is signed by the server key",
    "inclusion": "every event is in that signed checkpoint",
    "consistency": "the checkpoints agree with each other",
    "receipts": "your kept receipts match the export",
}


class NotThisDealError(ValueError):
    """The export given is, by its own header, of another table or deal than the one named."""


def check_export_names(deal: str, export: str) -> None:
    """:class:`NotThisDealError` when ``export``'s header names another table, or deals without
    ``deal``'s number. A header that does not parse is left to the verifier (a failed check)."""
    try:
        header = json.loads(export.split("\n", 1)[0])
        table, deals = header["table_id"], header["deals"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return
    if table != str(table_id(deal)) or deal_number(deal) not in deals:
        raise NotThisDealError(
            f"the export is of tables/{str(table)[:40]}"
            f" {'deal' if len(deals) == 1 else 'deals'} {str(deals)[:40]}, not {deal}"
        )


class VerifierUnavailableError(ImportError):
    """The ``sapsam`` package (the ``audit`` extra) is not installed."""


def verifier_module(name: str) -> ModuleType:
    """``sapsam.<name>`` of the offline verifier, or :class:`VerifierUnavailableError`."""
    try:
        return importlib.import_module(f"sapsam.{name}")
    except ImportError as error:
        raise VerifierUnavailableError(INSTALL_HINT) from error


@dataclass(frozen=True)
class CheckOutcome:
    """One check of the verification: its name, deal, status and, if it failed, why."""

    name: str
    status: str
    """``passed``, ``failed``, ``skipped``, ``pending`` or ``not_covered``."""
    detail: str = ""
    expected: str = ""
    found: str = ""
    deal: int | None = None

    @property
    def words(self) -> str:
        """What the check confirms, in plain words (its name when there are none)."""
        base = self.name.split("[", 1)[0]  # player_signature[1]: the seat's own check
        return CHECK_WORDS.get(base, base.replace("_", " "))


@dataclass(frozen=True)
class DisputeVerdict:
    """What the local verification of one deal says."""

    deal: str
    verdict: str
    """:data:`ANCHORED`, :data:`INTERNALLY_CONSISTENT_ONLY` or :data:`FAILED`."""
    verdict_line: str
    """The verifier's own verdict line (as ``sapsam audit verify`` prints it)."""
    checks: tuple[CheckOutcome, ...]
    key_source: str
    """Where the server key came from, in words; empty when there was none."""
    receipts: int
    """Receipts of this table kept in the receipts folder and checked (0: none)."""
    report_text: str
    """The full report as ``sapsam audit verify FILE --plain`` prints it: the players, one line
    per check, an account of each deal (the hands, every pair row by row with the points and
    bonuses, the running totals; only when no check failed) and the verdict."""

    @property
    def failures(self) -> tuple[CheckOutcome, ...]:
        """The checks that failed, in the order they ran."""
        return tuple(check for check in self.checks if check.status == "failed")

    @property
    def exit_status(self) -> int:
        """As ``sapsam audit verify``: 0 anchored, 4 internally consistent only, 1 failed."""
        return {ANCHORED: 0, INTERNALLY_CONSISTENT_ONLY: 4}.get(self.verdict, 1)

    def explain(self) -> str:
        """The verdict in plain words, a few lines."""
        number = deal_number(self.deal)
        table = f"tables/{table_id(self.deal)}"
        if self.verdict == FAILED:
            lines = [f"Deal {number} of {table} FAILED verification. What failed:"]
            for check in self.failures:
                where = f"deal {check.deal}: " if check.deal is not None else ""
                lines.append(f"  - {where}{check.words} ({check.name}): {check.detail}")
                if check.expected or check.found:
                    lines.append(f"      expected {check.expected or '-'}")
                    lines.append(f"      found    {check.found or '-'}")
            lines.append("Keep the export and your receipts: they are your evidence.")
            return "\n".join(lines)
        lines = [
            f"Deal {number} of {table}: every check holds: the deck came from the seed the "
            "server committed to before the cut, every hand revealed is the one its seat committed"
            " to (a seat that revealed none is scored as the rules say), and the scores and"
            " totals follow from the table's rules."
        ]
        if self.verdict == ANCHORED:
            lines.append(
                f"ANCHORED: every event is in a checkpoint of the log signed by {self.key_source}"
                ", so the server cannot change this deal later without being caught."
            )
        else:
            why = next(
                (
                    check.detail
                    for check in self.checks
                    if check.name in ("checkpoint", "inclusion", "consistency")
                    and check.status == "not_covered"
                ),
                "no server key to check it against",
            )
            lines.append(
                f"INTERNALLY CONSISTENT ONLY: nothing outside the file vouches for it yet ({why})."
            )
        if self.receipts:
            kept = (
                "The receipt you kept of this table agrees"
                if self.receipts == 1
                else f"The {self.receipts} receipts you kept of this table agree"
            )
            lines.append(f"{kept} with it.")
        return "\n".join(lines)


def verify_deal_export(
    deal: str,
    export: str,
    server_keys: Sequence[str],
    key_source: str = "",
    receipts: ReceiptFolder | None = None,
    player_pins: Sequence[str] = (),
) -> DisputeVerdict:
    """Verify ``export`` (the text ExportDeal returned for ``deal``) here, anchored under
    ``server_keys`` (vkeys; none: at best internally consistent only) and checked against the
    receipts ``receipts`` kept for the deal's table. ``player_pins`` (``PLAYER=KEY``, as
    ``sapsam audit verify --player-key``) add a check that each pinned player's signed moves
    are by its own key: a server that re-signed them with a key of its own fails it."""
    check_export_names(deal, export)
    verifier = verifier_module("audit.verifier")
    anchoring = verifier_module("audit.anchoring")
    signed_note = verifier_module("log.signed_note")
    report_module = verifier_module("audit.report")
    keys = tuple(signed_note.VerifierKey.parse(key) for key in server_keys)
    # The export is parsed once: the checks, the pins, the receipts and the account told.
    parsed, report = verifier.read_and_verify(
        export.split("\n"), trust=anchoring.Trust(server_keys=keys)
    )
    if player_pins:
        pinned = verifier_module("audit.pinned_player_keys")
        report = pinned.with_pinned_keys(report, parsed, player_pins)
    kept = 0
    if receipts is not None and keys:
        report, kept = _with_receipts(report, parsed, keys, receipts, f"table-{table_id(deal)}")
    return DisputeVerdict(
        deal=deal,
        verdict=str(report.verdict.value),
        verdict_line=report_module.verdict_line(report),
        checks=tuple(_outcome(check) for check in report.checks),
        key_source=key_source if keys else "",
        receipts=kept,
        # As `sapsam audit verify FILE --plain` prints it: the players, the checks, each deal's
        # account row by row, the verdict.
        report_text=str(verifier_module("audit.deal_account").told_report(report, parsed)),
    )


def _with_receipts(
    report: Any, parsed: Any, keys: tuple[Any, ...], folder: ReceiptFolder, stream: str
) -> tuple[Any, int]:
    """``report`` with the ``receipts`` check of the kept receipts of ``stream`` checked against
    the export ``parsed`` (None: unreadable), and how many receipts were kept (none kept, or an
    unreadable export, whose report says so already: the report unchanged)."""
    path: Path = folder.path_for(stream)
    if parsed is None or not path.is_file():
        return report, 0
    receipts_module = verifier_module("audit.receipts")
    found, unreadable = receipts_module.parse_kept_receipts(
        path.read_text(encoding="utf-8"), str(path)
    )
    result = receipts_module.check_receipts(parsed, found, keys)
    result = dataclasses.replace(result, problems=(*unreadable, *result.problems))
    return report.with_checks(result.checks()), len(found)


def _outcome(check: Any) -> CheckOutcome:
    return CheckOutcome(
        name=str(check.name),
        status=str(check.status.value),
        detail=str(check.detail),
        expected=str(check.expected),
        found=str(check.found),
        deal=check.deal,
    )

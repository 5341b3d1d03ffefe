"""`sapsam serve` for the browser's Fantasyland test (e2e/fantasyland.spec.ts) only: the first deal
of every ``ofc_classic`` table is dealt from a seed chosen so that seat 0 can earn Fantasyland,
as `sapsam demo --preset ofc_classic` chooses one (``sapsam.fairness.fantasyland_deals``:
no entropy, the deck cut at ``CUT``, which is where sapsam-bot cuts deal 1 and where the test
pins the page's cut). The rows that earn it are written, one JSON line a table, to the file
``SAPSAM_E2E_CHOSEN_ROWS`` names, for the test to place. The seed is committed, revealed and
verified as any other; every other deal's is the server's own. Never for play: a server that
chooses its seeds deals what it likes.

Usage: python serve_fantasyland.py SERVE-ARGUMENTS... (as `sapsam serve`'s).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any, Final

from sapsam import fairness
from sapsam.app.deal_commands import DealCommands
from sapsam.cli import main
from sapsam.domain.open_face.table_state import OpenFaceTable
from sapsam.fairness.fantasyland_deals import earning_seed

CUT: Final = 2
"""Where deal 1's deck is cut: sapsam-bot (no --seat) cuts it at 1 + (0 + 1) % 51; the test
makes the page cut there too."""
EARNER: Final = 0
"""The seat dealt cards that can earn Fantasyland: the table's creator, who sits down first."""

_start_deal = DealCommands.start_deal


async def _start_chosen_deal(
    self: DealCommands, table_id: uuid.UUID, actor: str, request_id: str, **terms: Any
) -> Any:
    state = await self.load(table_id)
    if (
        not isinstance(state, OpenFaceTable)
        or state.rules.name != "ofc_classic"
        or state.deal_number != 0
        or state.first_dealer is None
    ):
        return await _start_deal(self, table_id, actor, request_id, **terms)
    seed, rows = earning_seed(
        table_id,
        state.first_dealer,
        EARNER,
        streets=state.rules.street_cards,
        cut=CUT,
        label=f"sapsam web e2e fantasyland {table_id}",
        seats=state.seat_count,
        entry_rank=state.rules.fantasyland_entry_rank or "Q",
        attempts=2000,
    )

    def once() -> bytes:  # read by start_deal before its first await: this call's seed only
        self.deal_seeds = fairness.new_seed
        return seed

    self.deal_seeds = once
    outcome = await _start_deal(self, table_id, actor, request_id, **terms)
    line = {"table": f"tables/{table_id}", "rows": [[str(card) for card in row] for row in rows]}
    with open(os.environ["SAPSAM_E2E_CHOSEN_ROWS"], "a", encoding="utf-8") as chosen:
        chosen.write(json.dumps(line) + "\n")
    return outcome


DealCommands.start_deal = _start_chosen_deal  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))

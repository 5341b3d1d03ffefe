"""Each mutation sapsam's own tamper tests make (tests/audit/test_audit_tampering.py's ``CASES``:
an event removed, two swapped, a reveal's card, a nonce, the seed, the cut, a score, a rule
parameter, an entropy contribution and a second reveal inserted) applied to deal2.jsonl and
re-chained as a forger would (tampered/mutation_<edit>.jsonl), with the verdict and the failed
checks ``sapsam audit verify`` gives each (tamper_mutations.json), which
test/crosscheck_mutations.test.ts holds the page to. The edits are imported from the test module,
so the two stay the same mutations. Alone (deal2.jsonl unchanged):

    python web/test/data/make_tamper_mutations.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the repository: tests.audit.test_audit_tampering
from make_exports import Events, _rechained, _report  # noqa: E402

from tests.audit.test_audit_tampering import CASES, Edit, Exported  # noqa: E402

# The page names other checks than sapsam for these (the verdict is the same, FAILED), recorded
# here rather than left out: deal2.jsonl has three seats, so change_a_score's two totals make a
# DealScored sapsam reads as malformed (published_deal) and the page rescores (scores); after
# change_a_rule_parameter sapsam also reports reveal_fouls and scored_arrangements as not checked
# (they need scores), the page does not.
CHECKS_DIFFER: dict[str, str] = {
    "change_a_score": "sapsam: published_deal (2 totals at 3 seats); the page: scores",
    "change_a_rule_parameter": "sapsam also names reveal_fouls and scored_arrangements",
}


def mutated(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` applied to its events and header, the chain recomputed."""
    header: dict[str, Any] = json.loads(text.splitlines()[0])

    def change(events: Events) -> None:
        edit(Exported(header, events))

    return _rechained(text, change, header)


def main() -> None:
    text = (HERE / "deal2.jsonl").read_text(encoding="utf-8")
    outcomes: dict[str, dict[str, Any]] = {}
    for edit, _segment, _owner in CASES:
        name = f"mutation_{edit.__name__}"
        path = HERE / "tampered" / f"{name}.jsonl"
        path.write_text(mutated(text, edit), encoding="utf-8")
        verdict, failed = _report(path)
        outcomes[name] = {"file": f"tampered/{name}.jsonl", "verdict": verdict, "failed": failed}
        if edit.__name__ in CHECKS_DIFFER:
            outcomes[name]["checks_differ"] = CHECKS_DIFFER[edit.__name__]
    (HERE / "tamper_mutations.json").write_text(
        json.dumps(outcomes, indent=2) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()

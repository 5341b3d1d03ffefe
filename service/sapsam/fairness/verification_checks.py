"""What a verification reports: each :class:`Check` (passed, failed with what was expected and
found, or skipped because a check it relies on did not pass), the :class:`VerificationReport`
they make, and the :class:`CheckRunner` that runs checks in order and skips those whose needs
failed. ``sapsam.fairness.verify`` runs a closed deal's checks with it (docs/fairness.md §13).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card

# sapsam.frozen.from_fields' two steps, called here directly.
_new: Final = object.__new__
_set_attribute: Final = object.__setattr__

__all__ = [
    "Check",
    "CheckRunner",
    "VerificationReport",
    "check_result",
    "compared",
    "compared_bytes",
    "failing",
    "passing",
]


@dataclass(frozen=True)
class Check:
    """One verification step: its stable name, whether it passed, and on failure what was
    expected (from the published record) and what was found (by recomputation).

    A skipped check has ``passed=False`` and ``skipped=True``: it could not be run because a check
    it depends on failed.
    """

    name: str
    passed: bool
    expected: str
    found: str
    detail: str
    skipped: bool = False

    @property
    def failed(self) -> bool:
        """Ran and did not pass."""
        return not self.passed and not self.skipped


@dataclass(frozen=True)
class VerificationReport:
    """The result of :func:`verify_deal`: ``ok`` only if every check ran and passed.

    ``hands`` are the recomputed hands (index = seat, in dealt order) when the seed checked out;
    ``arrangements`` the arrangement scored for each seat (its reveal, or the one set on its
    behalf; ``None`` for a seat without one) when the fouls could be judged.
    """

    ok: bool
    checks: tuple[Check, ...]
    hands: tuple[tuple[Card, ...], ...] | None = None
    arrangements: tuple[Arrangement | None, ...] = ()

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the checks that ran and failed."""
        return tuple(check.name for check in self.checks if check.failed)

    @property
    def skipped(self) -> tuple[str, ...]:
        """Names of the checks that could not run."""
        return tuple(check.name for check in self.checks if check.skipped)

    def check(self, name: str) -> Check:
        """The check called ``name``; ``KeyError`` if there is none."""
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(name)

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON output."""
        return {
            "ok": self.ok,
            "checks": [
                {
                    "name": check.name,
                    "passed": check.passed,
                    "skipped": check.skipped,
                    "expected": check.expected,
                    "found": check.found,
                    "detail": check.detail,
                }
                for check in self.checks
            ],
        }


def check_result(name: str, passed: bool, expected: str, found: str, detail: str) -> Check:
    """``Check(name, passed, expected, found, detail)`` (``skipped`` False): a check has no
    ``__post_init__``, so its fields are set in one step instead of ``__init__``'s setattr per
    field (every verified deal makes ten)."""
    check: Check = _new(Check)  # from_fields' two steps, written out
    _set_attribute(
        check,
        "__dict__",
        {
            "name": name,
            "passed": passed,
            "expected": expected,
            "found": found,
            "detail": detail,
            "skipped": False,
        },
    )
    return check


def passing(name: str, value: str, detail: str = "") -> Check:
    return check_result(name, True, value, value, detail)


def failing(name: str, expected: str, found: str, detail: str) -> Check:
    return check_result(name, False, expected, found, detail)


def compared(name: str, expected: str, found: str, detail: Callable[[], str]) -> Check:
    # The detail is built only for a failure: verifying an honest deal should not format text.
    if expected == found:
        # passing(name, expected) in one step (a verified deal passes some ten of these).
        check: Check = _new(Check)
        _set_attribute(
            check,
            "__dict__",
            {
                "name": name,
                "passed": True,
                "expected": expected,
                "found": expected,
                "detail": "",
                "skipped": False,
            },
        )
        return check
    return failing(name, expected, found, detail())


def compared_bytes(
    name: str, expected: bytes, found: bytes, detail: Callable[[], str], texts: bool = True
) -> Check:
    """``compared(name, expected.hex(), found.hex(), detail)``. With ``texts`` False, for a
    reader of a failure's texts only (the audit's report), equal bytes pass with no texts
    instead (equal bytes have equal hex, so the verdict is the same)."""
    if not texts and expected == found:
        return check_result(name, True, "", "", "")
    return compared(name, expected.hex(), found.hex(), detail)


class CheckRunner:
    """Collects checks in order and skips a check whose dependencies did not all pass."""

    def __init__(self) -> None:
        self.results: list[Check] = []
        self._passed: dict[str, bool] = {}

    def run(self, name: str, needs: Sequence[str], body: Callable[[], Check]) -> bool:
        passed = self._passed
        blocked: list[str] | None = None
        # A plain loop (no comprehension frame per check); the list only when a need failed.
        for need in needs:
            if not passed.get(need, False):
                blocked = [need for need in needs if not passed.get(need, False)]
                break
        if blocked:
            check = Check(
                name=name,
                passed=False,
                expected="",
                found="",
                detail=f"not checked: it relies on {', '.join(blocked)}, which did not pass",
                skipped=True,
            )
        else:
            try:
                check = body()
            except ValueError as error:
                # FairnessError, CardError and RuleSetError are ValueErrors: malformed published
                # values fail the check that reads them instead of aborting the verification.
                check = failing(name, "well-formed input", "malformed input", str(error))
        self.results.append(check)
        passed[name] = check.passed
        return check.passed

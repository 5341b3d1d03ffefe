"""Running one check so that a malformed value fails the check, never the verifier.

An export is untrusted input: the codec checks event field names, not their types, so a forged
value of the wrong type can reach any check. :func:`safely` turns what it trips over into a
failed check (or a caller's fallback); the verifier's framework and every family's deal checks
(``sapsam.audit.families``) run their checks through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, overload

from sapsam.audit.deal_events import MALFORMED
from sapsam.audit.report import AuditCheck, Status

__all__ = ["malformed_check", "safely"]

_NO_FALLBACK: Final = object()
_Result = TypeVar("_Result")


def malformed_check(name: str, deal: int | None, detail: str) -> AuditCheck:
    """The failed check ``name`` for malformed event content."""
    return AuditCheck(name, Status.FAILED, f"malformed event content: {detail}", deal=deal)


@overload
def safely(name: str, deal: int | None, compute: Callable[[], AuditCheck]) -> AuditCheck: ...


@overload
def safely(
    name: str, deal: int | None, compute: Callable[[], _Result], fallback: _Result
) -> _Result: ...


def safely(
    name: str, deal: int | None, compute: Callable[[], Any], fallback: Any = _NO_FALLBACK
) -> Any:
    """Run a check; a malformed value it trips over fails the check instead of the verifier."""
    try:
        return compute()
    except MALFORMED as error:
        if fallback is not _NO_FALLBACK:
            return fallback
        return malformed_check(name, deal, f"{type(error).__name__}: {error}")

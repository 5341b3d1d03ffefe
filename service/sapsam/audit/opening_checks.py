"""The checks of a table's opening in an export: ``header``, ``opening`` and ``dealer_lot``.

Pure. :func:`table_rule_set` reads the rule set recorded in ``TableCreated`` (once per distinct
rule set in a process), :func:`header_check` holds the export's header to the recorded events,
:func:`opening_check` the events before the first deal to the protocol (TableCreated, a
PlayerSeated per seat, DealerChosen, and the seats given away between earlier deals), and
:func:`lot_check` redraws the dealer from the published lot seed.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from sapsam import fairness
from sapsam.audit.export_format import AuditExport
from sapsam.audit.report import AuditCheck, Status, make_check
from sapsam.domain.events import (
    DealerChosen,
    DealScored,
    DealStarted,
    Event,
    PlayerSeated,
    SeatReplaced,
    TableCreated,
)
from sapsam.rules.cards import format_cards
from sapsam.rules.ruleset import RuleSet, RuleSetError

__all__ = [
    "forget_lots_and_rule_sets",
    "header_check",
    "lot_check",
    "opening_check",
    "table_rule_set",
]


def table_rule_set(created: TableCreated | None) -> RuleSet | None:
    if created is None:
        return None
    try:
        return _read_rule_set(created.rule_set)
    except RuleSetError:
        return None


# RuleSet.from_dict validates every field, and a verifier going through many exports meets the
# same few rule sets again and again. A RuleSet is frozen, so one reading is shared: the key holds
# each value's type too (true and 1 are equal in Python, not as rule set values), and a JSON
# object value (rules version 6's ``pair_units`` and ``royalty_amounts``) as its items with their
# types (before, such a value made the key unhashable and every export read its rule set anew).
# Errors are not kept, so a bad rule set raises every time.
_RuleSetKey = tuple[tuple[str, type, object], ...]
_RULE_SETS: dict[_RuleSetKey, RuleSet] = {}
_RULE_SETS_KEPT = 64


def _value_key(value: object) -> object:
    """A hashable key of a plain JSON value, equal only for values of the same types; an
    unhashable value other than an object of plain values raises ``TypeError``."""
    if type(value) is dict:
        return tuple(
            (type(name), name, type(item), _value_key(item)) for name, item in value.items()
        )
    hash(value)
    return value


# The last rule set object read, and its reading: a table's deal exports share their decoded
# ``TableCreated`` (``verifier._DECODED``), so its rule set is the same object file after file,
# and is taken without building its key. The entry holds the object, so its id is not reused; a
# decoded event's values are never changed by its readers.
_LAST_READ: list[tuple[object, RuleSet]] = []


def _read_rule_set(data: object) -> RuleSet:
    """``RuleSet.from_dict(data)``, read once per distinct rule set."""
    if _LAST_READ and _LAST_READ[0][0] is data:
        return _LAST_READ[0][1]
    if type(data) is not dict:
        return RuleSet.from_dict(cast(Mapping[str, Any], data))
    try:
        key = tuple((name, type(value), _value_key(value)) for name, value in data.items())
        known = _RULE_SETS.get(key)
    except TypeError:  # an unhashable value (a list …): nothing to share, from_dict judges it
        return RuleSet.from_dict(data)
    if known is None:
        known = RuleSet.from_dict(data)
        if len(_RULE_SETS) >= _RULE_SETS_KEPT:
            _RULE_SETS.clear()
        _RULE_SETS[key] = known
    _LAST_READ[:] = [(data, known)]
    return known


def header_check(
    export: AuditExport,
    decoded: Sequence[tuple[int, Event]],
    created: TableCreated | None,
    rule_set: RuleSet | None,
) -> AuditCheck:
    header = export.header
    if created is None:
        return make_check("header", Status.FAILED, "the export holds no TableCreated event")
    problems: list[str] = []
    if header.table_id != created.table_id:
        problems.append(f"table id {header.table_id} is not the recorded {created.table_id}")
    if header.stream_id != f"table-{created.table_id}":
        problems.append(f"stream {header.stream_id} is not the table's stream")
    # The decoded event holds JSON arrays as tuples, the header as lists (open face's
    # street_cards): compared as JSON values.
    # Equal as they are, they are equal as JSON values (a tuple is never equal to a list, so
    # turning both sides' tuples into lists keeps equal values equal): the usual case compares
    # once, without copying either rule set.
    in_header: Any = header.rule_set
    recorded: Any = created.rule_set
    if in_header != recorded:
        in_header = _as_json(in_header)
        recorded = _as_json(recorded)
    if in_header != recorded:
        assert isinstance(in_header, dict) and isinstance(recorded, dict)
        changed = sorted(
            key for key in set(in_header) | set(recorded) if in_header.get(key) != recorded.get(key)
        )
        problems.append(
            f"the header's rule set differs from the one recorded in TableCreated in {changed}"
        )
    if rule_set is None:
        problems.append("the recorded rule set is not a valid rule set")
    if header.seat_count != created.seat_count:
        problems.append(f"seat count {header.seat_count} is not the recorded {created.seat_count}")
    started = [event.deal_number for _, event in decoded if isinstance(event, DealStarted)]
    scored = [event.deal_number for _, event in decoded if isinstance(event, DealScored)]
    if list(header.deals) != started:
        problems.append(f"the header lists deals {list(header.deals)}, the events hold {started}")
    if list(header.finished_deals) != scored:
        problems.append(
            f"the header lists finished deals {list(header.finished_deals)}, "
            f"the events score {scored}"
        )
    if header.scope not in ("deal", "table"):
        problems.append(f"unknown scope {header.scope!r}")
    if problems:
        return make_check("header", Status.FAILED, "; ".join(problems))
    name = rule_set.name if rule_set is not None else "?"
    return make_check(
        "header",
        Status.PASSED,
        f"table {created.table_id}, {created.seat_count} seats, rule set {name!r} as recorded",
    )


# A table's deal exports open with the same opening events (read and decoded once for all of
# them: ``export_reading``, ``verifier``), so their opening check is the same: kept by the
# versions and identities of the events before the first DealStarted, each entry holding those
# events and ``created`` (so no id is reused while kept). At most _OPENINGS_CHECKED_KEPT.
_OPENINGS_CHECKED: dict[
    tuple[tuple[int, int], ...], tuple[list[Event], TableCreated | None, AuditCheck]
] = {}
_OPENINGS_CHECKED_KEPT: Final = 1024


def opening_check(decoded: Sequence[tuple[int, Event]], created: TableCreated | None) -> AuditCheck:
    """TableCreated at version 1, each seat taken once, then the dealer drawn; nothing else."""
    opening: list[tuple[int, Event]] = []
    for version, event in decoded:
        if isinstance(event, DealStarted):
            break
        opening.append((version, event))
    key = tuple([(version, id(event)) for version, event in opening])
    kept = _OPENINGS_CHECKED.get(key)
    if (
        kept is not None
        and kept[1] is created
        and all(map(operator.is_, kept[0], [event for _, event in opening]))
    ):
        return kept[2]
    check = _opening_check(opening, created)
    if len(_OPENINGS_CHECKED) >= _OPENINGS_CHECKED_KEPT:
        _OPENINGS_CHECKED.clear()
    _OPENINGS_CHECKED[key] = ([event for _, event in opening], created, check)
    return check


def _opening_check(opening: list[tuple[int, Event]], created: TableCreated | None) -> AuditCheck:
    """``opening_check`` of the events before the first DealStarted."""
    if created is None or not opening or opening[0][1] is not created or opening[0][0] != 1:
        return make_check("opening", Status.FAILED, "the export does not begin with TableCreated")
    seats: dict[int, str] = {}
    drawn = False
    for version, event in opening[1:]:
        if isinstance(event, PlayerSeated) and not drawn:
            if not 0 <= event.seat < created.seat_count or event.seat in seats:
                return make_check(
                    "opening",
                    Status.FAILED,
                    f"the PlayerSeated event at version {version} takes seat {event.seat}, "
                    "which does not exist or is already taken",
                )
            if event.player_id in seats.values():
                return make_check(
                    "opening",
                    Status.FAILED,
                    f"the PlayerSeated event at version {version} seats {event.player_id} twice",
                )
            seats[event.seat] = event.player_id
        elif isinstance(event, DealerChosen) and not drawn and len(seats) == created.seat_count:
            drawn = True
        elif (
            isinstance(event, SeatReplaced)
            and drawn
            and seats.get(event.seat) == event.previous_player_id
            and event.player_id not in seats.values()
        ):
            # A deal's export carries the seats given away between earlier deals.
            seats[event.seat] = event.player_id
        else:
            return make_check(
                "opening",
                Status.FAILED,
                f"the {event.TYPE} event at version {version} is out of place before the first "
                "deal (expected TableCreated, a PlayerSeated per seat, then DealerChosen)",
            )
    players = ", ".join(f"seat {seat}: {seats[seat]}" for seat in sorted(seats))
    return make_check("opening", Status.PASSED, players or "no seat taken yet")


def lot_check(created: TableCreated | None, chosen: DealerChosen | None) -> AuditCheck:
    if created is None or chosen is None:
        return make_check(
            "dealer_lot", Status.PENDING, "the dealer has not been drawn in this export"
        )
    try:
        commitment, dealer, drawn = _redrawn_lot(
            created.table_id, chosen.lot_seed, created.seat_count
        )
    except ValueError as error:
        return make_check("dealer_lot", Status.FAILED, f"the lot cannot be redrawn: {error}")
    if commitment != created.lot_commitment:
        return make_check(
            "dealer_lot",
            Status.FAILED,
            "the published lot seed does not hash to the lot commitment recorded at the "
            "table's creation",
            expected=created.lot_commitment,
            found=commitment,
        )
    if dealer != chosen.dealer or list(drawn) != list(chosen.lot_cards):
        return make_check(
            "dealer_lot",
            Status.FAILED,
            "redrawing the lot does not give the recorded cards and dealer",
            expected=f"dealer {dealer}, cards {' '.join(drawn)}",
            found=f"dealer {chosen.dealer}, cards {' '.join(chosen.lot_cards)}",
        )
    return make_check(
        "dealer_lot", Status.PASSED, f"seat {dealer} drew the highest card ({' '.join(drawn)})"
    )


# Redrawing the lot is a pure function of the table, the lot seed and the seat count, and every
# export of a table carries the same three (a deal's export opens with the table's lot): a
# verifier going through a table's deal exports redraws its lot once. Only plain values are kept,
# and only draws that succeeded (a refusal is decided again each time), at most 1,024.
_LotKey = tuple[str, str, int]
_LOTS: dict[_LotKey, tuple[str, int, tuple[str, ...]]] = {}
_LOTS_KEPT: Final = 1024


def _redrawn_lot(table_id: str, lot_seed: str, seat_count: int) -> tuple[str, int, tuple[str, ...]]:
    """The lot commitment (hex) of ``lot_seed`` (hex) at table ``table_id``, the dealer it draws
    among ``seat_count`` seats and the cards drawn; ``ValueError`` for a malformed value."""
    plain = type(table_id) is str and type(lot_seed) is str and type(seat_count) is int
    if plain:
        known = _LOTS.get((table_id, lot_seed, seat_count))
        if known is not None:
            return known
    table = uuid.UUID(table_id)
    seed = bytes.fromhex(lot_seed)
    commitment = fairness.lot_commitment(table, seed)
    lot = fairness.draw_dealer(seed, table, seat_count)
    redrawn = (commitment.hex(), lot.dealer, tuple(format_cards(lot.cards).split()))
    if plain:
        if len(_LOTS) >= _LOTS_KEPT:
            _LOTS.clear()
        _LOTS[(table_id, lot_seed, seat_count)] = redrawn
    return redrawn


def forget_lots_and_rule_sets() -> None:
    """Forget the lots redrawn, the rule sets read and the openings checked so far (the next
    exports' are redrawn, read and checked in full)."""
    _OPENINGS_CHECKED.clear()
    _LOTS.clear()
    _RULE_SETS.clear()
    _LAST_READ.clear()


def _as_json(value: Any) -> Any:
    """``value`` with every tuple a list and every mapping a dict, as JSON reads it back."""
    if isinstance(value, Mapping):
        return {key: _as_json(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_as_json(item) for item in value]
    return value

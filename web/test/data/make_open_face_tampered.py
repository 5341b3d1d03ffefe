"""Re-chained forgeries of the open-face sample sets (open_face/*.jsonl), one per check of
docs/audit.md §4.3.1 the page makes after `streets`, and the verdict and failed checks
`sapsam audit verify` gives each (open_face_tampered.json), which test/crosscheck.test.ts holds
the page to. make_exports.py runs it after writing open_face/; alone (the sets unchanged):
    python web/test/data/make_open_face_tampered.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from make_exports import Events, _drop, _rechained, _report, _set, _shift_totals, _swap_places

HERE = Path(__file__).resolve().parent


def _nth(events: Events, type_name: str, deal: int, index: int) -> dict[str, Any]:
    found = [e for e in events if e["type"] == type_name and e["data"].get("deal_number") == deal]
    return found[index]


def _swap_turns(events: Events) -> None:
    """Deal 1's first two placements trade places: the second seat places out of turn."""
    first, second = _nth(events, "CardsPlaced", 1, 0), _nth(events, "CardsPlaced", 1, 1)
    i, j = events.index(first), events.index(second)
    events[i], events[j] = second, first


def _swap_turns_of_deal_2(events: Events) -> None:
    """Deal 2's first two placements trade places, in a deal export that lacks deal 1."""
    first, second = _nth(events, "CardsPlaced", 2, 0), _nth(events, "CardsPlaced", 2, 1)
    i, j = events.index(first), events.index(second)
    events[i], events[j] = second, first


def _trade_cards(events: Events) -> None:
    """Deal 2, street 1: two seats' placements trade their card (each places one not dealt it)."""
    a, b, *_ = (
        e
        for e in events
        if e["type"] == "CardsPlaced" and e["data"]["deal_number"] == 2 and e["data"]["street"] == 1
    )
    row_a = next(r for r in ("front", "middle", "back") if a["data"][r])
    row_b = next(r for r in ("front", "middle", "back") if b["data"][r])
    a["data"][row_a], b["data"][row_b] = b["data"][row_b], a["data"][row_a]


def _fantasyland_rows(events: Events) -> None:
    """The Fantasyland hand's front and middle trade a card after it was committed."""
    data = next(e for e in events if e["type"] == "FantasylandRevealed")["data"]
    data["front"][0], data["middle"][0] = data["middle"][0], data["front"][0]


def _discards_swapped(events: Events) -> None:
    """A seat's first two discards opened in each other's street."""
    data = _nth(events, "DiscardsRevealed", 1, 0)["data"]
    data["cards"][0], data["cards"][1] = data["cards"][1], data["cards"][0]


def _discard_committed_twice(events: Events) -> None:
    """A seat's first discard commitment recorded a second time, right after itself: a
    DiscardCommitted without the placement it belongs to."""
    first = _nth(events, "DiscardCommitted", 1, 0)
    events.insert(events.index(first) + 1, json.loads(json.dumps(first)))


def _automatic(events: Events, reason: str, index: int = 0) -> dict[str, Any]:
    """The ``index``-th placement the service made for a seat for ``reason``."""
    return [e for e in events if e["type"] == "CardsPlaced" and e["data"]["automatic"] == reason][
        index
    ]["data"]


def _moved_to_another_row(reason: str) -> Callable[[Events], None]:
    """A card of the first placement made for ``reason`` that can be moved, moved to another row
    with room (the seat's board counted from its placements in the deal so far)."""

    def change(events: Events) -> None:
        rows = {"front": 3, "middle": 5, "back": 5}
        for at, data in (
            (i, e["data"])
            for i, e in enumerate(events)
            if e["type"] == "CardsPlaced" and e["data"]["automatic"] == reason
        ):
            placed = [
                e["data"]
                for e in events[: at + 1]
                if e["type"] == "CardsPlaced"
                and e["data"]["deal_number"] == data["deal_number"]
                and e["data"]["seat"] == data["seat"]
            ]
            for source in (r for r in rows if data[r]):
                for target in rows:
                    if target != source and sum(len(p[target]) for p in placed) < rows[target]:
                        data[target].append(data[source].pop())
                        return
        raise AssertionError(f"no placement made for {reason} can be moved")

    return change


def _set_automatic(reason: str, **changes: Any) -> Callable[[Events], None]:
    def change(events: Events) -> None:
        _automatic(events, reason).update(changes)

    return change


def _dead_seat_places_itself(events: Events) -> None:
    """A hand dead for the set (001's timeout) places a later street as if it chose it."""
    data = _automatic(events, "already_dead", 5)
    data["automatic"] = None


def _service_reveal(events: Events) -> dict[str, Any]:
    return next(
        e for e in events if e["type"] == "FantasylandRevealed" and e["data"]["nonce"] == ""
    )


def _fantasyland_timeout_rows(events: Events) -> None:
    """The Fantasyland hand the service set after the timeout, a front and a middle card traded."""
    data = _service_reveal(events)["data"]
    data["front"][0], data["middle"][0] = data["middle"][0], data["front"][0]


def _fantasyland_timeout_unopened(events: Events) -> None:
    """The service's opening of the timed-out Fantasyland hand left out."""
    events.remove(_service_reveal(events))


def _extension(stage: str, **changes: Any) -> Callable[[Events], None]:
    """The first DeadlinesExtended of ``stage`` changed (a value, or a function of it)."""

    def change(events: Events) -> None:
        data = next(
            e for e in events if e["type"] == "DeadlinesExtended" and e["data"]["stage"] == stage
        )["data"]
        for key, value in changes.items():
            data[key] = value(data[key]) if callable(value) else value

    return change


def _extension_dropped(events: Events) -> None:
    """The first extension of the discards' deadline left out."""
    events.remove(
        next(
            e
            for e in events
            if e["type"] == "DeadlinesExtended" and e["data"]["stage"] == "discarding"
        )
    )


def _replaced_mid_deal(events: Events) -> None:
    """The seat replaced after deal 3's first street instead of between deals 2 and 3."""
    replaced = next(e for e in events if e["type"] == "SeatReplaced")
    events.remove(replaced)
    street = next(e for e in events if e["type"] == "StreetDealt" and e["data"]["deal_number"] == 3)
    events.insert(events.index(street) + 1, replaced)


def _signed_move(events: Events, index: int) -> dict[str, Any]:
    return [e for e in events if e["data"].get("signature")][index]["data"]


def _signature_stripped(events: Events) -> None:
    """A later signed placement of seat 0 recorded unsigned (after its player signed others)."""
    data = _signed_move(events, 3)
    data["player_key"] = data["signature"] = None


def _signature_altered(events: Events) -> None:
    """One signature's first byte changed."""
    data = _signed_move(events, 2)
    data["signature"] = ("00" if data["signature"][:2] != "00" else "01") + data["signature"][2:]


def _signature_of_another_seat(events: Events) -> None:
    """Seat 0's key and one of its signatures copied onto another seat's own placement."""
    signed = _signed_move(events, 0)
    other = next(
        e["data"]
        for e in events
        if e["type"] == "CardsPlaced" and e["data"]["seat"] != 0 and e["data"]["automatic"] is None
    )
    other["player_key"], other["signature"] = signed["player_key"], signed["signature"]


def _middle_result_flipped(events: Events) -> None:
    """2-7: the first deal's first pair's middle (lower wins) read the other way."""
    pair = _nth(events, "DealScored", 1, 0)["data"]["pairs"][0]
    pair["rows"][1] = -pair["rows"][1] or 1


FORGERIES: dict[str, tuple[str, Callable[[Events], None]]] = {
    "placement_out_of_turn": ("pineapple.jsonl", _swap_turns),
    "placement_not_dealt": ("ofc_classic.jsonl", _trade_cards),
    "fantasyland_rows_changed": ("fantasyland.jsonl", _fantasyland_rows),
    "discards_swapped": ("pineapple.jsonl", _discards_swapped),
    "discard_committed_twice": ("pineapple.jsonl", _discard_committed_twice),
    "rescored": ("ofc_classic.jsonl", _set("DealScored", 1, totals=_shift_totals)),
    "running_totals": ("pineapple.jsonl", _set("DealScored", 2, series_totals=_shift_totals)),
    "set_not_completed": ("ofc_classic.jsonl", _drop("SeriesCompleted")),
    "set_standings_swapped": (
        "ofc_classic.jsonl",
        _set("SeriesCompleted", None, standings=_swap_places),
    ),
    "set_deals_played": ("ofc_classic.jsonl", _set("SeriesCompleted", None, deals_played=4)),
    "button_kept": ("ofc_classic.jsonl", _set("DealStarted", 2, dealer=lambda d: (d + 2) % 3)),
    "timeout_moved_to_another_row": ("timeout.jsonl", _moved_to_another_row("timeout")),
    "timeout_003_moved_to_another_row": ("timeout_003.jsonl", _moved_to_another_row("timeout")),
    "pineapple_timeout_moved": ("pineapple_timeout.jsonl", _moved_to_another_row("timeout")),
    "timeout_by_operator": ("timeout.jsonl", _set_automatic("timeout", timed_out_by="operator")),
    "timeout_by_stranger": ("timeout.jsonl", _set_automatic("timeout", timed_out_by="sweep")),
    "forced_reason_changed": (
        "forced.jsonl",
        _set_automatic("only_option", automatic="every_option_kills"),
    ),
    "dead_for_set_moved_to_another_row": ("timeout.jsonl", _moved_to_another_row("already_dead")),
    "forced_as_own_move": ("forced.jsonl", _set_automatic("only_option", automatic=None)),
    "dead_seat_places_itself": ("timeout.jsonl", _dead_seat_places_itself),
    "fantasyland_timeout_rows": ("fantasyland_timeout.jsonl", _fantasyland_timeout_rows),
    "fantasyland_timeout_unopened": ("fantasyland_timeout.jsonl", _fantasyland_timeout_unopened),
    "fantasyland_timeout_by_operator": (
        "fantasyland_timeout.jsonl",
        _set("FantasylandTimedOut", None, timed_out_by="operator"),
    ),
    "set_not_ended_after_timeout": ("timeout_003.jsonl", _drop("SeriesCompleted")),
    "extension_moved": ("outage.jsonl", _extension("placing", deadline_ms=lambda d: d + 1_000)),
    "extension_of_another_deadline": (
        "outage.jsonl",
        _extension("fantasyland", previous_deadline_ms=lambda d: d - 1),
    ),
    "extension_for_a_nap": ("outage.jsonl", _extension("placing", reason="nap")),
    "discard_extension_moved": (
        "discard_outage.jsonl",
        _extension("discarding", deadline_ms=lambda d: d + 1_000),
    ),
    "discard_extension_dropped": ("discard_outage.jsonl", _extension_dropped),
    "replaced_mid_deal": ("voided_replaced.jsonl", _replaced_mid_deal),
    "voided_deal_counted": (
        "voided_replaced.jsonl",
        _set("SeriesCompleted", None, deals_played=lambda n: n + 1),
    ),
    "signature_stripped": ("signed_fantasyland.jsonl", _signature_stripped),
    "signature_altered": ("signed_pineapple.jsonl", _signature_altered),
    "signature_of_another_seat": ("signed_pineapple.jsonl", _signature_of_another_seat),
    "deal_export_out_of_turn": ("anchored_deal2_timeout.jsonl", _swap_turns_of_deal_2),
    "deal1_export_out_of_turn": ("anchored_deal1_timeout.jsonl", _swap_turns),
    "unopened_hand_scored_alive": (
        "reveal_timeout.jsonl",
        _set("FantasylandRevealed", 2, dead=False),
    ),
    "two_seven_middle_flipped": ("pineapple_2_7.jsonl", _middle_result_flipped),
    "two_seven_rescored": ("pineapple_2_7.jsonl", _set("DealScored", 2, totals=_shift_totals)),
    "every_option_kills_moved": (
        "pineapple_2_7.jsonl",
        _moved_to_another_row("every_option_kills"),
    ),
}


def main() -> None:
    folder = HERE / "open_face" / "tampered"
    folder.mkdir(exist_ok=True)
    outcomes: dict[str, dict[str, Any]] = {}
    for name, (base, change) in FORGERIES.items():
        path = folder / f"{name}.jsonl"
        text = (HERE / "open_face" / base).read_text(encoding="utf-8")
        path.write_text(_rechained(text, change), encoding="utf-8")
        verdict, failed = _report(path)
        outcomes[name] = {
            "file": f"open_face/tampered/{name}.jsonl",
            "verdict": verdict,
            "failed": failed,
        }
    (HERE / "open_face_tampered.json").write_text(
        json.dumps(outcomes, indent=2) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()

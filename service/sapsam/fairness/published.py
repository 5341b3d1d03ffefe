"""Everything published about a finished deal, in one frozen value, and its JSON form.

The JSON form (docs/fairness.md §14) uses hex for bytes, the table id in its canonical text form,
cards in the usual notation (``"Ah Kd 2c"``) and ``null`` for a seat that contributed nothing,
never committed or never revealed. It is the format of the verification vectors and of exports.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sapsam.fairness.deal import DealRecord
from sapsam.fairness.encoding import FairnessError, require_seat_count
from sapsam.fairness.natural_checks import Declaration
from sapsam.rules.arrangement import Arrangement
from sapsam.rules.cards import Card, CardError, format_cards
from sapsam.rules.ruleset import RuleSet, RuleSetError
from sapsam.rules.scoring import DealScore, PairResult

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Reveal:
    """A seat's revealed arrangement and the nonce it committed with."""

    arrangement: Arrangement
    nonce: bytes


@dataclass(frozen=True)
class PublishedDeal:
    """A finished deal as published: the inputs of the deal, the records made while it was played,
    and the recorded outcome that :func:`~sapsam.fairness.verify.verify_deal` recomputes.

    Per-seat tuples are indexed by seat. ``contributions[s]``, ``seat_commitments[s]`` and
    ``reveals[s]`` are ``None`` when the seat contributed nothing, never committed, or never
    revealed. A seat that never revealed has fouled, unless ``solver_seats[s]`` says the solver
    set its hand (``sapsam.rules.solver.solve`` of the dealt cards under the rule set).
    ``recorded_fouls`` and ``recorded_scores`` are what the server recorded when it scored the
    deal.
    """

    table_id: uuid.UUID
    deal_number: int
    rule_set: RuleSet
    seat_count: int
    dealer: int
    seed_commitment: bytes
    seed: bytes
    contributions: tuple[bytes | None, ...]
    cut_position: int
    record: DealRecord
    seat_commitments: tuple[bytes | None, ...]
    reveals: tuple[Reveal | None, ...]
    recorded_fouls: tuple[bool, ...]
    recorded_scores: DealScore
    solver_seats: tuple[bool, ...] = ()
    """Per seat, whether the seat missed its arranging deadline under the rule set's ``solver``
    policy, so that the solver set its hand; ``()`` (the default) means no seat."""
    solver_arrangements: tuple[Arrangement | None, ...] | None = None
    """Per seat, the arrangement the server set on the seat's behalf (a solver seat), recorded
    with the score, else ``None``; the whole field ``None`` for a deal scored before it was
    recorded (``DealScored`` schema 1): the earlier scheme, where the verifier runs the solver."""
    commitment_schemes: tuple[int, ...] = ()
    """Per seat, the scheme of its confirmed commitment (docs/fairness.md §12); ``()`` (the
    default) means scheme 1 for every seat, as every deal before schemes were recorded."""
    players: tuple[str | None, ...] = ()
    """Per seat, the player id seated there (scheme 2 commitments bind it); ``()`` when no seat
    committed under scheme 2."""
    surrendered: tuple[bool, ...] = ()
    """Per seat, whether it announced a surrender (docs/rules.md §2.8): its pairs settle the
    surrender price instead of their rows; ``()`` (the default) means no seat surrendered."""
    natural_declarations: tuple[Declaration | None, ...] | None = None
    """Per seat, its natural declaration (docs/fairness.md §21), or ``None`` for a seat that
    made none; the whole field ``None`` for a deal at a table without naturals."""

    def __post_init__(self) -> None:
        require_seat_count(self.seat_count)
        if not self.solver_seats:
            object.__setattr__(self, "solver_seats", (False,) * self.seat_count)
        if not self.commitment_schemes:
            object.__setattr__(self, "commitment_schemes", (1,) * self.seat_count)
        if not self.players:
            object.__setattr__(self, "players", (None,) * self.seat_count)
        for name, values in (
            ("contributions", self.contributions),
            ("record.hands", self.record.hands),
            ("seat_commitments", self.seat_commitments),
            ("reveals", self.reveals),
            ("recorded_fouls", self.recorded_fouls),
            ("recorded_scores.totals", self.recorded_scores.totals),
            ("solver_seats", self.solver_seats),
            ("solver_arrangements", self.solver_arrangements or (None,) * self.seat_count),
            ("commitment_schemes", self.commitment_schemes),
            ("players", self.players),
            ("surrendered", self.surrendered or (False,) * self.seat_count),
            ("natural_declarations", self.natural_declarations or (None,) * self.seat_count),
        ):
            if len(values) != self.seat_count:
                raise FairnessError(
                    f"{name} must have one entry per seat ({self.seat_count}), got {len(values)}"
                )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: plain values only. ``solver_arrangements`` is written only when recorded
        (a deal of the earlier scheme has none)."""
        data = {
            "format": FORMAT_VERSION,
            "table_id": str(self.table_id),
            "deal_number": self.deal_number,
            "rule_set": self.rule_set.to_dict(),
            "seat_count": self.seat_count,
            "dealer": self.dealer,
            "seed_commitment": self.seed_commitment.hex(),
            "seed": self.seed.hex(),
            "contributions": [_optional_hex(value) for value in self.contributions],
            "cut_position": self.cut_position,
            "record": {
                "deck": self.record.deck.hex(),
                "cut_deck": self.record.cut_deck.hex(),
                "hands": [digest.hex() for digest in self.record.hands],
            },
            "seat_commitments": [_optional_hex(value) for value in self.seat_commitments],
            "reveals": [_reveal_to_dict(reveal) for reveal in self.reveals],
            "solver_seats": list(self.solver_seats),
            "recorded": {
                "fouls": list(self.recorded_fouls),
                "pairs": [
                    {
                        "seats": [pair.seat_a, pair.seat_b],
                        "rows": list(pair.rows),
                        "delta": pair.delta,
                    }
                    for pair in self.recorded_scores.pairs
                ],
                "totals": list(self.recorded_scores.totals),
            },
        }
        if any(scheme != 1 for scheme in self.commitment_schemes):
            # Written only when a seat used scheme 2: a deal of scheme 1 reads as it always did.
            data["commitment_schemes"] = list(self.commitment_schemes)
            data["players"] = list(self.players)
        if any(self.surrendered):
            # Written only when a seat surrendered: every other deal reads as it always did.
            data["surrendered"] = list(self.surrendered)
        if self.natural_declarations is not None:
            # Only at a table with naturals; the declarations bind the seated players.
            data["natural_declarations"] = [
                None if declaration is None else declaration.to_dict()
                for declaration in self.natural_declarations
            ]
            data["players"] = list(self.players)
        if self.solver_arrangements is not None:
            data["solver_arrangements"] = [
                None if arrangement is None else _rows_to_dict(arrangement)
                for arrangement in self.solver_arrangements
            ]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PublishedDeal:
        """Read the JSON form; malformed data raises :class:`FairnessError` naming the field."""
        try:
            if data.get("format") != FORMAT_VERSION:
                raise FairnessError(f"unknown published deal format {data.get('format')!r}")
            record = data["record"]
            recorded = data["recorded"]
            return cls(
                table_id=uuid.UUID(data["table_id"]),
                deal_number=_int(data["deal_number"], "deal_number"),
                rule_set=RuleSet.from_dict(data["rule_set"]),
                seat_count=_int(data["seat_count"], "seat_count"),
                dealer=_int(data["dealer"], "dealer"),
                seed_commitment=bytes.fromhex(data["seed_commitment"]),
                seed=bytes.fromhex(data["seed"]),
                contributions=tuple(_optional_bytes(value) for value in data["contributions"]),
                cut_position=_int(data["cut_position"], "cut_position"),
                record=DealRecord(
                    deck=bytes.fromhex(record["deck"]),
                    cut_deck=bytes.fromhex(record["cut_deck"]),
                    hands=tuple(bytes.fromhex(digest) for digest in record["hands"]),
                ),
                seat_commitments=tuple(
                    _optional_bytes(value) for value in data["seat_commitments"]
                ),
                reveals=tuple(_reveal_from_dict(value) for value in data["reveals"]),
                solver_seats=tuple(bool(value) for value in data.get("solver_seats", ())),
                solver_arrangements=_solver_arrangements(data.get("solver_arrangements")),
                commitment_schemes=tuple(
                    _int(value, "commitment_schemes")
                    for value in data.get("commitment_schemes", ())
                ),
                players=tuple(_optional_text(value) for value in data.get("players", ())),
                surrendered=tuple(_flag(value) for value in data.get("surrendered", ())),
                natural_declarations=_declarations(data.get("natural_declarations")),
                recorded_fouls=tuple(bool(value) for value in recorded["fouls"]),
                recorded_scores=DealScore(
                    pairs=tuple(
                        PairResult(
                            seat_a=_int(pair["seats"][0], "seats"),
                            seat_b=_int(pair["seats"][1], "seats"),
                            rows=_rows(pair["rows"]),
                            delta=_int(pair["delta"], "delta"),
                        )
                        for pair in recorded["pairs"]
                    ),
                    totals=tuple(_int(value, "totals") for value in recorded["totals"]),
                ),
            )
        except (KeyError, TypeError, IndexError, AttributeError) as error:
            raise FairnessError(f"malformed published deal: missing or bad field {error}") from None
        except (CardError, RuleSetError) as error:
            raise FairnessError(f"malformed published deal: {error}") from None
        except ValueError as error:
            if isinstance(error, FairnessError):
                raise
            raise FairnessError(f"malformed published deal: {error}") from None


def _declarations(value: object) -> tuple[Declaration | None, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise FairnessError("malformed published deal: natural_declarations must be a list")
    return tuple(None if item is None else Declaration.from_dict(item) for item in value)


def _optional_hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def _optional_bytes(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _optional_text(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise FairnessError(f"malformed published deal: a player id must be text, not {value!r}")
    return value


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FairnessError(f"malformed published deal: {name} must be an integer, not {value!r}")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise FairnessError(
            f"malformed published deal: surrendered must hold booleans, not {value!r}"
        )
    return value


def _rows(value: Sequence[object]) -> tuple[int, int, int]:
    first, second, third = (_int(item, "rows") for item in value)
    return (first, second, third)


def _rows_to_dict(arrangement: Arrangement) -> dict[str, str]:
    return {
        "front": format_cards(arrangement.front),
        "middle": format_cards(arrangement.middle),
        "back": format_cards(arrangement.back),
    }


def _reveal_to_dict(reveal: Reveal | None) -> dict[str, str] | None:
    if reveal is None:
        return None
    return {**_rows_to_dict(reveal.arrangement), "nonce": reveal.nonce.hex()}


def _rows_from_dict(value: Mapping[str, str]) -> Arrangement:
    return Arrangement(_row(value["front"]), _row(value["middle"]), _row(value["back"]))


def _solver_arrangements(
    value: Sequence[Mapping[str, str] | None] | None,
) -> tuple[Arrangement | None, ...] | None:
    if value is None:
        return None
    return tuple(None if rows is None else _rows_from_dict(rows) for rows in value)


def _row(text: str) -> tuple[Card, ...]:
    # Repeated cards are kept, not refused: a published reveal is evidence, judged by the verifier.
    return tuple(Card.parse(token) for token in text.split())


def _reveal_from_dict(value: Mapping[str, str] | None) -> Reveal | None:
    if value is None:
        return None
    return Reveal(arrangement=_rows_from_dict(value), nonce=bytes.fromhex(value["nonce"]))

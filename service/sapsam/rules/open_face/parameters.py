"""The open-face rule set: every choice the sources leave to a table, as one frozen value.

Like the closed game's ``RuleSet`` it is recorded whole (``to_dict``), read back strictly
(``from_dict``: unknown keys, wrong types and out-of-range values raise
:class:`OpenFaceRulesError` naming the key) and validated on construction, so an old deal replays
under the rules it was played with. docs/rules.md §8 gives each parameter's source sentence. The
named rule sets a table may choose are ``sapsam.rules.open_face.presets``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from sapsam.quoting import quote_prefix
from sapsam.rules.cards import RANK_CHARS
from sapsam.rules.royalty_tables import AMERICAN, RUSSIAN

HAND_CARDS: Final = 13
"""Cards a finished open-face hand holds: front 3, middle 5, back 5."""
DECK_CARDS: Final = 52
MIN_SEATS: Final = 2
MAX_SEATS: Final = 4
MAX_POINTS: Final = 1_000
"""Most points for ``two_of_three_points``, ``scoop_points`` and ``middle_trips_royalty``."""
PROGRESSIVE_MOST_CARDS: Final = 17
"""A progressive Fantasyland's largest hand (front trips); see ``fantasyland_cards``."""
MAX_CONSECUTIVE_LIMIT: Final = 100
MAX_MOVE_SECONDS: Final = 86_400
"""Most seconds for ``move_seconds`` (one day, as the closed game's deadlines)."""
OPEN_FACE_ROYALTY_TABLES: Final = (AMERICAN.name, RUSSIAN.name)
"""The royalty tables of ``sapsam.rules.royalty_tables`` an open-face rule set may name: the two
that sources 001 and 003 print for open face."""


class OpenFaceRulesError(ValueError):
    """An open-face rule set is malformed; the message names the key."""


class FantasylandCards(StrEnum):
    """How many cards a Fantasyland hand gets (``sapsam.rules.open_face.fantasyland``).

    * ``thirteen``: 13 at once, whatever the qualifying front (001, 003).
    * ``progressive``: 14 for QQ, 15 for KK, 16 for AA, 17 for trips; the cards beyond 13 are
      discarded unseen. Not in the sources (issue #18 asks for it as an option); a re-entry gets
      14. Issue #19 asks it for Pineapple too, where it is the same option.
    * ``fourteen``: 14 at once, 13 placed and 1 discarded unseen (Pineapple's Fantasyland: 001's
      «Ананас» and 003's «jucătorului i se dau 14 cărți, iar el trebuie să folosească doar 13, să
      arunce cartea rămasă», "the player is given 14 cards and must use only 13, discarding the
      remaining card"); a re-entry gets 14 too.
    """

    THIRTEEN = "thirteen"
    PROGRESSIVE = "progressive"
    FOURTEEN = "fourteen"


class MiddleRow(StrEnum):
    """How the middle row is ranked (docs/rules.md §8.10).

    * ``high``: as every other row (classic, Turbo, Pineapple).
    * ``deuce_to_seven``: 2-7 Pineapple (001: «в Среднем боксе нужно собирать самую слабую
      комбинацию», "in the middle box one must make the weakest combination"): the middle is a
      deuce-to-seven lowball hand (straights and flushes count against it, aces are high), and
      between two seats the weaker middle wins the row («сравнивается в зеркальном
      отражении», "is compared mirrored"). It earns no royalty (the sources print none).
    """

    HIGH = "high"
    DEUCE_TO_SEVEN = "deuce_to_seven"


class LowballOrder(StrEnum):
    """When a hand whose middle is lowball (``MiddleRow.DEUCE_TO_SEVEN``) is dead.

    * ``middle_weakest`` (001 read literally: «он должен быть самым слабым», "it must be the
      weakest"): the rows must stand back >= front >= middle by the usual high ranking.
    * ``back_over_front``: only back >= front; the middle is free (2-7 open face as commonly
      played; the other reading of a source that names no order).
    """

    MIDDLE_WEAKEST = "middle_weakest"
    BACK_OVER_FRONT = "back_over_front"


class FinnishTwo(StrEnum):
    """Finnish 2♠ (003: «Ea dublează redevențele pentru combinația din cutia în care se află,
    indiferent dacă cutia este câștigată sau pierdută», "it doubles the royalties for the
    combination of the box it is in, whether the box is won or lost").

    * ``off``: no bonus.
    * ``row``: between the 2♠'s holder and each opponent, both royalties of the row it sits in
      are doubled (003's second example: a pair with the 2♠ in the back against a back full house
      pays the full house twice, 12).
    * ``own``: only the holder's own royalty of that row is doubled (003's first example alone).

    A dead hand's 2♠ doubles nothing (a dead hand's rows are not compared).
    """

    OFF = "off"
    ROW = "row"
    OWN = "own"


class FantasylandReentry(StrEnum):
    """What a Fantasyland hand needs for the next deal to be a Fantasyland again.

    * ``none``: nothing does; Fantasyland is never repeated.
    * ``front_trips_back_quads``: trips in front, or four of a kind or better in the back (001's
      general rule).
    * ``front_trips_middle_full_house_back_quads``: as above, or a full house or better in the
      middle (001 for its "classic" and "turbo" variants, 003's first list).
    * ``row_royalty_over_ten``: a row earning more than 10 royalty points (003's Mercier/Deeb
      rule taken by its number).
    """

    NONE = "none"
    FRONT_TRIPS_BACK_QUADS = "front_trips_back_quads"
    FRONT_TRIPS_MIDDLE_FULL_HOUSE_BACK_QUADS = "front_trips_middle_full_house_back_quads"
    ROW_ROYALTY_OVER_TEN = "row_royalty_over_ten"


class OpenFaceTimeoutPolicy(StrEnum):
    """What a seat that lets its move time run out gets (``sapsam.rules.open_face.automatic``).

    * ``dead_for_set`` (001): the hand is dead until the end of the set; its cards are still
      dealt and placed automatically, from the back row to the front.
    * ``biggest_row_first`` (003): this street's cards are placed automatically from the biggest
      row down, the hand is not killed, and a placement that keeps it alive is preferred.
    """

    DEAD_FOR_SET = "dead_for_set"
    BIGGEST_ROW_FIRST = "biggest_row_first"


class AutomaticMoves(StrEnum):
    """Whether the service places a seat's cards for it when there is nothing to decide.

    * ``forced`` (001): when only one placement exists, when the hand is already dead, or when
      every placement kills it; never into a dead hand while a placement keeps it alive.
    * ``off``: the seat always places its own cards (a timeout still places them).
    """

    FORCED = "forced"
    OFF = "off"


CLASSIC_STREETS: Final = (5, 1, 1, 1, 1, 1, 1, 1, 1)
TURBO_STREETS: Final = (5, 4, 4)
PINEAPPLE_STREETS: Final = (5, 2, 2, 2, 2)
"""Cards placed on each street of Pineapple; with ``street_discards`` 1, streets after the first
deal 3 (001: «5+2+2+2+2»)."""
MAX_STREET_DISCARDS: Final = 3


@dataclass(frozen=True)
class OpenFaceRules:
    """Every parameter of an open-face game; the defaults are 001's classic game."""

    name: str = "custom"
    street_cards: tuple[int, ...] = CLASSIC_STREETS
    """Cards a seat places on each street: 5 then 1 x 8 (classic), 5 + 4 + 4 (Turbo),
    5 + 2 + 2 + 2 + 2 (Pineapple). They sum to 13."""
    street_discards: int = 0
    """Cards dealt beyond those placed on each street after the first, discarded unseen by the
    others: 0 (classic, Turbo), 1 (Pineapple: 3 dealt, 2 placed, 1 discarded). See
    ``dealt_street_cards``."""
    min_seats: int = MIN_SEATS
    max_seats: int = MAX_SEATS
    two_of_three_points: int = 1
    """Points for winning two of the three rows (003's alternative: 2)."""
    scoop_points: int = 6
    """Points for winning all three rows, and what a dead hand pays each live opponent."""
    royalty_table: str = "american"
    """The royalty table by name: ``american`` or ``russian`` (``sapsam.rules.royalty_tables``)."""
    middle_trips_royalty: int = 2
    """The middle row's trips royalty, replacing the table's: 001 and 003's tables pay 2, 003's
    PokerStars table 0 («Opțiune alternativă: Totul este la fel, doar că există și un bonus pentru
    set», "alternative: all the same, only there is also a bonus for a set")."""
    fantasyland_entry_rank: str | None = "Q"
    """The lowest front pair that earns Fantasyland (``"Q"``: QQ or better, trips included);
    ``None``: no Fantasyland."""
    fantasyland_cards: FantasylandCards = FantasylandCards.THIRTEEN
    fantasyland_reentry: FantasylandReentry = (
        FantasylandReentry.FRONT_TRIPS_MIDDLE_FULL_HOUSE_BACK_QUADS
    )
    fantasyland_max_consecutive: int | None = 2
    """Most Fantasyland deals in a row for one seat (the entry and one repeat); ``None``:
    unlimited (Mercier/Deeb)."""
    timeout_policy: OpenFaceTimeoutPolicy = OpenFaceTimeoutPolicy.DEAD_FOR_SET
    automatic_moves: AutomaticMoves = AutomaticMoves.FORCED
    move_seconds: int | None = None
    """Seconds a seat has for each placement, from the moment it is due; ``None``: no limit, so
    ``timeout_policy`` never applies (the sources give no number)."""
    reveal_seconds: int | None = None
    """At a table without ``move_seconds``: seconds a committed Fantasyland hand has to be
    opened once every hand is placed and set (``FantasylandRevealsOpened``; with a move limit
    the reveals have ``move_seconds``, like any move). A hand not opened by then is dead
    (docs/rules.md §8.7). Every preset sets ``presets.REVEAL_SECONDS``: the reveal asks no
    decision (the client holds the rows and nonce it committed to), so a table without move
    limits, where every other move may wait, still cannot be held for longer than a reconnect.
    ``None`` (a rule set recorded before the key): no reveal limit without ``move_seconds``, as
    then."""
    middle_row: MiddleRow = MiddleRow.HIGH
    lowball_order: LowballOrder = LowballOrder.MIDDLE_WEAKEST
    """Only read when ``middle_row`` is ``deuce_to_seven``."""
    finnish_two_of_spades: FinnishTwo = FinnishTwo.OFF

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def dealt_street_cards(self) -> tuple[int, ...]:
        """Cards dealt to a normal seat on each street: ``street_cards`` plus ``street_discards``
        on every street after the first (Pineapple: 5, 3, 3, 3, 3)."""
        return tuple(
            count + (self.street_discards if street else 0)
            for street, count in enumerate(self.street_cards)
        )

    @property
    def normal_hand_cards(self) -> int:
        """Cards a normal hand is dealt in all (13; Pineapple 17)."""
        return sum(self.dealt_street_cards)

    @property
    def reveal_limit(self) -> int | None:
        """Seconds a committed Fantasyland hand has to be opened: ``move_seconds`` at a table
        with a move limit, else ``reveal_seconds``; None: no limit."""
        return self.reveal_seconds if self.move_seconds is None else self.move_seconds

    @property
    def lowball_middle(self) -> bool:
        return self.middle_row is MiddleRow.DEUCE_TO_SEVEN

    @property
    def most_fantasyland_cards(self) -> int:
        """The most cards one Fantasyland hand can get under these rules."""
        if self.fantasyland_cards is FantasylandCards.PROGRESSIVE:
            return PROGRESSIVE_MOST_CARDS
        if self.fantasyland_cards is FantasylandCards.FOURTEEN:
            return HAND_CARDS + 1
        return HAND_CARDS

    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain JSON value (enums as strings, the streets as a list); a field
        added with Pineapple (``PINEAPPLE_KEYS``) only when it differs from its default, so a
        rule set of the classic game is recorded byte for byte as before them."""
        result: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in PINEAPPLE_KEYS and value == field.default:
                continue
            if isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            result[field.name] = value
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OpenFaceRules:
        """Read a rule set from plain values, strictly; a missing key takes its default."""
        if not isinstance(data, Mapping):
            raise OpenFaceRulesError(f"a rule set must be an object, got {type(data).__name__}")
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise OpenFaceRulesError(
                f"unknown open-face rule set key {quote_prefix(unknown[0])} "
                f"(known keys: {', '.join(sorted(known))})"
            )
        values = dict(data)
        streets = values.get("street_cards")
        if isinstance(streets, list):
            values["street_cards"] = tuple(streets)
        return cls(**values)

    def to_json(self) -> str:
        """Canonical JSON, as a table's first event records it: sorted keys, no white space,
        integers only."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> OpenFaceRules:
        """Read a rule set from JSON, strictly (:meth:`from_dict`; a float is refused)."""
        try:
            data = json.loads(text, parse_float=_refuse_float, parse_constant=_refuse_float)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise OpenFaceRulesError(f"rule set is not valid JSON: {error}") from None
        return cls.from_dict(data)


PINEAPPLE_KEYS: Final = frozenset(
    {"street_discards", "middle_row", "lowball_order", "finnish_two_of_spades", "reveal_seconds"}
)
"""The keys added after open face first shipped (issue #19's, and ``reveal_seconds``):
recorded only when not at their defaults (the rules' version mark: a record without them is a
rule set of before, read back with the defaults)."""


def _refuse_float(text: str) -> Any:
    raise OpenFaceRulesError(f"rule sets hold integers only, got {text}")


_ENUM_FIELDS: Final[Mapping[str, type[StrEnum]]] = MappingProxyType(
    {
        "fantasyland_cards": FantasylandCards,
        "fantasyland_reentry": FantasylandReentry,
        "timeout_policy": OpenFaceTimeoutPolicy,
        "automatic_moves": AutomaticMoves,
        "middle_row": MiddleRow,
        "lowball_order": LowballOrder,
        "finnish_two_of_spades": FinnishTwo,
    }
)


def _require_int(key: str, value: object, minimum: int, maximum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise OpenFaceRulesError(
            f"rule set key {key!r} must be an integer, got {quote_prefix(value)}"
        )
    if not minimum <= value <= maximum:
        shown = str(value) if abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"
        raise OpenFaceRulesError(
            f"rule set key {key!r} must be in {minimum}..{maximum}, got {shown}"
        )


def _validate(rules: OpenFaceRules) -> None:
    name = rules.name
    if not isinstance(name, str) or not name.strip() or len(name) > 64 or not name.isprintable():
        raise OpenFaceRulesError(
            f"rule set key 'name' must be printable text of 1 to 64 characters, "
            f"got {quote_prefix(name)}"
        )
    for key, enum_type in _ENUM_FIELDS.items():
        value = getattr(rules, key)
        if not isinstance(value, enum_type):
            allowed = ", ".join(member.value for member in enum_type)
            try:
                object.__setattr__(rules, key, enum_type(value))
            except (ValueError, TypeError):
                raise OpenFaceRulesError(
                    f"rule set key {key!r} must be one of {allowed}; got {quote_prefix(value)}"
                ) from None
    streets = rules.street_cards
    if not isinstance(streets, tuple) or not streets or len(streets) > HAND_CARDS:
        raise OpenFaceRulesError(
            f"rule set key 'street_cards' must be a list of 1 to {HAND_CARDS} counts, "
            f"got {quote_prefix(streets)}"
        )
    for count in streets:
        _require_int("street_cards", count, 1, HAND_CARDS)
    if sum(streets) != HAND_CARDS:
        raise OpenFaceRulesError(
            f"rule set key 'street_cards' must deal {HAND_CARDS} cards in all, "
            f"got {sum(streets)} ({list(streets)})"
        )
    _require_int("street_discards", rules.street_discards, 0, MAX_STREET_DISCARDS)
    _require_int("min_seats", rules.min_seats, MIN_SEATS, MAX_SEATS)
    _require_int("max_seats", rules.max_seats, MIN_SEATS, MAX_SEATS)
    if rules.min_seats > rules.max_seats:
        raise OpenFaceRulesError(
            f"rule set key 'min_seats' ({rules.min_seats}) exceeds 'max_seats' ({rules.max_seats})"
        )
    _require_int("two_of_three_points", rules.two_of_three_points, 0, MAX_POINTS)
    _require_int("scoop_points", rules.scoop_points, 0, MAX_POINTS)
    if rules.two_of_three_points > rules.scoop_points:
        raise OpenFaceRulesError(
            f"rule set key 'two_of_three_points' ({rules.two_of_three_points}) exceeds "
            f"'scoop_points' ({rules.scoop_points}): a scoop must pay at least a 2-1 win"
        )
    if rules.royalty_table not in OPEN_FACE_ROYALTY_TABLES:
        raise OpenFaceRulesError(
            f"rule set key 'royalty_table' must be one of "
            f"{', '.join(OPEN_FACE_ROYALTY_TABLES)}; got {quote_prefix(rules.royalty_table)}"
        )
    _require_int("middle_trips_royalty", rules.middle_trips_royalty, 0, MAX_POINTS)
    entry = rules.fantasyland_entry_rank
    if entry is not None and (not isinstance(entry, str) or entry not in RANK_CHARS):
        raise OpenFaceRulesError(
            f"rule set key 'fantasyland_entry_rank' must be a rank ({' '.join(RANK_CHARS)}) or "
            f"null, got {quote_prefix(entry)}"
        )
    limit = rules.fantasyland_max_consecutive
    if limit is not None:
        _require_int("fantasyland_max_consecutive", limit, 1, MAX_CONSECUTIVE_LIMIT)
    if rules.move_seconds is not None:
        _require_int("move_seconds", rules.move_seconds, 1, MAX_MOVE_SECONDS)
    if rules.reveal_seconds is not None:
        _require_int("reveal_seconds", rules.reveal_seconds, 1, MAX_MOVE_SECONDS)
    # 001: «В ананас играют не более трех участников», "no more than three play Pineapple": the
    # deck must hold every seat's dealt cards, discards included (3 x 17 = 51).
    if rules.max_seats * rules.normal_hand_cards > DECK_CARDS:
        raise OpenFaceRulesError(
            f"rule set key 'max_seats' {rules.max_seats}: hands of {rules.normal_hand_cards} "
            f"dealt cards ({list(rules.dealt_street_cards)}) need more than {DECK_CARDS} cards "
            f"(at most {DECK_CARDS // rules.normal_hand_cards} seats)"
        )
    # Every seat may be in Fantasyland at once (001: «Фантазии раскладываются в одно время»,
    # "fantasies are set at the same time"), so the deck must hold the largest hand for each.
    if rules.max_seats * rules.most_fantasyland_cards > DECK_CARDS:
        raise OpenFaceRulesError(
            f"rule set key 'fantasyland_cards' {rules.fantasyland_cards.value}: "
            f"{rules.max_seats} seats of up to {rules.most_fantasyland_cards} cards need more "
            f"than {DECK_CARDS} cards (at most "
            f"{DECK_CARDS // rules.most_fantasyland_cards} seats)"
        )

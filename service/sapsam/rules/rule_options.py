"""The named options of a rule set: the enumerations its fields take (docs/rules.md §2.1).

Each is a ``StrEnum`` whose values are what a recorded rule set holds, so they never change; a new
reading is a new member (and, when it scores differently, a new rules version). The options of the
royalties and naturals live with their rules (``sapsam.rules.royalties``,
``sapsam.rules.naturals``); these are the rest. ``sapsam.rules.ruleset`` re-exports them.
"""

from __future__ import annotations

from enum import StrEnum


class ScoringMethod(StrEnum):
    """How one pair of players settles a deal (docs/rules.md §1.6 and §2.3).

    * ``per_row``: each row won +1 unit, lost -1, tied 0 (Pagat's basic scoring).
    * ``two_four``: per row, plus 1 unit to the player holding the majority (``majority``:
      2-1 nets +2, 3-0 +4).
    * ``one_six``: ``one_six_two_of_three`` units to the player holding the majority,
      ``one_six_scoop`` units for winning all three.
    * ``per_row_scoop_bonus``: per row, plus ``scoop_bonus`` units for winning all three.
    """

    PER_ROW = "per_row"
    TWO_FOUR = "two_four"
    ONE_SIX = "one_six"
    PER_ROW_SCOOP_BONUS = "per_row_scoop_bonus"


class MajorityRule(StrEnum):
    """Who earns the majority: ``two_four``'s extra unit and ``one_six``'s 2-of-3 points
    (docs/rules.md §2.4). A tied row counts for neither seat under both.

    * ``two_rows_won``: the seat that won at least two of the three rows, as the sources say
      (one row won and two tied earns nothing beyond the row). The default from rules version 2.
    * ``more_rows_won``: the seat that won more rows than the other (one row won and two tied
      earns it). Rules version 1 scored every rule set this way.
    """

    TWO_ROWS_WON = "two_rows_won"
    MORE_ROWS_WON = "more_rows_won"


class RowOrder(StrEnum):
    """How the three rows must be ordered, or the hand is a foul (docs/rules.md §1.5).

    * ``non_decreasing``: back >= middle >= front, equal rows allowed (sources 000 and 003; the
      default).
    * ``strictly_increasing``: the back must beat the middle and the middle the front (source
      004). Only a middle equal to the back can differ: a front never equals a middle.
    """

    NON_DECREASING = "non_decreasing"
    STRICTLY_INCREASING = "strictly_increasing"


class SurrenderRule(StrEnum):
    """Whether a seat may surrender its hand, and whom a surrendering seat pays
    (``sapsam.rules.surrender``; docs/rules.md §2.8). Source 002 names the announcement but not
    the price nor who is paid; both readings are here.

    * ``off``: no announcements; every seat plays (the default, and every table before).
    * ``pay_players``: after every seat has confirmed, each seat in turn announces play or
      surrender; a seat that surrenders pays ``surrender_price`` units to each seat that plays,
      whatever that seat's hand turns out to be.
    * ``pay_legal_hands``: as ``pay_players``, but a seat that plays a fouled hand collects
      nothing from a surrendering seat.
    """

    OFF = "off"
    PAY_PLAYERS = "pay_players"
    PAY_LEGAL_HANDS = "pay_legal_hands"


class TimeoutPolicy(StrEnum):
    """What happens to a seat that has not confirmed an arrangement when the deadline passes.

    * ``foul``: the seat is judged fouled.
    * ``solver``: the seat gets the solver's arrangement of its cards.
    """

    FOUL = "foul"
    SOLVER = "solver"

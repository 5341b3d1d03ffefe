"""Open-face Chinese poker (sources 001 and 003; docs/rules.md §8): the pure rules core.

No I/O, no clock, no hidden randomness. Card notation and hand values are the closed game's
(``sapsam.rules.cards``, ``sapsam.rules.hands``); this package adds what open face changes:

* ``parameters``: the family's rule set (``OpenFaceRules``) and its presets;
* ``board``: the three rows as they fill, the street schedule, legal placements;
* ``dead``: dead-hand detection (already dead, every option kills it);
* ``royalty``: what each row of a finished hand earns under the rule set's table;
* ``scoring``: 1-6 per pair with royalties, dead hands, totals;
* ``fantasyland``: entry, re-entry, limits, card counts, a Fantasyland hand's arrangement;
* ``fantasyland_setting``: setting a Fantasyland hand for a bot or a timeout;
* ``automatic``: automatic moves and the two timeout policies;
* ``heuristic``: a simple placement heuristic, the solver's rollout policy and its baseline;
* ``solver``: a seeded Monte Carlo placement solver (``bench/open_face_solver.py``).
"""

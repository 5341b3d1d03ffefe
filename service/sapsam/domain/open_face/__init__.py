"""Open face's domain, played behind the game-family seam (docs/architecture.md, issue #18).

Pure, like the rest of the domain. This package holds the play of one deal: its commands
(``commands``), events (``events``), state (``deal_state``), ``decide`` (``deal_decide``; its
timeouts ``deal_timeouts``), ``evolve`` (``deal_evolve``) and what each caller may see of it
(``deal_views``). The frame around it (seating, the dealer, the seed, the score's events,
series) is the table's; joining the two into the family's ``GameFamily`` is the next step.
"""

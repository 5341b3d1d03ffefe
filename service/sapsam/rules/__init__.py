"""Pure game rules: cards, hand values, arrangements, scoring, rule sets and the solver.

Nothing here performs I/O, reads a clock or draws random numbers.
"""

"""The game domain: commands, events, and the table aggregate's ``decide`` and ``evolve``.

Pure: no I/O, no clock, no randomness. The service supplies time and secrets as command values.
"""

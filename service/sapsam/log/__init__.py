"""The log's format: event records, canonical bytes, the hash chain; no I/O.

The offline verifier needs only this package and the ones below it (rules, fairness, domain).
"""

"""The log's format: event records, canonical bytes, the hash chain, the Merkle tree over the
global order and its proofs (``merkle``, ``merkle_proofs``); no I/O.

The offline verifier needs only this package and the ones below it (rules, fairness, domain).
"""

"""The gRPC front door: servicers, authentication, error mapping and the server itself.

Thin by design: each RPC parses its request, calls the domain and the store, and maps the result
(or the refusal) back. The messages and stubs live in ``sapsam_proto.v1`` (``make proto``).
"""

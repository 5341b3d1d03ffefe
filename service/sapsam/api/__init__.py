"""The gRPC front door: servicers, authentication, error mapping and the server itself.

Thin by design: each RPC parses its request, calls the domain and the store, and maps the result
(or the refusal) back. The server is ``grpc.aio`` and every servicer method is ``async def``, on
the worker's one event loop, awaiting the application layer and the asynchronous store below it
(psycopg's ``AsyncConnectionPool``). The messages and stubs live in ``sapsam_proto.v1``
(``make proto``).
"""

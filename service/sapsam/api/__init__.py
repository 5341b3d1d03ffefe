"""The gRPC front door: servicers, authentication, error mapping and the server itself.

Thin by design: each RPC parses its request, calls the domain and the store, and maps the result
(or the refusal) back. The server is ``grpc.aio``; a servicer method that is still a plain
``def`` (the store below is synchronous psycopg for now) runs on the blocking bridge
(``sapsam.api.blocking``), an ``async def`` one on the event loop. The messages and stubs live in
``sapsam_proto.v1`` (``make proto``).
"""

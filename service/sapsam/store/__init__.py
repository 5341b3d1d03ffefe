"""The PostgreSQL event store: append-only log, projections, subscriptions, embedded server.

Modules, from the bottom up (import from them directly; this package imports nothing, so the pure
modules stay free of database imports):

- ``records``: NewEvent, RecordedEvent, AppendResult and the store's errors (pure);
- ``chain``: the per-stream SHA-256 hash chain and ``verify_stream_chain`` (pure);
- ``reads``: ``read_stream``, ``read_all``, ``stream_version`` (asynchronous, psycopg's
  ``AsyncConnection``); ``offline_reads``: the same reads on a synchronous connection, for the
  audit and the rebuild at start-up;
- ``appends``: ``append`` with optimistic concurrency, idempotent request ids, projections;
- ``projectors``: the ``Projector`` protocol, ``SqlProjector``, where projectors register;
- ``projections``: ``rebuild_projections``, ``prepare_projections``; ``read_model_access``: a read
  model's owner and grants, kept across a rebuild;
- ``subscriptions``: ``follow``, LISTEN/NOTIFY with polling as the fallback;
- ``deal_secrets``: the secret seeds of running deals, outside the log;
- ``event_store``: ``EventStore``, an ``AsyncConnectionPool`` plus projectors in front of the
  above;
- ``schema``: alembic migrations (packaged under ``migrations/``) and the expected schema;
- ``embedded``: ``open_database``, ``DATABASE_URL`` or a private embedded PostgreSQL.
"""

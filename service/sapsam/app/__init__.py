"""The application layer: one handler per command and query, between the API and the store.

Each handler loads the aggregate, lets the pure domain decide, appends the events and answers.
Modules (import from them directly):

- ``tables``: ``TableService``, one method per table command and query, gathered from
  ``table_queries`` (the queries), ``table_seating`` (open a table, seat, draw the dealer) and
  ``deal_commands`` (a deal's commands);
- ``table_runner``: how a table's commands reach the log (decide on the remembered state, append,
  retries on a lost race, request-id replay), with what it keeps: ``table_memory`` (the folded
  tables and when they are current), ``secret_seeds`` (the deal secrets, the hands they deal),
  ``table_locks`` (one command of a table at a time); ``table_plans``: what a command hands the
  runner and what it answers;
- ``deadline_sweep``: timing out the seats of tables past a deadline;
- ``tournaments``: ``TournamentService``, tournament commands and each round's tables;
- ``tournament_results``: the results process crediting finished tournament deals;
- ``tournament_queries``: tournament lists, standings and leaderboards;
- ``store_interface``: the store as this layer sees it (``Store``, ``StoreSession``), which
  ``sapsam.store`` implements: no SQL, no driver here.
"""

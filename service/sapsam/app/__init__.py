"""The application layer: one handler per command and query, between the API and the store.

Each handler loads the aggregate, lets the pure domain decide, appends the events and answers.
Modules (import from them directly):

- ``table_runner``: how a table's commands reach the log (memory of folded tables, retries on a
  lost race, request-id replay, the deal secrets);
- ``tables``: ``TableService``, one method per table command and query;
- ``deadline_sweep``: timing out the seats of tables past a deadline;
- ``tournaments``: ``TournamentService``, tournament commands and each round's tables;
- ``tournament_results``: the results process crediting finished tournament deals;
- ``tournament_queries``: tournament lists, standings and leaderboards;
- ``store_interface``: the store as this layer sees it (``Store``, ``StoreSession``), which
  ``sapsam.store`` implements: no SQL, no driver here.
"""

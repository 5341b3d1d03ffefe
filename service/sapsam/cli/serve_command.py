"""``sapsam serve``: run the game service over gRPC.

The database is ``--database-url`` (else ``DATABASE_URL``) or, with neither, the embedded
PostgreSQL in ``--data-dir`` (else ``SAPSAM_DATA_DIR``, else the user's data directory), started
here and stopped on exit. Migrations are applied before serving. ``--workers N`` runs N server
processes on the same port (SO_REUSEPORT), all on the one database.

The log goes to stderr: with ``--log-format json`` one JSON object a line (time, level, logger,
message, and a call's method, table, seat, status, duration_ms; docs/api.md), with ``text`` a
line for a person. By default text on a terminal, JSON otherwise (a file, a pipe, a service
manager).

Every flag can be given as an environment variable instead: ``--some-flag`` is
``SAPSAM_SOME_FLAG`` (``--database-url`` is ``DATABASE_URL``); the flag wins. The operator token
and the signing key can come from files (mounted secrets): ``--operator-token-file`` and
``SAPSAM_SERVER_KEY_FILE`` (docs/operations.md lists every variable).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from sapsam.api.auth import check_token_format
from sapsam.api.call_log import LOG_FORMATS, configure_logging
from sapsam.api.cors import parse_origins
from sapsam.api.limits import SUGGESTION_BURST, CallerLimits
from sapsam.api.metrics_endpoint import parse_listen
from sapsam.api.server import (
    DEFAULT_LISTEN,
    DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    ServerConfig,
)
from sapsam.api.worker_processes import run_worker_processes
from sapsam.app.solver_processes import DEFAULT_PROCESSES as DEFAULT_SOLVER_PROCESSES
from sapsam.app.solver_processes import WAITING_PER_PROCESS
from sapsam.cli.bootstrap import DEADLINE_GRACE_SECONDS, serve_database
from sapsam.cli.serve_environment import ERRORS_DEST, apply_environment
from sapsam.cli.store_commands import add_database_options
from sapsam.store.standby_reads import DEFAULT_MAX_LAG_SECONDS

FAILED = 1
MAX_TOKEN_TTL_DAYS = 36_500
MAX_READ_LAG_SECONDS = 86_400
MAX_WAITING_SECONDS = 10_000_000
"""The largest --waiting-longer-than (as ``sapsam tables stuck``'s)."""


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser("serve", help="run the game service", description=__doc__)
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        help=f"host:port to listen on (default {DEFAULT_LISTEN})",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes sharing the port (default 1)"
    )
    parser.add_argument("--tls-cert", type=Path, help="PEM certificate chain; enables TLS")
    parser.add_argument("--tls-key", type=Path, help="PEM private key for --tls-cert")
    parser.add_argument(
        "--operator-token",
        help="bearer token for administrative calls (default: none, the operator calls are off)",
    )
    parser.add_argument(
        "--operator-token-file",
        type=Path,
        help="a file holding the operator token (a mounted secret); instead of --operator-token",
    )
    parser.add_argument(
        "--token-ttl-days",
        type=float,
        help="a player's token stops working this many days after it was issued"
        " (TOKEN_EXPIRED; rotating issues a fresh one); default: tokens do not expire",
    )
    add_database_options(parser)
    parser.add_argument(
        "--read-database-url",
        metavar="URL",
        help="a streaming standby of --database-url for the reads that may lag (ListTables,"
        " GetLeaderboard, the audit's ExportDeal, VerifyDeal, ReplayDeal), used only while it is"
        " at most --read-max-lag-seconds behind, else they read the primary"
        ' (docs/operations.md, "Reads on a standby"; default: every read on the primary)',
    )
    parser.add_argument(
        "--read-max-lag-seconds",
        type=float,
        default=DEFAULT_MAX_LAG_SECONDS,
        metavar="SECONDS",
        help="a read routed to the standby sees every write acknowledged this long before it"
        f" (default {DEFAULT_MAX_LAG_SECONDS:g})",
    )
    parser.add_argument(
        "--bench-echo",
        action="store_true",
        help="benchmarking aid: also serve sapsam.bench.v1.EchoService/Echo (see bench/service.py)",
    )
    parser.add_argument(
        "--gc-report",
        type=Path,
        metavar="DIR",
        help="benchmarking aid: each process appends its collector's pauses to DIR/gc-PID.jsonl"
        " (see bench/capacity.py)",
    )
    parser.add_argument(
        "--no-receipts",
        action="store_true",
        help="benchmarking aid: return no signed receipts (docs/transparency.md §9)",
    )
    parser.add_argument(
        "--no-transparency",
        action="store_true",
        help="benchmarking aid: sign no checkpoints nor receipts, serve no TransparencyService",
    )
    _add_stop_and_limit_arguments(parser)
    _add_solver_arguments(parser)
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        help="json: one JSON object a line (time, level, logger, message and a call's fields);"
        " text: a line for a person (default: text when stderr is a terminal, else json)",
    )
    parser.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (docs/operations.md,"
        ' "Metrics"); one process only, not with --workers (default: no metrics)',
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve the same services to browsers over Connect and gRPC-web (HTTP/1.1)"
        " at http://HOST:PORT, through the same authentication and limits (docs/api.md,"
        ' "Browsers: Connect"; default: gRPC only)',
    )
    parser.add_argument(
        "--http-allowed-origins",
        metavar="ORIGINS",
        help="origins (scheme://host[:port], separated by commas; * for any) of pages allowed to"
        ' call the --http services from another origin (CORS; docs/api.md, "Browsers:'
        ' Connect"; default: none, same origin only)',
    )
    parser.add_argument(
        "--deadline-grace-seconds",
        type=float,
        default=DEADLINE_GRACE_SECONDS,
        help="serving time each seat gets after an outage before a deadline that fell in it is"
        f" enforced (default {DEADLINE_GRACE_SECONDS:g}; docs/events.md, DeadlinesExtended)",
    )
    parser.add_argument(
        "--waiting-longer-than",
        type=int,
        metavar="SECONDS",
        help="also count as stuck, in the health detail sapsam.tables.stuck, the logged count"
        " and the sapsam_stuck_tables metric, the tables (not complete) whose last event is"
        " older than this, whatever they wait for: a table without deadlines waiting for an"
        " absent player, a table nobody starts the next deal of (as sapsam tables stuck"
        " --waiting-longer-than; default: only the tables past their deadline count)",
    )
    parser.set_defaults(handler=_serve)
    apply_environment(parser, os.environ)


def _config(arguments: argparse.Namespace) -> ServerConfig:
    if (arguments.tls_cert is None) != (arguments.tls_key is None):
        raise ValueError("--tls-cert and --tls-key go together")
    for path in (arguments.tls_cert, arguments.tls_key):
        if path is not None and not path.is_file():
            raise ValueError(f"no such file: {path}")
    if arguments.workers < 1:
        raise ValueError("--workers must be at least 1")
    if arguments.workers > 1 and arguments.listen.rsplit(":", 1)[-1] == "0":
        raise ValueError("--workers needs a fixed port: each process would pick its own")
    if not 0 < arguments.read_max_lag_seconds <= MAX_READ_LAG_SECONDS:
        raise ValueError(
            f"--read-max-lag-seconds must be above 0 and at most {MAX_READ_LAG_SECONDS}"
        )
    if arguments.read_database_url is not None and arguments.database_url is None:
        raise ValueError("--read-database-url needs --database-url (a standby of it)")
    if arguments.metrics_listen:
        if arguments.workers > 1:
            raise ValueError(
                "--metrics-listen serves one process's metrics: run replicas of one worker each"
                " (deploy/) rather than --workers"
            )
        parse_listen(arguments.metrics_listen)
    if arguments.http is not None:
        _check_http(arguments.http, arguments.workers)
    origins = parse_origins(arguments.http_allowed_origins or "")
    if origins and arguments.http is None:
        raise ValueError("--http-allowed-origins needs --http")
    operator_token = _operator_token(arguments.operator_token, arguments.operator_token_file)
    if operator_token is not None:
        try:
            check_token_format(operator_token)
        except ValueError as error:
            raise ValueError(
                f"the operator token cannot be sent as a bearer token: {error}"
            ) from None
    token_ttl = None
    if arguments.token_ttl_days is not None:
        if not 0 < arguments.token_ttl_days <= MAX_TOKEN_TTL_DAYS:
            raise ValueError(f"--token-ttl-days must be above 0 and at most {MAX_TOKEN_TTL_DAYS}")
        token_ttl = timedelta(days=arguments.token_ttl_days)
    return ServerConfig(
        listen=arguments.listen,
        tls_cert=arguments.tls_cert,
        tls_key=arguments.tls_key,
        operator_token=operator_token,
        token_ttl=token_ttl,
        reuse_port=arguments.workers > 1,
        bench_echo=arguments.bench_echo,
        gc_report=arguments.gc_report,
        grace_seconds=_non_negative(arguments.grace_seconds, "--grace-seconds"),
        drain_seconds=_non_negative(arguments.drain_seconds, "--drain-seconds"),
        limits=_caller_limits(arguments),
        max_receive_message_bytes=_max_message_bytes(arguments.max_message_bytes),
        http_listen=arguments.http,
        http_allowed_origins=origins,
        suggestion_processes=_at_least_one(
            arguments.suggestion_processes, "--suggestion-processes"
        ),
        suggestions_waiting=(
            None
            if arguments.suggestions_waiting is None
            else _at_least_one(arguments.suggestions_waiting, "--suggestions-waiting")
        ),
    )


def _check_http(listen: str, workers: int) -> None:
    host, separator, port = listen.rpartition(":")
    if not separator or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http wants HOST:PORT, not {listen!r}")
    if workers > 1 and int(port) == 0:
        raise ValueError("--workers needs a fixed --http port: each process would pick its own")


def _operator_token(given: str | None, path: Path | None) -> str | None:
    if path is None:
        return given or None
    if given:
        raise ValueError("give the operator token once: --operator-token or --operator-token-file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read the operator token file {path}: {error}") from None
    return text.strip() or None  # a secret file usually ends in a newline


def _serve(arguments: argparse.Namespace) -> int:
    """Open (and migrate) the database, then serve until SIGTERM or SIGINT."""
    from sapsam.keys import ServerKeyError, load_server_keys
    from sapsam.log.records import DatabaseOpenError
    from sapsam.store.embedded import open_database, resolve_data_dir

    for error in getattr(arguments, ERRORS_DEST, ()):
        print(f"sapsam serve: {error}", file=sys.stderr)
    if getattr(arguments, ERRORS_DEST, ()):
        return 2
    try:
        config = _config(arguments)
    except ValueError as error:
        print(f"sapsam serve: {error}", file=sys.stderr)
        return 2
    grace = arguments.deadline_grace_seconds
    if not 0 <= grace <= 86_400:
        print("sapsam serve: --deadline-grace-seconds must be 0 to 86400", file=sys.stderr)
        return 2
    waiting = arguments.waiting_longer_than
    if waiting is not None and not 1 <= waiting <= MAX_WAITING_SECONDS:
        print(
            f"sapsam serve: --waiting-longer-than must be 1 to {MAX_WAITING_SECONDS}",
            file=sys.stderr,
        )
        return 2
    log_format = arguments.log_format or ("text" if _stderr_is_a_terminal() else "json")
    configure_logging(log_format=log_format)
    try:
        data_dir = resolve_data_dir(arguments.data_dir)
        # The key that signs the transparency log: made on the first start, read by each worker.
        load_server_keys(data_dir, create=True)
        with open_database(arguments.database_url, arguments.data_dir, migrate=True) as handle:
            signs = (not arguments.no_transparency, not arguments.no_receipts)
            served = (
                config,
                handle.url,
                grace,
                data_dir,
                *signs,
                log_format,
                arguments.metrics_listen,
                waiting,
                arguments.read_database_url,
                arguments.read_max_lag_seconds,
            )
            if arguments.workers == 1:
                return serve_database(*served)
            return run_worker_processes(arguments.workers, serve_database, served)
    except ServerKeyError as error:
        print(f"sapsam serve: {error}", file=sys.stderr)
        return FAILED
    except DatabaseOpenError as error:
        print(error, file=sys.stderr)
        return FAILED
    except RuntimeError as error:
        print(f"sapsam serve: {error}", file=sys.stderr)
        return FAILED


def _stderr_is_a_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by something that is no file
        return False


_DEFAULT_LIMITS = CallerLimits()
_MIN_MESSAGE_BYTES = 4 * 1024  # below this even an ordinary move would not fit
_GRACE_DEFAULT = ServerConfig().grace_seconds


def _add_stop_and_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The graceful stop's grace period and the limits per caller (docs/api.md, "Limits")."""
    parser.add_argument(
        "--grace-seconds",
        type=float,
        default=_GRACE_DEFAULT,
        help="on SIGTERM, how long calls in flight may take to finish; calls still running then"
        f" are answered UNAVAILABLE (default {_GRACE_DEFAULT:g})",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=0.0,
        help="on SIGTERM, first report NOT_SERVING (gRPC health, /ready) and go on serving every"
        " call this long, so a load balancer checking the health stops sending calls before"
        " any is refused (default 0: stop at once; docs/operations.md)",
    )
    group = parser.add_argument_group("limits per caller (0 turns one off)")
    group.add_argument(
        "--registrations-per-minute",
        type=int,
        default=_DEFAULT_LIMITS.registrations_per_minute,
        help="RegisterPlayer calls per peer address per minute"
        f" (default {_DEFAULT_LIMITS.registrations_per_minute})",
    )
    group.add_argument(
        "--calls-per-second",
        type=float,
        default=_DEFAULT_LIMITS.calls_per_second,
        help="calls per player per second, sustained"
        f" (default {_DEFAULT_LIMITS.calls_per_second:g})",
    )
    group.add_argument(
        "--call-burst",
        type=int,
        default=_DEFAULT_LIMITS.call_burst,
        help=f"calls per player at once (default {_DEFAULT_LIMITS.call_burst})",
    )
    group.add_argument(
        "--streams-per-player",
        type=int,
        default=_DEFAULT_LIMITS.streams_per_caller,
        help="open WatchTable/WatchTournament streams per player"
        f" (default {_DEFAULT_LIMITS.streams_per_caller})",
    )
    group.add_argument(
        "--calls-in-flight-per-player",
        type=int,
        default=_DEFAULT_LIMITS.calls_in_flight_per_caller,
        help="unary calls per player running at once"
        f" (default {_DEFAULT_LIMITS.calls_in_flight_per_caller})",
    )
    group.add_argument(
        "--token-lookups-per-second",
        type=float,
        default=_DEFAULT_LIMITS.token_lookups_per_second,
        help="database look-ups of tokens this process does not know, per peer address per"
        f" second (default {_DEFAULT_LIMITS.token_lookups_per_second:g})",
    )
    group.add_argument(
        "--token-lookup-burst",
        type=int,
        default=_DEFAULT_LIMITS.token_lookup_burst,
        help="such look-ups per peer address at once"
        f" (default {_DEFAULT_LIMITS.token_lookup_burst})",
    )
    group.add_argument(
        "--suggestions-per-minute",
        type=int,
        default=_DEFAULT_LIMITS.suggestions_per_minute,
        help="GetSuggestion calls (each runs the solver) per player per minute, after a"
        f" burst of {SUGGESTION_BURST} (default {_DEFAULT_LIMITS.suggestions_per_minute})",
    )
    group.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
        help="largest request accepted; larger ones are RESOURCE_EXHAUSTED"
        f" (default {DEFAULT_MAX_RECEIVE_MESSAGE_BYTES})",
    )


def _add_solver_arguments(parser: argparse.ArgumentParser) -> None:
    """GetSuggestion's solver processes, per server process (docs/api.md, "Limits")."""
    group = parser.add_argument_group("GetSuggestion's solver, per server process")
    group.add_argument(
        "--suggestion-processes",
        type=int,
        default=DEFAULT_SOLVER_PROCESSES,
        help="solver processes answering GetSuggestion, started on the first, at a lower CPU"
        f" priority (default {DEFAULT_SOLVER_PROCESSES})",
    )
    group.add_argument(
        "--suggestions-waiting",
        type=int,
        help="suggestions being solved or queued at once; beyond it one is refused"
        f" SUGGESTIONS_BUSY (default {WAITING_PER_PROCESS} per solver process)",
    )


def _at_least_one(value: int, flag: str) -> int:
    if value < 1:
        raise ValueError(f"{flag} must be at least 1")
    return value


def _non_negative(value: float, flag: str) -> float:
    if not value >= 0:  # also refuses NaN
        raise ValueError(f"{flag} must be 0 or more")
    return value


def _caller_limits(arguments: argparse.Namespace) -> CallerLimits:
    limits = CallerLimits(
        registrations_per_minute=int(
            _non_negative(arguments.registrations_per_minute, "--registrations-per-minute")
        ),
        calls_per_second=_non_negative(arguments.calls_per_second, "--calls-per-second"),
        call_burst=int(_non_negative(arguments.call_burst, "--call-burst")),
        streams_per_caller=int(_non_negative(arguments.streams_per_player, "--streams-per-player")),
        calls_in_flight_per_caller=int(
            _non_negative(arguments.calls_in_flight_per_player, "--calls-in-flight-per-player")
        ),
        token_lookups_per_second=_non_negative(
            arguments.token_lookups_per_second, "--token-lookups-per-second"
        ),
        token_lookup_burst=int(_non_negative(arguments.token_lookup_burst, "--token-lookup-burst")),
        suggestions_per_minute=int(
            _non_negative(arguments.suggestions_per_minute, "--suggestions-per-minute")
        ),
    )
    if limits.calls_per_second > 0 and limits.call_burst < 1:
        raise ValueError("--call-burst must be at least 1 while --calls-per-second is set")
    if limits.token_lookups_per_second > 0 and limits.token_lookup_burst < 1:
        raise ValueError(
            "--token-lookup-burst must be at least 1 while --token-lookups-per-second is set"
        )
    return limits


def _max_message_bytes(value: int) -> int:
    if value < _MIN_MESSAGE_BYTES:
        raise ValueError(f"--max-message-bytes must be at least {_MIN_MESSAGE_BYTES}")
    return value

"""Every ``sapsam`` subcommand imports only what it uses: the pure tools (``hand``, ``arrange``,
``score``) and the offline audit (``audit verify FILE``, ``audit replay FILE``) load no gRPC,
alembic, SQLAlchemy or database driver; only ``serve`` (and the commands that start it: ``demo``,
``tournament``) loads gRPC; alembic and SQLAlchemy load only where a database is migrated
(``migrate``, and the commands that open a database with the migrate-unless-current check); and
``sapsam --help`` imports no subcommand module at all."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

import sapsam
from sapsam import cli
from sapsam.audit import Requester, select_deal, write_lines
from sapsam.audit.sample_anchored import anchored_log
from sapsam.audit.sample_series import recorded_stream
from sapsam.log.signed_note import NoteSigner

HEAVY = ("grpc", "alembic", "sqlalchemy", "psycopg", "psycopg_pool", "sapsam_proto", "google")

# Runs the CLI in a fresh interpreter and prints, as JSON, its exit code and the heavy top-level
# packages that ended up in sys.modules.
PROBE = """
import json, sys
from sapsam.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:  # --help
    code = exit.code
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(%r)))
# sapsam.cli.wording is the parser's own (help in plain words), loaded with sapsam.cli itself.
modules = sorted(name for name in sys.modules
                 if name.startswith("sapsam.cli.") and name != "sapsam.cli.wording")
loaded = sorted(name for name in sys.modules if name.startswith("sapsam."))
print(json.dumps({"code": code, "heavy": heavy, "cli_modules": modules, "sapsam": loaded}),
      file=sys.stderr)
"""


def _probe(*argv: str, stdin: str = "") -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE % json.dumps(HEAVY), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report: dict[str, object] = json.loads(completed.stderr.strip().splitlines()[-1])
    report["stdout"] = completed.stdout
    return report


def _heavy(report: dict[str, object]) -> list[str]:
    return cast(list[str], report["heavy"])


SCORE_INPUT = json.dumps(
    {
        "seats": [
            {"front": "2c 3d 4h", "middle": "5s 6c 7d 8h Ts", "back": "Jc Qd Kh Ac 9s"},
            {"front": "Ah Ad Ks", "middle": "2s 2d 3c 3s 4d", "back": "6h 7h 8c 9h Th"},
        ]
    }
)


@pytest.mark.parametrize(
    ("argv", "stdin", "expected_output"),
    [
        (("hand", "As Ks Qs Js Ts"), "", "royal flush"),
        (("arrange", "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s"), "", "Ts"),
        (("score",), SCORE_INPUT, '"seats"'),
    ],
)
def test_pure_commands_load_no_network_or_database_code(
    argv: tuple[str, ...], stdin: str, expected_output: str
) -> None:
    report = _probe(*argv, stdin=stdin)
    assert report["code"] == 0
    assert expected_output in str(report["stdout"])
    assert report["heavy"] == []
    assert report["cli_modules"] == ["sapsam.cli.rules_commands"]


def test_offline_verification_and_replay_load_no_network_or_database_code(
    tmp_path: Path,
) -> None:
    # An export made by the pure domain, as an auditor at home has it (tests/audit too).
    export = tmp_path / "deal.jsonl"
    deal = select_deal(recorded_stream(2, deals=1), 1, Requester.operator())
    export.write_text("".join(line + "\n" for line in write_lines(deal)), encoding="utf-8")
    verified = _probe("audit", "verify", str(export))
    assert verified["code"] == 4  # nothing anchors it: INTERNALLY CONSISTENT ONLY
    assert "INTERNALLY CONSISTENT ONLY: every check" in str(verified["stdout"])
    assert "1 deal verified" in str(verified["stdout"])
    replayed = _probe("audit", "replay", str(export), "--json")
    assert replayed["code"] == 0
    assert str(replayed["stdout"]).count("\n") > 1
    for report in (verified, replayed):
        assert report["heavy"] == []
    shared = ["sapsam.cli.audit_commands", "sapsam.cli.audit_input"]
    verifying = ["sapsam.cli.audit_verify_command", "sapsam.cli.verify_file"]
    assert verified["cli_modules"] == [*shared, *verifying]
    assert replayed["cli_modules"] == shared
    # design.md: the offline verifier needs the pure layers and audit's offline part only; not
    # even the replay (the table's decide logic) loads, nor the solver, which only a seat the
    # solver arranged calls for.
    loaded = cast(list[str], verified["sapsam"])
    layers = {name.split(".")[1] for name in loaded}
    assert layers <= {
        *("rules", "fairness", "domain", "log", "audit", "cli"),
        *("frozen", "quoting", "plurals"),
    }
    assert set(OFFLINE_NEVER).isdisjoint(loaded)


def test_an_anchored_verification_loads_no_network_or_database_code(tmp_path: Path) -> None:
    # With its proof and a pinned key: the signature (libsodium, sapsam.fairness.ed25519) and the
    # proofs, nothing else.
    signer = NoteSigner.from_seed("sapsam/test", bytes(32))
    log = anchored_log([recorded_stream(2, deals=1)], signer)
    export = tmp_path / "deal.jsonl"
    export.write_text("".join(line + "\n" for line in write_lines(log.deal_export(0, 1))))
    verified = _probe("audit", "verify", str(export), "--server-key", signer.verifier.vkey())
    assert verified["code"] == 0 and "ANCHORED: every event" in str(verified["stdout"])
    assert verified["heavy"] == []
    loaded = cast(list[str], verified["sapsam"])
    assert {name.split(".")[1] for name in loaded} <= {
        "rules",
        "fairness",
        "domain",
        "log",
        "audit",
        "cli",
        "frozen",
        "quoting",
        "plurals",
    }
    assert set(OFFLINE_NEVER).isdisjoint(loaded)


# What ``sapsam audit verify FILE`` must not load: audit's database side, the replay and the
# table's decide logic it runs, the solver (the start-up of a verification, tests above).
OFFLINE_NEVER = (
    "sapsam.audit.database",
    "sapsam.audit.export_proofs",
    "sapsam.audit.projection_audit",
    "sapsam.audit.tournament_audit",
    "sapsam.audit.replay",
    "sapsam.domain.table_decide",
    "sapsam.domain.table_play",
    "sapsam.domain.table_scoring",
    "sapsam.rules.solver",
    # Nor, for a closed deal, open face's audit and domain, or the table's commands and state
    # (the domain's surrender module brings them: imported only for a deal with surrender).
    "sapsam.audit.open_face_deals",
    "sapsam.domain.open_face.table_decide",
    "sapsam.domain.commands",
    "sapsam.domain.table_state",
    "sapsam.domain.table_surrender",
)


def test_the_audit_names_open_faces_family_as_its_domain_does() -> None:
    from sapsam.audit.families import OPEN_FACE_AUDIT, OPEN_FACE_FAMILY
    from sapsam.domain.open_face.table_decide import OPEN_FACE_FAMILY as DOMAIN_NAME

    assert OPEN_FACE_FAMILY == DOMAIN_NAME == OPEN_FACE_AUDIT.name


NETWORK = ("grpc", "sapsam_proto")
MIGRATIONS = ("alembic", "sqlalchemy")


@pytest.mark.parametrize(
    "argv",
    [
        (command.name, "--help")
        for command in cli.SUBCOMMANDS
        if command.name not in ("serve", "demo", "tournament")
    ]
    + [
        ("projections", "rebuild", "--help"),
        ("requests", "prune", "--help"),
        ("tables", "stuck", "--help"),
        ("players", "revoke", "--help"),
        ("audit", "export", "--help"),
    ],
)
def test_help_of_a_subcommand_loads_no_network_or_migration_code(argv: tuple[str, ...]) -> None:
    report = _probe(*argv)
    assert report["code"] == 0
    assert "usage: sapsam" in str(report["stdout"])
    assert set(NETWORK + MIGRATIONS).isdisjoint(_heavy(report))


@pytest.mark.parametrize("command", ["demo", "tournament"])
def test_help_of_the_commands_that_start_a_server_loads_no_network_code(command: str) -> None:
    # They import the server only once they run one.
    report = _probe(command, "--help")
    assert report["code"] == 0
    assert report["heavy"] == []


def test_database_commands_load_no_network_code(database_url: str) -> None:
    unknown_player = "players/00000000-0000-4000-8000-000000000000"
    commands: list[tuple[tuple[str, ...], int, tuple[str, ...]]] = [
        # (argv, exit code, packages it must not load)
        (("migrate",), 0, NETWORK),  # the database is current: nothing to migrate
        # These migrate an older database first; on a current one, the revision check alone.
        (("players", "revoke", unknown_player), 2, NETWORK + MIGRATIONS),
        (("requests", "prune", "--older-than-days", "1"), 0, NETWORK + MIGRATIONS),
        (("projections", "rebuild"), 0, NETWORK + MIGRATIONS),  # builds table_state for stuck
        (("tables", "stuck", "--json"), 0, NETWORK + MIGRATIONS),  # reads: migrate=False
        (("audit", "verify", "--all", "--json"), 0, NETWORK + MIGRATIONS),  # external: no migrate
    ]
    for argv, code, forbidden in commands:
        report = _probe(*argv, "--database-url", database_url)
        assert report["code"] == code, (argv, report)
        assert "psycopg" in _heavy(report), argv
        assert set(forbidden).isdisjoint(_heavy(report)), (argv, report["heavy"])


def test_help_lists_every_command_and_imports_none() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom sapsam.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('sapsam.cli.')"
            " and m != 'sapsam.cli.wording'), file=sys.stderr)",  # the parser's own module
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert completed.stderr.strip() == "[]"
    for command in cli.SUBCOMMANDS:
        assert command.name in completed.stdout


def test_the_placeholders_say_what_the_modules_say() -> None:
    # The lazy parser's help (summaries from SUBCOMMANDS) is the full parser's, word for word.
    assert cli.build_parser(()).format_help() == cli.build_parser().format_help()


def test_every_registered_subcommand_is_listed() -> None:
    # A module that registers a subcommand SUBCOMMANDS does not name would be unreachable lazily.
    parser = cli.build_parser()
    subparsers = [
        action
        for action in parser._actions  # argparse exposes its subparsers action only here
        if isinstance(action, argparse._SubParsersAction)
    ]
    assert len(subparsers) == 1
    assert list(subparsers[0].choices) == [command.name for command in cli.SUBCOMMANDS]


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"sapsam {sapsam.__version__}"

"""Every `sapsam serve` flag has an environment variable (sapsam.cli.serve_environment): the
variable sets the default, the flag wins, bad values are refused naming what was wrong."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from sapsam.cli import build_parser
from sapsam.cli.serve_command import _config, _operator_token
from sapsam.cli.serve_environment import ERRORS_DEST, variable_name

SERVE = ("sapsam.cli.serve_command",)


def _parse(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *argv: str) -> argparse.Namespace:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return build_parser(SERVE).parse_args(["serve", *argv])


def _serve_parser() -> argparse.ArgumentParser:
    parser = build_parser(SERVE)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices["serve"]  # type: ignore[no-any-return]


def test_each_flag_names_its_variable_in_help() -> None:
    parser = _serve_parser()
    flags = [
        flag
        for action in parser._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help"
    ]
    assert "--operator-token-file" in flags
    for action in parser._actions:
        long_flags = [flag for flag in action.option_strings if flag.startswith("--")]
        if long_flags and long_flags[0] != "--help":
            assert action.help is not None
            assert action.help.endswith(f"[env {variable_name(long_flags[0])}]")


def test_names() -> None:
    assert variable_name("--grace-seconds") == "SAPSAM_GRACE_SECONDS"
    assert variable_name("--database-url") == "DATABASE_URL"
    assert variable_name("--data-dir") == "SAPSAM_DATA_DIR"
    assert variable_name("--operator-token") == "SAPSAM_OPERATOR_TOKEN"


def test_variables_set_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = _parse(
        monkeypatch,
        {
            "SAPSAM_LISTEN": "0.0.0.0:6000",
            "SAPSAM_WORKERS": "3",
            "SAPSAM_NO_RECEIPTS": "yes",
            "SAPSAM_BENCH_ECHO": "off",
            "SAPSAM_LOG_FORMAT": "json",
            "SAPSAM_CALLS_PER_SECOND": "7.5",
            "SAPSAM_TLS_CERT": "/run/secrets/cert.pem",
            "DATABASE_URL": "postgresql://db/sapsam",
            "SAPSAM_GRACE_SECONDS": "",  # set to nothing: the built-in default
        },
    )
    assert arguments.listen == "0.0.0.0:6000"
    assert arguments.workers == 3
    assert arguments.no_receipts is True
    assert arguments.bench_echo is False
    assert arguments.log_format == "json"
    assert arguments.calls_per_second == 7.5
    assert arguments.tls_cert == Path("/run/secrets/cert.pem")
    assert arguments.database_url == "postgresql://db/sapsam"
    assert arguments.grace_seconds == 5.0
    assert getattr(arguments, ERRORS_DEST) == ()


def test_a_flag_wins_over_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = _parse(monkeypatch, {"SAPSAM_WORKERS": "3"}, "--workers", "2")
    assert arguments.workers == 2


def test_a_bad_number_is_refused_naming_the_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _parse(monkeypatch, {"SAPSAM_WORKERS": "many"})
    assert stopped.value.code == 2
    assert "--workers: invalid int value: 'many'" in capsys.readouterr().err


def test_a_bad_switch_or_choice_is_refused_when_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = _parse(monkeypatch, {"SAPSAM_NO_RECEIPTS": "perhaps", "SAPSAM_LOG_FORMAT": "xml"})
    errors = getattr(arguments, ERRORS_DEST)
    assert any(error.startswith("SAPSAM_NO_RECEIPTS must be one of") for error in errors)
    assert "SAPSAM_LOG_FORMAT must be one of text, json" in errors
    assert arguments.handler(arguments) == 2  # refused before anything starts
    assert "sapsam serve: SAPSAM_LOG_FORMAT must be one of text, json" in capsys.readouterr().err


def test_the_operator_token_from_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "operator-token"
    secret.write_text("operator-secret-token-0123456789\n", encoding="utf-8")
    arguments = _parse(monkeypatch, {"SAPSAM_OPERATOR_TOKEN_FILE": str(secret)})
    assert _config(arguments).operator_token == "operator-secret-token-0123456789"
    with pytest.raises(ValueError, match="give the operator token once"):
        _operator_token("another", secret)
    with pytest.raises(ValueError, match="cannot read the operator token file"):
        _operator_token(None, tmp_path / "missing")

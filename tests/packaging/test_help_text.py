"""Every ``--help`` of ``sapsam``, ``sapsam-play`` and ``sapsam-bot``, every subcommand's
included, is written for the person reading it: a description, every option explained, the
default named for each option that has one, and no reStructuredText markup (the docstrings help
is made from are for the developers). Flags renamed for consistency (``--seat-count``) still
work under their old spelling, hidden from the help: scripts use them.

A failure names the command and what is wrong with its help."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from sapsam.cli import build_parser
from sapsam.cli.wording import plain_text, plural
from sapsam_client import bot, player_records, terminal

# Markup a person should never see: ``literal``, :role:`x`, **strong**, "text::", ".. note::".
MARKUP = re.compile(r"``|:[a-z]+:`|\*\*|::\s*$|^\s*\.\. [a-z-]+::", re.MULTILINE)

# Defaults that need no words: a flag's False, a list the option fills, none at all.
SILENT_DEFAULTS: tuple[object, ...] = (None, False, [], argparse.SUPPRESS)

# Commands owned by others whose help did not meet this yet; each with a TODO naming the owner.
KNOWN_EXCEPTIONS: dict[str, str] = {}


def _walk(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _walk(child, f"{path} {name}")


def _programs() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield from _walk(build_parser(), "sapsam")
    yield from _walk(terminal.build_parser(), "sapsam-play")
    yield from _walk(player_records.build_parser(), "sapsam-play")
    yield from _walk(bot.build_parser(), "sapsam-bot")


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """The one-line help of each subcommand a parser lists."""
    summaries: dict[str, str | None] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest: choice.help for choice in action._choices_actions}
            summaries.update({name: listed.get(name) for name in action.choices})
    return summaries


def _problems(path: str, parser: argparse.ArgumentParser) -> list[str]:
    problems = []
    if not (parser.description or "").strip():
        problems.append("no description")
    for name, summary in _summaries(parser).items():
        if not (summary or "").strip():
            problems.append(f"subcommand {name!r} has no one-line help in the list")
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue  # a hidden alias: documented under its new name
        flag = "/".join(action.option_strings) or action.dest
        if not (action.help or "").strip():
            problems.append(f"{flag} is not explained")
            continue
        if action.default not in SILENT_DEFAULTS and "default" not in (action.help or ""):
            problems.append(f"{flag} does not name its default ({action.default!r})")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and action.metavar is None:
            # argparse would show "{list,show}" where every other command says ACTION
            problems.append("its actions are listed as {...}: give them a metavar (ACTION)")
    markup = MARKUP.search(parser.format_help())
    if markup is not None:
        problems.append(f"reStructuredText markup in the help: {markup.group(0)!r}")
    return problems


def test_every_help_has_a_description_explains_options_and_shows_defaults() -> None:
    seen: set[str] = set()
    failures = []
    for path, parser in _programs():
        seen.add(path)
        problems = _problems(path, parser)
        if problems and path not in KNOWN_EXCEPTIONS:
            failures.append(f"`{path} --help`: " + "; ".join(problems))
    assert {"sapsam serve", "sapsam-play", "sapsam-play dispute", "sapsam-bot"} <= seen
    assert not failures, "help text to fix:\n  " + "\n  ".join(failures)


def test_known_exceptions_are_still_exceptions() -> None:
    """An exception listed here that passes now should be taken off the list."""
    parsers = dict(_programs())
    for path in KNOWN_EXCEPTIONS:
        assert _problems(path, parsers[path]), f"{path} passes now: take it off KNOWN_EXCEPTIONS"


@pytest.mark.parametrize(
    ("parser", "argv", "expected"),
    [
        (build_parser, ["demo", "--seats", "3"], 3),
        (build_parser, ["demo", "--seat-count", "3"], 3),
        (build_parser, ["demo"], 4),
        (build_parser, ["tournament", "create", "--name", "x", "--seats", "2"], 2),
        (build_parser, ["tournament", "create", "--name", "x", "--seat-count", "3"], 3),
        (build_parser, ["tournament", "create", "--name", "x"], 4),
        (terminal.build_parser, ["--create", "--seats", "2"], 2),
        (terminal.build_parser, ["--create", "--seat-count", "2"], 2),
        (terminal.build_parser, [], 4),
        (bot.build_parser, ["--create", "--seat-count", "3"], 3),
    ],
)
def test_seat_count_is_one_flag_everywhere_and_the_old_spelling_still_works(
    parser: object, argv: list[str], expected: int
) -> None:
    build = parser
    assert callable(build)
    assert build().parse_args(argv).seat_count == expected


@pytest.mark.parametrize("flag", ["--waiting-longer-than", "--stuck-after-seconds"])
def test_the_waiting_threshold_is_one_flag_everywhere(flag: str) -> None:
    parser = build_parser()
    watched = parser.parse_args(["tournament", "watch", "tournaments/x", flag, "60"])
    assert watched.waiting_longer_than == 60
    assert parser.parse_args(["tables", "stuck", "--waiting-longer-than", "60"])
    assert parser.parse_args(["serve", "--waiting-longer-than", "60"]).waiting_longer_than == 60
    watch_help = dict(_walk(parser, "sapsam"))["sapsam tournament watch"].format_help()
    assert "--waiting-longer-than" in watch_help and "--stuck-after-seconds" not in watch_help


def test_old_flag_spellings_are_hidden_from_the_help() -> None:
    for build, program in ((build_parser, "demo"), (terminal.build_parser, None)):
        parser = build()
        if program is not None:
            parser = dict(_walk(parser, "sapsam"))[f"sapsam {program}"]
        shown = parser.format_help()
        assert "--seat-count" in shown
        assert "--seats " not in shown and "--seats\n" not in shown


def test_plain_text_takes_the_markup_out() -> None:
    text = plain_text(
        "``sapsam demo``: see :class:`~sapsam.x.SeatReplacedError` and\n**this**::\n\n"
        "    sapsam demo --seat-count 4\n"
    )
    assert text == (
        "sapsam demo: see SeatReplacedError and\nthis:\n\n    sapsam demo --seat-count 4"
    )


def test_plurals() -> None:
    assert [plural(n, "deal") for n in (0, 1, 2)] == ["0 deals", "1 deal", "2 deals"]
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"


def test_indented_lines_of_a_description_are_shown_as_written() -> None:
    # A table of commands (sapsam tournament's) or an example, one line each: run into one
    # paragraph, `sapsam tournament --help` listed its 17 actions as a single block of words.
    for path, parser in _programs():
        shown = parser.format_help().splitlines()
        description = plain_text(parser.description or "") or ""
        for block in re.split(r"\n\s*\n", description):
            lines = block.strip("\n").splitlines()
            if lines and all(line.startswith("  ") for line in lines):
                for line in lines:
                    assert line in shown, f"{path}: {line.strip()!r} is not on a line of its own"
    tournament = dict(_programs())["sapsam tournament"].format_help().splitlines()
    assert "  create         create a tournament; prints its id" in tournament

"""Every ``sapsam serve`` flag has an environment variable: a container is configured by its
environment (deploy/, docs/operations.md "Configuration").

``--some-flag`` is ``SAPSAM_SOME_FLAG``, except ``--database-url``, which is ``DATABASE_URL``
as everywhere in sapsam. A flag on the command line wins over its variable; a variable wins over
the built-in default. A variable holds what the flag would be given (argparse converts and checks
it the same way, naming the flag when it is bad); an on/off flag takes ``1``, ``true``, ``yes``,
``on`` or ``0``, ``false``, ``no``, ``off``. A variable set to nothing counts as unset.
``--help`` names each flag's variable as ``[env NAME]``; tests/packaging/test_deploy_files.py
holds deploy/ and docs/operations.md to that list.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Final

PREFIX: Final = "SAPSAM_"
SPECIAL_NAMES: Final = {"--database-url": "DATABASE_URL"}
TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS: Final = frozenset({"0", "false", "no", "off"})
ERRORS_DEST: Final = "environment_errors"
"""Where the parsed arguments carry the variables that were refused (a default cannot be refused
while parsing; ``sapsam serve`` reports them and stops)."""


def variable_name(flag: str) -> str:
    """``--grace-seconds`` -> ``SAPSAM_GRACE_SECONDS`` (``--database-url`` -> ``DATABASE_URL``)."""
    return SPECIAL_NAMES.get(flag) or PREFIX + flag.removeprefix("--").replace("-", "_").upper()


def _long_flag(action: argparse.Action) -> str | None:
    return next((flag for flag in action.option_strings if flag.startswith("--")), None)


def _is_switch(action: argparse.Action) -> bool:
    return isinstance(action, argparse._StoreTrueAction)


def apply_environment(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """Take each flag's default from its variable, when set, and name the variable in --help."""
    errors: list[str] = []
    for action in parser._actions:
        flag = _long_flag(action)
        if flag is None or flag == "--help" or action.help == argparse.SUPPRESS:
            continue
        name = variable_name(flag)
        action.help = f"{action.help or ''} [env {name}]".strip()
        value = environ.get(name)
        if not value:  # unset, or set to nothing (compose's ${NAME:-}): the built-in default
            continue
        if _is_switch(action):
            word = value.strip().lower()
            if word in TRUE_WORDS | FALSE_WORDS:
                action.default = word in TRUE_WORDS
            else:
                on, off = ", ".join(sorted(TRUE_WORDS)), ", ".join(sorted(FALSE_WORDS))
                errors.append(f"{name} must be one of {on} (on) or {off} (off)")
        elif action.choices is not None and value not in action.choices:
            errors.append(f"{name} must be one of {', '.join(map(str, action.choices))}")
        else:
            action.default = value  # a string default is converted by the flag's type
    parser.set_defaults(**{ERRORS_DEST: tuple(errors)})

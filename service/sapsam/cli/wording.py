"""How the ``sapsam`` commands put things for the person reading them: help text in plain words
(the docstrings it is made from are reStructuredText, for the developers), and counts with the
right plural (``plural``, from ``sapsam.plurals``, which the layers below use too).

``plain_text`` turns a docstring into the text ``--help`` shows: ````--flag```` becomes
``--flag``, ``:class:`Name``` becomes ``Name``, ``**word**`` becomes ``word``, a paragraph ending
in ``::`` ends in ``:``, and ``.. directive::`` lines go. ``HelpFormatter`` (every ``sapsam``
parser's) wraps each paragraph to the terminal, keeps indented blocks (examples) as written and
wraps list items (``- ...``) under their dash.
"""

from __future__ import annotations

import argparse
import re
from typing import Final

from sapsam.plurals import plural

__all__ = ["HelpFormatter", "plain_text", "plural"]

_LITERAL: Final = re.compile(r"``(.+?)``", re.DOTALL)
_ROLE: Final = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")
_LINK: Final = re.compile(r"`([^`<]+?)(?:\s*<[^>]+>)?`_{1,2}")
_STRONG: Final = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_DIRECTIVE: Final = re.compile(r"^\s*\.\. [a-z-]+::.*$", re.MULTILINE)


def plain_text(text: str | None) -> str | None:
    """``text`` without reStructuredText markup (None stays None)."""
    if text is None:
        return None
    import inspect  # only when help is shown: a start-up cost of every command otherwise

    text = _DIRECTIVE.sub("", text)
    text = _ROLE.sub(lambda match: match.group(1).rsplit(".", 1)[-1], text)
    text = _LITERAL.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    # "as follows::" introduces a literal block: one colon in plain text; "::" alone, none.
    text = re.sub(r"^[ \t]*::[ \t]*$\n?", "", text, flags=re.MULTILINE)
    text = re.sub(r"::[ \t]*$", ":", text, flags=re.MULTILINE)
    return inspect.cleandoc(text)


def _paragraphs(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but descriptions keep their paragraphs, examples and lists (argparse
    runs every description into one paragraph), and carry no reStructuredText markup."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # as argparse does: only when help is shown

        out: list[str] = []
        for block in _paragraphs(plain_text(text) or ""):
            if all(line.startswith("  ") for line in block):
                # An example or a table of commands (indented): as written.
                out.append("\n".join(indent + line for line in block))
            elif block[0].lstrip().startswith("- "):
                items: list[str] = []
                for line in block:
                    if line.lstrip().startswith("- ") or not items:
                        items.append(line.strip())
                    else:
                        items[-1] += " " + line.strip()
                hanging = indent + "  "
                filled = (textwrap.fill(item, width, initial_indent=indent,
                                        subsequent_indent=hanging) for item in items)  # fmt: skip
                out.append("\n".join(filled))
            else:
                joined = " ".join(line.strip() for line in block)
                out.append(
                    textwrap.fill(joined, width, initial_indent=indent, subsequent_indent=indent)
                )
        return "\n\n".join(out)

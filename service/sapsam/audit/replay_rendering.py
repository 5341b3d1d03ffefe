"""A replay written as text (``sapsam audit replay``): each frame of ``sapsam.audit.replay`` with
the table's phase, every seat's cards as far as that frame may show them, the running totals and
what happened, and at each deal's score its account (``sapsam.audit.deal_account``). Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from sapsam.audit.deal_account import CardWriting, account_lines, player_lines, seat_labels, seating
from sapsam.audit.deal_account_facts import accounts
from sapsam.audit.export_format import AuditExport
from sapsam.audit.replay import PLAIN, TOTALS_FROM_EVENTS, TOTALS_UNKNOWN, ReplayFrame
from sapsam.domain.event_codec import DEFAULT_CODEC, EventCodec
from sapsam.rules.hand_text import cards_shown


def render_frame(
    frame: ReplayFrame, names: Mapping[str, str] | None = None, writing: CardWriting = PLAIN
) -> str:
    """A frame as text: the event, then the table and each seat, named by ``names`` (display
    names by player id: labels, see ``sapsam.audit.deal_account``), its cards written as
    ``sapsam-play`` writes them (strongest first, with ``writing``'s suit symbols and colour)."""
    series = "" if frame.series_number is None else f", series {frame.series_number}"
    deal = "" if frame.deal_number is None else f", deal {frame.deal_number}"
    labels = seat_labels([view.player for view in frame.seats], names or {})
    dealer = ""
    if frame.dealer is not None:
        named = labels[frame.dealer] if 0 <= frame.dealer < len(labels) else ""
        dealing = frame.seats[frame.dealer] if 0 <= frame.dealer < len(frame.seats) else None
        if dealing is not None and dealing.played_by is not None:  # the seat changed hands since
            named = (names or {}).get(dealing.played_by) or f"player {dealing.played_by}"
        dealer = (
            f", dealer {named} (seat {frame.dealer})" if named else f", dealer seat {frame.dealer}"
        )
    actor = (names or {}).get(frame.actor) or frame.actor or "?"
    lines = [
        f"v{frame.version} {frame.event_type} by {actor} at {frame.recorded_at}",
        f"  {frame.happened}",
        f"  table: {frame.phase}{series}{deal}{dealer}",
    ]
    if frame.totals_from == TOTALS_UNKNOWN:
        lines.append("  totals: unknown here (the deals before this one are not in the export)")
    elif frame.totals_from != TOTALS_FROM_EVENTS:
        lines.append(
            f"  totals: as {frame.totals_from} record states them (the deals before it are not"
            " in the export; export the whole table to check them)"
        )
    for view, label in zip(frame.seats, labels, strict=True):
        player = label if view.player is not None else "(empty)"
        total = "unknown" if view.series_total is None else f"{view.series_total:+d}"
        line = f"  seat {view.seat} {player}: {view.status}, total {total}"
        if view.cards is not None:
            line += f"; cards {_shown(view.cards, writing)} [seen by {view.seen_by}]"
        elif view.seen_by != "nobody":
            line += f"; cards seen by {view.seen_by}"
        if view.arrangement is not None:
            shown = " | ".join(_shown(row, writing) for row in view.arrangement.split("|"))
            line += f"; shows {shown}"
        if view.played_by is not None and frame.deal_number is not None:
            before = (names or {}).get(view.played_by) or f"player {view.played_by}"
            line += f" (deal {frame.deal_number} was played by {before})"
        lines.append(line)
    return "\n".join(lines)


def _shown(cards: str, writing: CardWriting) -> str:
    try:
        return cards_shown(cards.split(), symbols=writing.symbols, colour=writing.colour)
    except ValueError:  # a forged card: shown as recorded
        return cards


def render_replay(
    export: AuditExport,
    frames: Sequence[ReplayFrame],
    writing: CardWriting = PLAIN,
    codec: EventCodec = DEFAULT_CODEC,
) -> Iterator[str]:
    """The human replay of ``frames`` (of ``export``): who the players are (ids, and the display
    names the export carries as labels), then each frame; at each deal's score, the account of
    the deal row by row (``sapsam.audit.deal_account``)."""
    names = dict(export.header.display_names)
    decoded = [codec.decode(e.type, e.schema_version, e.data) for e in export.events]
    rule_set, told = accounts(decoded)
    by_deal = {account.deal_number: account for account in told}
    yield "\n".join(player_lines(seating(export), names))
    for frame in frames:
        text = render_frame(frame, names, writing)
        account = by_deal.get(frame.deal_number or 0)
        if frame.event_type == "DealScored" and account is not None and rule_set is not None:
            text += "\n" + "\n".join(
                "  " + line for line in account_lines(account, rule_set, names, writing)
            )
        yield text

"""The tables a process remembers: each one folded, with its write stamp and latest events.

A command is decided on the remembered state and the append checks it (``sapsam.app.table_runner``);
a read is answered from it with no statement when the copy is *current*: the table's write stamp
(``Store.write_stamp``, shared by every process of the machine, bumped by every append before it
can be acknowledged) still holds the value it had when the copy was made
(``sapsam.store.write_stamps``). No lock: every use runs on the worker's one event loop, and none
awaits in between.

With the latest events it keeps their domain events, as this process decided or decoded them, by
the event's chained hash (which covers every byte of the event): a deal's result and a watcher's
messages are made from them without decoding the events again.
"""

from __future__ import annotations

import itertools
import uuid
from collections import OrderedDict
from collections.abc import Sequence

from sapsam.domain.events import Event
from sapsam.domain.table import TableState
from sapsam.log.records import RecordedEvent

CACHE_SIZE = 4096
"""Tables remembered per process (and secret seeds: ``sapsam.app.secret_seeds``), the latest
used."""
TAIL_EVENTS = 48
"""Recorded events kept per remembered table (its latest ones, up to its version): two deals of a
four-seat table, so a deal's result is read from memory."""
DECODED_EVENTS = 24
"""Domain events kept per remembered table, with the latest recorded ones: a four-seat deal's
(~10 KiB a table; an event not among them is decoded when asked for, as before)."""


class TableMemory:
    """Folded states by table, the latest ``CACHE_SIZE`` used; with each, its write stamp when
    the copy was made (absent: not known to be current, reads go to the log) and its latest
    recorded events, ending at its version."""

    def __init__(self) -> None:
        # Keyed by the table id's integer: a UUID's hash and equality are Python code, asked
        # a dozen times per command here; an int's are not.
        self._states: OrderedDict[int, TableState] = OrderedDict()
        self._stamps: dict[int, int] = {}
        self._tails: dict[int, tuple[RecordedEvent, ...]] = {}
        # The domain events of the latest recorded ones, by chained hash, oldest first.
        self._decoded: dict[int, dict[bytes, Event]] = {}

    def state(self, table_id: uuid.UUID) -> TableState | None:
        """The remembered state, current or not (a read folds only the log's tail after it)."""
        return self._states.get(table_id.int)

    def copy_current_at(self, table_id: uuid.UUID, stamp: int) -> TableState | None:
        """The remembered state if it was made at write stamp ``stamp`` (one just read: then no
        write to the table can have been acknowledged since), else None."""
        key = table_id.int
        if self._stamps.get(key) != stamp:
            return None
        return self._states.get(key)

    def remembered_events(
        self, table_id: uuid.UUID, state: TableState, from_version: int, to_version: int | None
    ) -> list[RecordedEvent] | None:
        """The events from ``from_version`` (to ``to_version``) of ``state``, the table's
        remembered copy, if they are among the remembered ones, else None."""
        tail = self._tails.get(table_id.int, ())
        if from_version > state.version or (to_version is not None and to_version < from_version):
            return []
        if not tail or tail[0].version > max(from_version, 1):
            return None
        return [
            recorded
            for recorded in tail
            if recorded.version >= from_version
            and (to_version is None or recorded.version <= to_version)
        ]

    def decoded(self, table_id: uuid.UUID, recorded: RecordedEvent) -> Event | None:
        """The domain event of ``recorded`` if it is among those remembered, else None."""
        remembered = self._decoded.get(table_id.int)
        return None if remembered is None else remembered.get(recorded.hash)

    def remember(
        self,
        table_id: uuid.UUID,
        state: TableState,
        stamp: int | None = None,
        recorded: Sequence[RecordedEvent] = (),
        decoded: Sequence[Event] = (),
    ) -> None:
        """Keep ``state`` unless a later one is remembered; ``stamp``: its write stamp (None: not
        known to be current); ``recorded``: events just read or written, ending at its version;
        ``decoded``: their domain events, one for each (or none)."""
        key = table_id.int
        self._keep_decoded(key, recorded, decoded)
        cached = self._states.get(key)
        if cached is None or cached.version < state.version:
            self._states[key] = state
            self._states.move_to_end(key)
            if stamp is None:
                self._stamps.pop(key, None)
            else:
                self._stamps[key] = stamp
            self._tails[key] = _joined(self._tails.get(key, ()), recorded, state.version)
        elif cached.version == state.version:
            # The same state: the later stamp is the one more likely current (both are right).
            self._states.move_to_end(key)
            known = self._stamps.get(key)
            if stamp is not None and (known is None or stamp > known):
                self._stamps[key] = stamp
            tail = self._tails.get(key, ())
            longer = not tail or (recorded and recorded[0].version < tail[0].version)
            if recorded and recorded[-1].version == state.version and longer:
                self._tails[key] = tuple(recorded[-TAIL_EVENTS:])
        while len(self._states) > CACHE_SIZE:
            evicted, _ = self._states.popitem(last=False)
            self._stamps.pop(evicted, None)
            self._tails.pop(evicted, None)
            self._decoded.pop(evicted, None)

    def keep_decoded(
        self, table_id: uuid.UUID, recorded: Sequence[RecordedEvent], decoded: Sequence[Event]
    ) -> None:
        """Keep ``decoded``, the domain events of ``recorded`` (one each; none: nothing kept),
        with the table's latest ones."""
        self._keep_decoded(table_id.int, recorded, decoded)

    def _keep_decoded(
        self, key: int, recorded: Sequence[RecordedEvent], decoded: Sequence[Event]
    ) -> None:
        if not decoded:
            return
        if len(recorded) != len(decoded):
            raise ValueError("one domain event for each recorded event")
        remembered = self._decoded.setdefault(key, {})
        for event, domain_event in zip(
            recorded[-DECODED_EVENTS:], decoded[-DECODED_EVENTS:], strict=True
        ):
            remembered[event.hash] = domain_event
        excess = len(remembered) - DECODED_EVENTS
        if excess > 0:
            for oldest in list(itertools.islice(remembered, excess)):
                del remembered[oldest]

    def forget(self, table_id: uuid.UUID) -> None:
        """Drop the remembered state of a table: the next use reads it from the log."""
        key = table_id.int
        self._states.pop(key, None)
        self._stamps.pop(key, None)
        self._tails.pop(key, None)
        self._decoded.pop(key, None)


def _joined(
    tail: tuple[RecordedEvent, ...], recorded: Sequence[RecordedEvent], version: int
) -> tuple[RecordedEvent, ...]:
    """The latest ``TAIL_EVENTS`` events up to ``version``: ``recorded`` after ``tail`` when they
    follow on, ``recorded`` alone when they end at ``version``, else none (unknown)."""
    if not recorded or recorded[-1].version != version:
        return tail if tail and tail[-1].version == version else ()
    if tail and tail[-1].version + 1 == recorded[0].version:
        return (*tail, *recorded)[-TAIL_EVENTS:]
    return tuple(recorded[-TAIL_EVENTS:])

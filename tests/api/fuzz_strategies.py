"""Hypothesis strategies for the RPC fuzz test (tests/api/test_fuzz_rpcs.py).

Requests are built from the message descriptors, so a field added to a request is fuzzed without
anyone writing a strategy for it; a field type the builder does not know fails loudly. Values mix
the absurd (empty, 1 MB, NUL, unicode, extreme integers, unknown enum numbers) with the nearly
right: resource names built from the real tables, seats, deals, players and the tournament the
test set up, respelt the ways a client might (uppercase, no hyphens, leading zeros, other digits),
real page tokens and crafted ones, a real deal export and damaged copies of it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

HUGE = 1_000_000
"""The largest string or bytes value sent (a request stays under gRPC's 4 MiB default)."""


# -- the world the requests name ------------------------------------------------------------------


@dataclass
class World:
    """Real resources made in setup, so that fuzzed names are often nearly (or exactly) right."""

    names: list[str] = field(default_factory=list)  # tables, seats, deals, players, tournaments
    page_tokens: list[str] = field(default_factory=list)
    export: str = ""  # a finished deal's export (JSON lines)
    cards: list[str] = field(default_factory=list)  # a real hand's cards
    tournament_id: str = ""
    player_names: list[str] = field(default_factory=list)  # alice, bob, the outsider


CANONICAL_NAME = re.compile(
    r"(tables/{u}(/(seats|deals)/(0|[1-9][0-9]*))?|players/{u}|tournaments/{u})\Z".format(
        u="[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    )
)
"""The only spelling of a resource name the server may accept (docs/api.md, Resource names)."""

NAME_FIELDS = frozenset({"name", "table", "seat", "tournament", "player"})
"""String fields that hold resource names."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NUMBER = re.compile(r"/(\d+)\Z")
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _on_uuid(change: Callable[[str], str]) -> Callable[[str], str]:
    return lambda name: _UUID.sub(lambda m: change(m.group(0)), name, count=1)


def _on_number(change: Callable[[str], str]) -> Callable[[str], str]:
    return lambda name: _NUMBER.sub(lambda m: "/" + change(m.group(1)), name)


RESPELLINGS: dict[str, Callable[[str], str]] = {
    "uppercase id": _on_uuid(str.upper),
    "id without hyphens": _on_uuid(lambda u: u.replace("-", "")),
    "braced id": _on_uuid(lambda u: "{" + u + "}"),
    "urn id": _on_uuid(lambda u: "urn:uuid:" + u),
    "short id": _on_uuid(lambda u: u[:-1]),
    "leading zero": _on_number(lambda n: "0" + n),
    "arabic-indic digits": _on_number(lambda n: n.translate(_ARABIC_INDIC)),
    "fullwidth digits": _on_number(lambda n: n.translate(_FULLWIDTH)),
    "plus sign": _on_number(lambda n: "+" + n),
    "negative": _on_number(lambda n: "-" + n),
    "huge number": _on_number(lambda n: "9" * 30),
    "int64 overflow": _on_number(lambda n: str(2**63)),
    "trailing newline": lambda name: name + "\n",
    "trailing slash": lambda name: name + "/",
    "trailing NUL": lambda name: name + "\x00",
    "leading space": lambda name: " " + name,
    "double slash": lambda name: name.replace("/", "//", 1),
    "escaped slash": lambda name: name.replace("/", "%2F", 1),
    "capital collection": lambda name: name[:1].upper() + name[1:],
    "extra segment": lambda name: name + "/seats/0",
    "other collection": lambda name: "players/" + name.split("/", 1)[-1],
    "megabyte tail": lambda name: name + "x" * HUGE,
}


# -- values ---------------------------------------------------------------------------------------

ODD_TEXTS = (
    "\x00",
    "a\x00b",
    "\n",
    " ",
    "\u202e\u2066",
    "\U0001f0a1 \u2660",
    "\uffff",
    "%s%n%x",
    "' OR 1=1 --",
    "\\",
    "../../etc/passwd",
    "x" * 64,
    "x" * 65,
    "é" * 65,
    "x" * 1000,
    "x" * 20_000,  # past gRPC's 16 KiB metadata limit, were it echoed in the error
)
INT_EDGES = {
    32: (0, 1, -1, 2, 3, 4, 5, 13, 51, 52, 100, 101, 2**31 - 1, -(2**31)),
    64: (0, 1, -1, 2, 3, 5, 40, 2**31 - 1, 2**31, 2**53, 2**63 - 1, -(2**63)),
}
_INT_BITS = {
    FieldDescriptor.TYPE_INT32: (32, True),
    FieldDescriptor.TYPE_SINT32: (32, True),
    FieldDescriptor.TYPE_SFIXED32: (32, True),
    FieldDescriptor.TYPE_INT64: (64, True),
    FieldDescriptor.TYPE_SINT64: (64, True),
    FieldDescriptor.TYPE_SFIXED64: (64, True),
    FieldDescriptor.TYPE_UINT32: (32, False),
    FieldDescriptor.TYPE_FIXED32: (32, False),
    FieldDescriptor.TYPE_UINT64: (64, False),
    FieldDescriptor.TYPE_FIXED64: (64, False),
}
CARDS = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
ODD_CARDS = ["", "10h", "as", "Q♠", "Zz", "A", "Ass", "\x00s", "A\u0073\u0301"]


def huge_texts() -> st.SearchStrategy[str]:
    """Long strings, up to a megabyte, without hypothesis drawing them byte by byte."""
    return st.builds(
        lambda char, size: char * size,
        st.sampled_from(["x", "\x00", "☃", "🂡"]),
        st.sampled_from([1000, 70_000, HUGE // 4]),  # 🂡 is 4 bytes: HUGE // 4 is a megabyte
    )


def texts() -> st.SearchStrategy[str]:
    """Any string: empty, short random unicode, odd, huge."""
    return st.one_of(
        st.just(""),
        st.text(max_size=24),
        st.sampled_from(ODD_TEXTS),
        huge_texts(),
    )


def blobs() -> st.SearchStrategy[bytes]:
    """Any bytes: short random ones, the lengths the API cares about, a megabyte."""
    return st.one_of(
        st.binary(max_size=72),
        st.builds(
            lambda fill, size: bytes([fill]) * size,
            st.integers(0, 255),
            st.sampled_from([0, 1, 15, 16, 31, 32, 33, 64, 65, 1000, HUGE]),
        ),
    )


def integers(bits: int, signed: bool) -> st.SearchStrategy[int]:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    edges = [value for value in INT_EDGES[bits] if low <= value <= high] + [high]
    return st.one_of(
        st.sampled_from(edges),
        st.integers(-3, 60).filter(lambda v: v >= low),
        st.integers(low, high),
    )


_KINDS = {
    "table": re.compile(r"tables/[^/]+\Z"),
    "seat": re.compile(r"tables/.+/seats/"),
    "deal": re.compile(r"tables/.+/deals/"),
    "player": re.compile(r"players/"),
    "tournament": re.compile(r"tournaments/"),
}


def names_for(field_: FieldDescriptor, world: World) -> list[str]:
    """The world's names of the kind a field holds (``name`` fields: by the request's type)."""
    kind = field_.name
    if kind == "name":
        message = field_.containing_type.name
        kind = next(
            (k for k in ("deal", "tournament", "player", "table") if k.title() in message), "table"
        )
    wanted = _KINDS.get(kind)
    found = [name for name in world.names if wanted is not None and wanted.match(name)]
    return found or world.names


def resource_names(world: World) -> st.SearchStrategy[str]:
    """Real names, real names respelt, names of nothing, and any text."""
    real = st.sampled_from(world.names)
    respelt = st.builds(
        lambda name, how: RESPELLINGS[how](name), real, st.sampled_from(sorted(RESPELLINGS))
    )
    return st.one_of(
        real,
        real,
        respelt,
        respelt,
        texts(),
        st.sampled_from(
            [
                "tables/00000000-0000-0000-0000-000000000000",
                "tables/00000000-0000-0000-0000-000000000000/seats/0",
                "tables/00000000-0000-0000-0000-000000000000/deals/1",
                "players/00000000-0000-0000-0000-000000000000",
                "tournaments/00000000-0000-0000-0000-000000000000",
                "tables/",
                "tables//seats/0",
                "players/",
                "tournaments/",
            ]
        ),
    )


def _token(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


def page_tokens(world: World) -> st.SearchStrategy[str]:
    """Issued tokens, and tokens shaped like them with absurd contents."""
    tournament = world.tournament_id
    crafted = [
        _token({"s": 0, "c": "2026-01-01", "t": "00000000-0000-0000-0000-000000000000"}),
        _token({"s": 0, "c": "not a time", "t": "00000000-0000-0000-0000-000000000000"}),
        _token({"s": 0, "c": "x" * 5000, "t": "x"}),
        _token({"s": 2**70, "c": [], "t": {}}),
        _token({"query": "standings", "tournament": tournament, "offset": 2**63}),
        _token({"query": "standings", "tournament": tournament, "offset": 10**30}),
        _token({"query": "standings", "tournament": tournament, "offset": -1}),
        _token({"query": "standings", "tournament": tournament, "offset": 1.5}),
        _token({"query": "leaderboard", "rule_set": None, "period": None, "offset": 2**63}),
        _token({"query": "tournaments", "status": 0, "time": 2**63, "id": "x"}),
        _token({"query": "tournaments", "status": 0, "time": -(2**70), "id": "x" * 5000}),
        _token([]),
        _token(None),
        base64.urlsafe_b64encode(b"[" * 100_000).decode(),
        base64.urlsafe_b64encode(b"\xff\xfe\x00").decode(),
        base64.urlsafe_b64encode(b"1" * 5000).decode(),
        "=",
        "!!!",
    ]
    return st.one_of(st.sampled_from(world.page_tokens or [""]), st.sampled_from(crafted), texts())


def damaged_exports(export: str) -> st.SearchStrategy[str]:
    """The real export with one thing wrong in it."""
    lines = export.splitlines()

    def damage(how: str, index: int, cut: int) -> str:
        at = index % len(lines)
        changed = list(lines)
        if how == "drop":
            del changed[at]
        elif how == "repeat":
            changed.insert(at, changed[at])
        elif how == "swap":
            changed[at], changed[-1] = changed[-1], changed[at]
        elif how == "huge number":
            changed[at] = re.sub(r"(?<=[:\[,])\d+", "9" * 5000, changed[at], count=1)
        elif how == "deep array":
            changed[at] = "[" * 100_000 + "]" * 100_000
        elif how == "deep object":
            changed[at] = '{"a":' * 50_000 + "1" + "}" * 50_000
        elif how == "nested value":
            changed[at] = changed[at].replace(":", ":" + "[" * 5000, 1) + "]" * 5000
        elif how == "truncate":
            return export[: cut % len(export)]
        elif how == "float":
            changed[at] = re.sub(r"(?<=:)\d+", "1.5e308", changed[at], count=1)
        elif how == "NUL":
            changed[at] = changed[at].replace('"', '"\\u0000', 1)
        elif how == "long line":
            changed[at] = changed[at] + " " * HUGE
        return "\n".join(changed) + "\n"

    hows = [
        "drop",
        "repeat",
        "swap",
        "huge number",
        "deep array",
        "deep object",
        "nested value",
        "truncate",
        "float",
        "NUL",
        "long line",
    ]
    return st.builds(damage, st.sampled_from(hows), st.integers(0, 10_000), st.integers(0, 10**6))


def exports(world: World) -> st.SearchStrategy[str]:
    """Exports to verify: the real one, damaged ones, and anything."""
    return st.one_of(st.just(world.export), damaged_exports(world.export), texts())


def card_lists(world: World) -> st.SearchStrategy[list[str]]:
    card = st.one_of(
        st.sampled_from(world.cards or CARDS),
        st.sampled_from(CARDS),
        st.sampled_from(ODD_CARDS),
        texts(),
    )
    return st.lists(card, max_size=14)


def _string_values(name: str, world: World) -> st.SearchStrategy[str]:
    if name in NAME_FIELDS:
        return resource_names(world)
    if name == "request_id":
        return st.one_of(st.uuids().map(str), st.sampled_from(["r1", "x" * 64, "é" * 64]), texts())
    if name == "page_token":
        return page_tokens(world)
    if name == "export":
        return exports(world)
    if name in ("rule_set_preset", "rule_set_name"):
        presets = ["pagat", "two_four", "one_six", "scoop_bonus", "PAGAT", "pagat\x00", "poker"]
        return st.one_of(st.sampled_from(presets), texts())
    if name == "period":
        periods = ["2026-12", "2026-13", "2026-00", "2026-12\n", "0000-01", "99999-01", "2026-1"]
        return st.one_of(st.sampled_from(periods), texts())
    return texts()


def field_values(field_: FieldDescriptor, world: World, depth: int) -> st.SearchStrategy[Any]:
    """Values for one (non-repeated) field, by its type and, for strings, its name."""
    kind = field_.type
    if kind == FieldDescriptor.TYPE_STRING:
        return _string_values(field_.name, world)
    if kind == FieldDescriptor.TYPE_BYTES:
        return blobs()
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in _INT_BITS:
        return integers(*_INT_BITS[kind])
    if kind in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if kind == FieldDescriptor.TYPE_ENUM:
        known = [value.number for value in field_.enum_type.values]
        return st.one_of(
            st.sampled_from(known),
            st.sampled_from([-1, 99, 2**31 - 1, -(2**31)]),
            st.integers(-(2**31), 2**31 - 1),
        )
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return messages(field_.message_type, world, depth + 1)
    raise AssertionError(f"no strategy for field {field_.full_name} of type {kind}")


PLAUSIBLE_INTS = {
    "position": st.integers(1, 51),
    "page_size": st.integers(0, 100),
    "seats_per_table": st.integers(2, 4),
    "seat_count": st.integers(2, 4),
    "rounds": st.integers(1, 3),
    "deals_per_round": st.integers(1, 3),
    "max_entrants": st.integers(2, 16),
    "series_length": st.integers(1, 8),
    "seconds": st.integers(2_000_000_000, 4_102_444_800),  # in the future: windows open
    "min_seats": st.just(2),
    "max_seats": st.integers(2, 4),
    "row_unit": st.integers(1, 3),
    "scoop_bonus": st.integers(0, 3),
    "one_six_two_of_three": st.integers(1, 3),
    "one_six_scoop": st.integers(1, 6),
    "arrange_seconds": st.integers(60, 600),
    "reveal_seconds": st.integers(60, 600),
    "nanos": st.integers(0, 999_999_999),
    "rules_version": st.just(1),
}
PLAUSIBLE_BYTES = {"commitment": 32, "nonce": 16, "entropy": 16}
PLAUSIBLE_TEXTS = {
    "rule_set_preset": ["pagat", "two_four", "one_six", "scoop_bonus"],
    "rule_set_name": ["pagat", "one_six"],
    "period": ["2026-12", "2026-11"],
    "display_name": ["ann", "Bob the Builder"],
}


def plausible_values(field_: FieldDescriptor, world: World, depth: int) -> st.SearchStrategy[Any]:
    """A value a well-behaved client could send in this field."""
    kind, name = field_.type, field_.name
    if kind == FieldDescriptor.TYPE_STRING:
        if name in NAME_FIELDS:
            return st.one_of(
                st.sampled_from(names_for(field_, world)), st.sampled_from(world.names)
            )
        if name == "request_id":
            return st.uuids().map(str)
        if name == "page_token":
            return st.sampled_from(["", *world.page_tokens])
        if name == "export":
            return st.just(world.export)
        return st.sampled_from(PLAUSIBLE_TEXTS.get(name, ["house rules", "x"]))
    if kind == FieldDescriptor.TYPE_BYTES:
        size = PLAUSIBLE_BYTES.get(name, 16)
        return st.binary(min_size=size, max_size=size)
    if kind in _INT_BITS:
        return PLAUSIBLE_INTS.get(name, st.integers(0, 12))
    if kind == FieldDescriptor.TYPE_ENUM:
        return st.sampled_from([value.number for value in field_.enum_type.values])
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return _message(field_.message_type, world, depth + 1, 0.0)
    return field_values(field_, world, depth)


def _repeated_values(field_: FieldDescriptor, world: World, depth: int) -> st.SearchStrategy[Any]:
    if field_.type == FieldDescriptor.TYPE_STRING and field_.name in ("front", "middle", "back"):
        return card_lists(world)
    return st.lists(field_values(field_, world, depth), max_size=4)


def _plausible_repeated(field_: FieldDescriptor, world: World) -> st.SearchStrategy[Any]:
    if field_.type == FieldDescriptor.TYPE_STRING and field_.name in ("front", "middle", "back"):
        size = 3 if field_.name == "front" else 5
        return st.lists(st.sampled_from(world.cards or CARDS), min_size=size, max_size=size)
    return st.lists(plausible_values(field_, world, MAX_DEPTH), max_size=2)


MAX_DEPTH = 3

# Keys a well-behaved client could send in each map field; anything else is the wild case.
PLAUSIBLE_MAP_KEYS = {
    "royalty_amounts": [
        "back_flush",
        "middle_straight",
        "front_pair_Q",
        "front_pair",
        "back_trips",
    ],
    "pair_units": ["0-1", "1-2", "0-3", "2-1", "4-5"],
}


def _map_values(field_: FieldDescriptor, world: World, wild: bool) -> st.SearchStrategy[Any]:
    """A map field's entries: plausible keys and small values, or any keys and values."""
    key_field = field_.message_type.fields_by_name["key"]
    value_field = field_.message_type.fields_by_name["value"]
    if key_field.type != FieldDescriptor.TYPE_STRING or value_field.type not in _INT_BITS:
        raise AssertionError(f"no strategy for map field {field_.full_name}")
    if wild:
        keys = _string_values(field_.name, world)
        values = integers(*_INT_BITS[value_field.type])
        return st.dictionaries(keys, values, max_size=40)
    keys = st.sampled_from(PLAUSIBLE_MAP_KEYS.get(field_.name, ["x"]))
    return st.dictionaries(keys, st.integers(0, 12), max_size=3)


@st.composite
def _message(
    draw: st.DrawFn, descriptor: Descriptor, world: World, depth: int, wildness: float | None
) -> Message:
    """A message whose fields are each unset, plausible, or (with ``wildness``) absurd."""
    if wildness is None:
        wildness = draw(st.sampled_from([0.0, 0.15, 0.4, 1.0]))
    message = message_factory.GetMessageClass(descriptor)()
    for field_ in descriptor.fields:
        if draw(st.integers(0, 9)) < 2:
            continue  # left unset (or empty, for a repeated field)
        wild = draw(st.integers(0, 99)) < wildness * 100
        if field_.message_type is not None and field_.message_type.GetOptions().map_entry:
            getattr(message, field_.name).update(draw(_map_values(field_, world, wild)))
            continue
        if field_.is_repeated:
            values = draw(
                _repeated_values(field_, world, depth)
                if wild
                else _plausible_repeated(field_, world)
            )
            target = getattr(message, field_.name)
            if field_.type == FieldDescriptor.TYPE_MESSAGE:
                for value in values:
                    target.add().CopyFrom(value)
            else:
                target.extend(values)
        elif field_.type == FieldDescriptor.TYPE_MESSAGE:
            if depth < MAX_DEPTH:
                nested = _message(field_.message_type, world, depth + 1, wildness)
                getattr(message, field_.name).CopyFrom(draw(nested))
        else:
            values = (
                field_values(field_, world, depth)
                if wild
                else plausible_values(field_, world, depth)
            )
            setattr(message, field_.name, draw(values))
    return message


def messages(descriptor: Descriptor, world: World, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of a type: from wholly plausible to wholly absurd, field by field."""
    return _message(descriptor, world, depth, None)


# -- reporting ------------------------------------------------------------------------------------


def short(value: Any, limit: int = 60) -> str:
    """A value's repr, cut to ``limit`` characters with its length noted."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}...(len {len(value)})"


def describe(message: Message) -> str:
    """A one-line account of a request with long values cut short."""
    parts = []
    for field_, value in message.ListFields():
        if field_.message_type is not None and field_.message_type.GetOptions().map_entry:
            shown = "{" + ", ".join(f"{short(k, 20)}: {v}" for k, v in value.items()) + "}"
        elif field_.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if field_.is_repeated else [value]
            shown = ", ".join("{" + describe(item) + "}" for item in items)
        elif field_.is_repeated:
            shown = "[" + ", ".join(short(item, 20) for item in value) + "]"
        else:
            shown = short(value)
        parts.append(f"{field_.name}={shown}")
    return " ".join(parts)

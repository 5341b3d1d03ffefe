"""The checks an audit export's fields are read with: each returns the field's value or raises
``ExportFormatError`` naming where the field is and what is wrong with it. Shared by the header's
reading (``export_header_reading``) and the event lines' (``export_reading``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sapsam.audit.export_format import (
    ExportFormatError,
)
from sapsam.quoting import quote_prefix

__all__ = ["hex_field", "int_field", "int_list_field", "object_field", "require_field"]


def require_field(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise ExportFormatError(f"{where}: {message}")


def int_field(value: object, where: str) -> int:
    require_field(
        isinstance(value, int) and not isinstance(value, bool), where, "must be an integer"
    )
    assert isinstance(value, int)
    return value


def hex_field(value: object, where: str, size: int | None = 32) -> bytes:
    require_field(isinstance(value, str), where, "must be a hex string")
    assert isinstance(value, str)
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise ExportFormatError(f"{where}: {quote_prefix(value)} is not hex") from None
    require_field(size is None or len(raw) == size, where, f"must be {size} bytes")
    return raw


def object_field(value: object, where: str) -> Mapping[str, Any]:
    require_field(isinstance(value, dict), where, "must be a JSON object")
    assert isinstance(value, dict)
    return value


def int_list_field(value: object, where: str) -> tuple[int, ...]:
    require_field(isinstance(value, list), where, "must be a list")
    assert isinstance(value, list)
    return tuple(int_field(item, f"{where}[{index}]") for index, item in enumerate(value))

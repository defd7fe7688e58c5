"""Protobuf messages as the plain JSON the command line prints (`tournament export --format
json`): every field present, under its proto name; 64-bit integers as JSON numbers (not the
strings of protobuf's JSON mapping); enums as lowercase words without their type's prefix,
hyphenated like the command line's flags (TOURNAMENT_FORMAT_DOUBLE_ROUND_ROBIN:
"double-round-robin", PROFILE_SOFT: "soft"), and null for an enum's _UNSPECIFIED or a message
field that is unset; timestamps as ISO 8601 UTC strings ("2026-12-01T18:00:00.123Z").

protobuf's own `json_format.MessageToDict` cannot do the integers or the enum words, so this
walks the message's descriptor itself (a few lines, no library does it). The documents' JSON
Schemas are in docs/ (docs/tournament-export.schema.json).
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf.message import Message

TIMESTAMP = "google.protobuf.Timestamp"


def plain(message: Message) -> dict[str, Any]:
    """`message` as a dict of plain JSON values (see the module doc)."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.is_repeated:
            out[field.name] = [_value(field, item) for item in value]
        elif field.message_type is not None and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    return out


def enum_word(enum: Any, number: int) -> str | None:
    """The lowercase word of an enum value (None for its zero, _UNSPECIFIED value)."""
    if number == 0:
        return None
    value = enum.values_by_number.get(number)
    if value is None:  # a value newer than these contracts
        return str(number)
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    return value.name.removeprefix(prefix).lower().replace("_", "-")


def _value(field: Any, value: Any) -> Any:
    if field.message_type is not None:
        if field.message_type.full_name == TIMESTAMP:
            return value.ToDatetime().isoformat(timespec="milliseconds") + "Z"
        return plain(value)
    if field.enum_type is not None:
        return enum_word(field.enum_type, value)
    return value

"""JSON in and out of the API server, through orjson.

Watch streams and lists carry every node and pod the scheduler sees, and each Binding, Event
and status patch is one more body to encode: the standard library's codec costs several times
orjson's on these documents, and the difference is CPU the API server and etcd could use.
orjson parses into the same plain dicts, lists, strings and numbers, so nothing downstream
changes; it rejects what the standard library also rejects (and NaN, which JSON has not).
"""

from __future__ import annotations

from typing import Any

import orjson

DecodeError = orjson.JSONDecodeError


def decode(data: bytes | bytearray | memoryview | str) -> Any:
    """The document in `data`; DecodeError (a ValueError) if it is not JSON."""
    return orjson.loads(data)


def encode(value: Any) -> bytes:
    """`value` (plain JSON-shaped data, keys strings) as UTF-8 JSON."""
    return orjson.dumps(value)

"""A reader of pprof profiles for tests: the fields `pprof_format` writes, decoded independently
from the protobuf wire format, so a test checks the bytes and not the writer's own bookkeeping."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from dataclasses import field


@dataclass
class ReadProfile:
    sample_types: list[tuple[str, str]] = field(default_factory=list)
    # (function names innermost first, values)
    samples: list[tuple[list[str], list[int]]] = field(default_factory=list)
    period_type: tuple[str, str] = ("", "")
    period: int = 0
    time_nanos: int = 0
    duration_nanos: int = 0
    mapping_files: list[str] = field(default_factory=list)

    def total(self, function: str, index: int = 0) -> int:
        """The sum of value `index` over samples whose stack holds `function`."""
        return sum(values[index] for stack, values in self.samples if function in stack)


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    found: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            found.append((number, value))
        elif wire == 2:
            length, at = _varint(data, at)
            found.append((number, data[at : at + length]))
            at += length
        else:
            raise ValueError(f"wire type {wire} of field {number} is not written by pprof_format")
    return found


def _ints(payload: int | bytes) -> list[int]:
    if isinstance(payload, int):
        return [payload]
    values, at = [], 0
    while at < len(payload):
        value, at = _varint(payload, at)
        values.append(value)
    return values


def _message(payload: int | bytes) -> dict[int, list[int | bytes]]:
    assert isinstance(payload, bytes)
    grouped: dict[int, list[int | bytes]] = {}
    for number, value in _fields(payload):
        grouped.setdefault(number, []).append(value)
    return grouped


def _one(message: dict[int, list[int | bytes]], number: int) -> int:
    values = message.get(number, [0])
    assert len(values) == 1 and isinstance(values[0], int)
    return values[0]


def read_profile(gzipped: bytes) -> ReadProfile:
    top = _message(gzip.decompress(gzipped))
    strings = [bytes(s).decode() for s in top.get(6, []) if isinstance(s, bytes)]
    assert strings[0] == "", "string_table[0] must be the empty string"
    functions = {_one(m, 1): strings[_one(m, 2)] for m in (_message(p) for p in top.get(5, []))}
    locations = {}
    for payload in top.get(4, []):
        location = _message(payload)
        [line] = location[4]
        locations[_one(location, 1)] = functions[_one(_message(line), 1)]
    profile = ReadProfile()
    for payload in top.get(1, []):
        value_type = _message(payload)
        profile.sample_types.append((strings[_one(value_type, 1)], strings[_one(value_type, 2)]))
    for payload in top.get(2, []):
        sample = _message(payload)
        stack = [locations[i] for p in sample.get(1, []) for i in _ints(p)]
        values = [v for p in sample.get(2, []) for v in _ints(p)]
        profile.samples.append((stack, values))
    for payload in top.get(3, []):
        profile.mapping_files.append(strings[_one(_message(payload), 5)])
    [period_type] = top.get(11, [b""])
    period_message = _message(period_type)
    profile.period_type = (strings[_one(period_message, 1)], strings[_one(period_message, 2)])
    profile.period = _one(top, 12)
    profile.time_nanos = _one(top, 9)
    profile.duration_nanos = _one(top, 10)
    return profile

"""Profiles in pprof's format (profile.proto, gzipped), so `go tool pprof`, its web UI and the
usual profile viewers read what `/debug/pprof/*` serves, as they read kube-scheduler's.

Only what a stack-sample profile needs is written: sample types, samples of location ids
(leaf first) with their values, one mapping (the interpreter, marked as already symbolized so
pprof looks for no binary), one location per frame (function and line), functions, the string
table, time, duration and period. The wire format is written by hand: it is a handful
of varints and length-prefixed fields, and a protobuf runtime would be a dependency for this
alone.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Frame:
    """One Python frame of a stack: where it runs and in which function."""

    function: str
    filename: str
    line: int
    start_line: int = 0


Stack = tuple[Frame, ...]
"""Frames from the innermost (the leaf) out, as pprof lists a sample's locations."""


class ProfileBuilder:
    """Accumulates samples of stacks, then writes the profile once."""

    def __init__(self, sample_types: Sequence[tuple[str, str]], period: tuple[str, str, int]):
        """`sample_types` are (type, unit) pairs, one value each per sample; `period` is
        (type, unit, amount) of one sampling period."""
        self._strings: dict[str, int] = {"": 0, _MAPPING_FILE: 1}
        self._sample_types = [(self._string(t), self._string(u)) for t, u in sample_types]
        kind, unit, amount = period
        self._period = (self._string(kind), self._string(unit), amount)
        self._functions: dict[tuple[str, str, int], int] = {}
        self._locations: dict[tuple[int, int], int] = {}
        self._samples: dict[tuple[int, ...], list[int]] = {}

    def add(self, stack: Stack, values: Sequence[int]) -> None:
        """Count `values` for `stack`; equal stacks share one sample."""
        if len(values) != len(self._sample_types):
            raise ValueError(f"{len(values)} values for {len(self._sample_types)} sample types")
        key = tuple(self._location(frame) for frame in stack)
        total = self._samples.setdefault(key, [0] * len(values))
        for index, value in enumerate(values):
            total[index] += value

    def encode(self, time_nanos: int, duration_nanos: int) -> bytes:
        """The gzipped profile."""
        out = bytearray()
        for kind, unit in self._sample_types:
            _field(out, 1, _value_type(kind, unit))
        for locations, values in self._samples.items():
            sample = bytearray()
            _field(sample, 1, _packed(locations))
            _field(sample, 2, _packed(_signed(v) for v in values))
            _field(out, 2, bytes(sample))
        mapping = bytearray()
        _varint_field(mapping, 1, _MAPPING_ID)
        _varint_field(mapping, 5, self._strings[_MAPPING_FILE])
        for has_functions_filenames_and_lines in (7, 8, 9):
            _varint_field(mapping, has_functions_filenames_and_lines, 1)
        _field(out, 3, bytes(mapping))
        for (function_id, line), location_id in self._locations.items():
            line_message = bytearray()
            _varint_field(line_message, 1, function_id)
            _varint_field(line_message, 2, line)
            location = bytearray()
            _varint_field(location, 1, location_id)
            _varint_field(location, 2, _MAPPING_ID)
            _field(location, 4, bytes(line_message))
            _field(out, 4, bytes(location))
        for (name, filename, start_line), function_id in self._functions.items():
            function = bytearray()
            _varint_field(function, 1, function_id)
            _varint_field(function, 2, self._strings[name])
            _varint_field(function, 3, self._strings[name])
            _varint_field(function, 4, self._strings[filename])
            _varint_field(function, 5, start_line)
            _field(out, 5, bytes(function))
        for text in self._strings:
            _field(out, 6, text.encode())
        _varint_field(out, 9, time_nanos)
        _varint_field(out, 10, duration_nanos)
        kind, unit, amount = self._period
        _field(out, 11, _value_type(kind, unit))
        _varint_field(out, 12, amount)
        return gzip.compress(bytes(out))

    def _string(self, text: str) -> int:
        return self._strings.setdefault(text, len(self._strings))

    def _location(self, frame: Frame) -> int:
        function_key = (frame.function, frame.filename, frame.start_line)
        function_id = self._functions.get(function_key)
        if function_id is None:
            self._string(frame.function)
            self._string(frame.filename)
            function_id = self._functions[function_key] = len(self._functions) + 1
        return self._locations.setdefault((function_id, frame.line), len(self._locations) + 1)


# The wire format: field keys carry a type, and the one mapping every location points at.
_VARINT = 0
_BYTES = 2
_MAPPING_ID = 1
_MAPPING_FILE = "python"


def _value_type(kind: int, unit: int) -> bytes:
    message = bytearray()
    _varint_field(message, 1, kind)
    _varint_field(message, 2, unit)
    return bytes(message)


def _signed(value: int) -> int:
    # int64 fields carry negatives as their two's complement in ten bytes.
    return value if value >= 0 else value + (1 << 64)


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _varint_field(out: bytearray, number: int, value: int) -> None:
    if value == 0:
        return  # proto3 leaves default values out
    _varint(out, number << 3 | _VARINT)
    _varint(out, _signed(value))


def _field(out: bytearray, number: int, payload: bytes) -> None:
    _varint(out, number << 3 | _BYTES)
    _varint(out, len(payload))
    out += payload


def _packed(values: Iterable[int]) -> bytes:
    out = bytearray()
    for value in values:
        _varint(out, value)
    return bytes(out)

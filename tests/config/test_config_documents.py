"""The bounded reader of configuration and scenario files: every bad input is a ConfigError
naming the file (and the line and column where the text has one), reached quickly."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from scheduler.config import ConfigError
from scheduler.config import load_yaml_documents
from scheduler.config import parse_duration
from scheduler.config import read_text
from scheduler.config.documents import MAX_ALIAS_NODES
from scheduler.config.documents import MAX_DEPTH
from scheduler.config.documents import load_yaml_or_json


def _laughs(levels: int, width: int = 10) -> str:
    """The billion laughs: each anchor repeats the previous one `width` times."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _problem(text: str) -> str:
    started = time.perf_counter()
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as caught:
            load_yaml_documents(text, "f.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 1.0
    assert peak < 64 * 2**20
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_laughs(9), f"f.yaml:5:45: aliases expand to more than {MAX_ALIAS_NODES} nodes"),
        ("a: &a [*a]\n", "f.yaml:1:8: not valid YAML: alias *a refers to a node that"),
        ("a: &a {b: *a}\n", "f.yaml:1:11: not valid YAML: alias *a refers to a node that"),
        ("a: *nothing\n", "f.yaml:1:4: not valid YAML: found undefined alias 'nothing'"),
        ("a: " + "[" * 2000 + "]" * 2000 + "\n", f"nested deeper than {MAX_DEPTH} levels"),
        ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 2001)), "nested deeper than"),
        ("a: " + "{b: " * 2000 + "1" + "}" * 2000 + "\n", "nested deeper than"),
        ("a: 1\na: 2\n", "f.yaml:2:1: not valid YAML: found duplicate key 'a'"),
        ("a: !!int abc\n", "f.yaml:1:4: not valid YAML: cannot decode !!str `abc` as a !!int"),
        ("a: {[1]: 2}\n", "unhashable"),
        ("a: {~: 2}\n", "f.yaml:1:5: not valid YAML: found a null key"),
        ("a: b\x07\n", "f.yaml:1:5: not valid YAML: character U+0007 is not allowed"),
        ("a: [\n", "f.yaml:2:1: not valid YAML"),
    ],
    ids=[
        "billion-laughs",
        "alias-in-itself",
        "alias-in-its-mapping",
        "undefined-alias",
        "flow-nesting-2000",
        "block-nesting-2000",
        "mapping-nesting-2000",
        "duplicate-key",
        "tag-for-another-type",
        "unhashable-key",
        "null-key",
        "control-character",
        "unclosed",
    ],
)
def test_bad_yaml_is_reported_at_its_position(text: str, expected: str) -> None:
    message = _problem(text)
    assert message.startswith("f.yaml"), message
    assert expected in message, message


def test_aliases_within_the_bound_are_expanded_as_usual() -> None:
    [document] = load_yaml_documents(_laughs(4) + "m: &m {x: 1}\nk: {<<: *m, z: 2}\n", "f.yaml")
    assert len(document["l3"]) == 10 and document["l3"][0][0][0][0] == "lol"
    assert document["k"] == {"x": 1, "z": 2}


def test_nesting_up_to_the_bound_is_read() -> None:
    depth = MAX_DEPTH - 1
    [document] = load_yaml_documents("a: " + "[" * depth + "]" * depth + "\n", "f.yaml")
    for _ in range(depth):
        document = document["a"] if isinstance(document, dict) else document[0]
    assert document == []


def test_each_document_of_a_stream_may_reuse_anchor_names() -> None:
    documents = load_yaml_documents("a: &x [1]\nb: *x\n---\nc: &x [2]\nd: *x\n", "f.yaml")
    assert documents == [{"a": [1], "b": [1]}, {"c": [2], "d": [2]}]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": ' + "[" * 2000 + "]" * 2000 + "}", f"nested deeper than {MAX_DEPTH} levels"),
        ('{"a": ' + "[" * 200 + "]" * 200 + "}", f"nested deeper than {MAX_DEPTH} levels"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": ' + "9" * 5000 + "}", "f.json: "),
        ('{"a": }', "f.json:1:7: not valid JSON"),
    ],
    ids=["nesting-2000", "nesting-200", "duplicate-key", "integer-of-5000-digits", "broken"],
)
def test_bad_json_names_the_file(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_yaml_or_json(text, "f.json")
    assert str(caught.value).startswith("f.json"), caught.value
    assert expected in str(caught.value)


def test_a_file_that_is_not_utf8_is_reported_at_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: 1\nbb: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:2:8: not valid UTF-8 \(byte 0xe9\)"):
        read_text(path)


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read"):
        read_text(tmp_path / "missing.yaml")


@pytest.mark.parametrize("text", ["9" * 400 + "h", "1" * 20_000 + "x", "2562048h"])
def test_durations_beyond_go_or_malformed_are_value_errors(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"(invalid duration|unknown unit)"):
        parse_duration(text)
    assert time.perf_counter() - started < 0.5


def test_the_longest_go_duration_is_read() -> None:
    assert parse_duration("2562047h") == 2562047 * 3600


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[(text, True) for text in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true")],
        *[(text, False) for text in ("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false")],
        *[(text, text) for text in ("yEs", "oN", "1:30", "2024-01-01", "=", "0x", "_1", "1e400")],
        *[(text, None) for text in ("", "~", "null", "Null", "NULL")],
        ("1e2", 100),
        ("-1.5e1", -15),
        ("50.0", 50),
        ("0.5", 0.5),
        (".5", 0.5),
        ("0o17", 15),
        ("017", 15),
        ("08", 8),
        ("0x1F", 31),
        ("-0x10", -16),
        ("+0b11", 3),
        ("1_000", 1000),
        ("18446744073709551615", 2**64 - 1),
        ("1.2e18", 1_200_000_000_000_000_000),
        ("1e21", 1e21),
        ("'y'", "y"),
        ("!!float 1", 1),
        ("!!timestamp 2024-01-01", "2024-01-01"),
        ("<<", "<<"),
    ],
)
def test_plain_scalars_are_read_as_upstream_reads_them(text: str, value: object) -> None:
    [document] = load_yaml_documents(f"a: {text}\n", "f.yaml")
    assert document == {"a": value}
    assert type(document["a"]) is type(value)

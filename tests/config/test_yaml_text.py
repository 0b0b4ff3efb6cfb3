"""The fast YAML reader: the same error marks as yaml.safe_load, and the same documents but
for the scalars upstream's YAML library reads differently."""

from __future__ import annotations

import pytest
import yaml

from scheduler.config.yaml_text import safe_load


def test_reads_what_safe_load_reads() -> None:
    text = "a: 1\nb: [x, z]\nc: {d: true, e: null}\n"
    assert safe_load(text) == yaml.safe_load(text)


def test_reads_scalars_as_upstream_reads_them() -> None:
    text = "a: [y, n, 1:30, 1e2, 0o17, 2024-01-01, 50.0]\n"
    assert safe_load(text) == {"a": [True, False, "1:30", 100, 15, "2024-01-01", 50]}


@pytest.mark.parametrize("text", ["clusters: [unclosed", "a: b: c", "- a\nb: c", "a: *nope"])
def test_an_error_carries_the_mark_safe_load_gives(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as raised:
        safe_load(text)
    assert str(raised.value) == str(expected.value)


def test_python_tags_are_refused_as_safe_load_refuses_them() -> None:
    with pytest.raises(yaml.YAMLError):
        safe_load("!!python/object/apply:os.system ['true']")

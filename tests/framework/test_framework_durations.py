"""Go-style durations: parsing into seconds and writing back as Go prints them."""

from __future__ import annotations

import pytest

from scheduler.framework.durations import format_duration
from scheduler.framework.durations import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("100ms", 0.1),
        ("1.5h", 5400.0),
        ("2h45m", 9900.0),
        ("1h0m0s", 3600.0),
        ("0", 0.0),
        ("-1s", -1.0),
        ("+2s", 2.0),
        (".5s", 0.5),
        ("1.s", 1.0),
        ("300ns", 3e-7),
        ("1us", 1e-6),
        ("1µs", 1e-6),
        ("1μs", 1e-6),
        ("1m0.25s", 60.25),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("15", 'time: missing unit in duration "15"'),
        ("s", 'time: invalid duration "s"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        ("1s2", 'time: missing unit in duration "1s2"'),
        ("abc", 'time: invalid duration "abc"'),
        ("1.2.3s", 'time: missing unit in duration "1.2.3s"'),
        ("1 s", 'time: unknown unit " s" in duration "1 s"'),
        ("-", 'time: invalid duration "-"'),
        (".", 'time: invalid duration "."'),
    ],
)
def test_parse_duration_rejects_what_go_rejects_in_gos_words(text: str, message: str) -> None:
    """Each message is what Go's time.ParseDuration returns for the same text."""
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0s"),
        (15.0, "15s"),
        (90.0, "1m30s"),
        (3600.0, "1h0m0s"),
        (3723.5, "1h2m3.5s"),
        (0.1, "100ms"),
        (1.5, "1.5s"),
        (1.5e-6, "1.5µs"),
        (5e-9, "5ns"),
        (-2.0, "-2s"),
        (600.0, "10m0s"),
    ],
)
def test_format_duration_matches_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("text", ["15s", "1m30s", "1h0m0s", "250ms", "2h3m4.005s", "1.5µs"])
def test_canonical_text_survives_a_round_trip(text: str) -> None:
    assert format_duration(parse_duration(text)) == text

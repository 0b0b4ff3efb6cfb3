"""Text quoted as Go's %q quotes it, for answers that must match kube-scheduler's bytes."""

from __future__ import annotations

import pytest

from scheduler.app.go_text import go_quote


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("/metrics?x=1&y=%3Ca%3E", '"/metrics?x=1&y=%3Ca%3E"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\tnew\nline", '"tab\\tnew\\nline"'),
        ("\x00\x7f", '"\\x00\\x7f"'),
        ("caf\u00e9 \u2603", '"caf\u00e9 \u2603"'),
        ("\u00a0\u200b", '"\\u00a0\\u200b"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted

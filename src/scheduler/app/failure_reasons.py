"""Upstream's FailedScheduling message, read back into (reason, node count) pairs.

`0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {a: b}.
no new claims to deallocate, preemption: ...` gives
[("Insufficient cpu", 3), ("node(s) had untolerated taint {a: b}", 2)].
A PreFilter verdict rules out every node at once; a message of another shape (a plugin error,
a gate) is one reason, counted once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_HEAD = re.compile(r"^\d+/(\d+) nodes are available: ")
# "3 Insufficient cpu" up to the next ", <count> " or the end.
_PART = re.compile(r"(\d+) (.+?)(?=, \d+ |$)")
_END_OF_FILTERS = re.compile(r"\. |, preemption: ")


def reasons(message: str) -> list[tuple[str, int]]:
    """The reasons of one message with the number of nodes each ruled out."""
    text = message.strip()
    head = _HEAD.match(text)
    if head is None:
        return [(text, 1)] if text else []
    # The Filter verdicts end at the first full stop; PostFilter's words (preemption, claims
    # to deallocate) follow it.
    body = _END_OF_FILTERS.split(text[head.end() :], maxsplit=1)[0].rstrip(".")
    if not body[:1].isdigit():
        # A PreFilter verdict: one reason for every node.
        return [(body, int(head.group(1)))]
    return [(reason.strip(), int(count)) for count, reason in _PART.findall(body)]


def histogram(messages: Iterable[str]) -> list[tuple[str, int]]:
    """How many pods each reason held back, most common first."""
    pods: Counter[str] = Counter()
    for message in messages:
        pods.update({reason for reason, _ in reasons(message)})
    return pods.most_common()

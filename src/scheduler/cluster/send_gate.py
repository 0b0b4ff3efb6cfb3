"""The last check before a request goes on the wire.

A caller that must not send a write after some moment (the leader's tenure ending, say) sets a
gate for the duration of its call; the API transport calls it after waiting for its rate
limiter, immediately before sending, so the check falls as late as it can. A gate raises to
refuse; once it has let a request through, the request runs to its answer: cutting it off
client-side would not stop the server from carrying it out, only hide whether it did.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# Called with the HTTP method; raises to refuse sending.
SendGate = Callable[[str], None]

_gate: ContextVar[SendGate | None] = ContextVar("send_gate", default=None)


def check_before_sending(method: str) -> None:
    gate = _gate.get()
    if gate is not None:
        gate(method)


@contextmanager
def gated(gate: SendGate) -> Iterator[None]:
    """Tasks created inside the block carry the gate (they copy the current context)."""
    token = _gate.set(gate)
    try:
        yield
    finally:
        _gate.reset(token)

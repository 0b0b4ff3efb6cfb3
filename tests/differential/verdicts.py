"""Comparing the two schedulers' observations of one case."""

from __future__ import annotations

from tests.differential.placement import Observation


def differences(upstream: Observation, ours: Observation, *, compare_node: bool) -> list[str]:
    """What differs, one line each; empty when the schedulers agree.

    `compare_node` says upstream's top score was unique, so the chosen node must match.
    """
    found: list[str] = []
    if upstream.verdict != ours.verdict:
        found.append(f"verdict: upstream {upstream.verdict}, ours {ours.verdict}")
    if upstream.message != ours.message:
        found.append(f"message:\n  upstream: {upstream.message}\n  ours:     {ours.message}")
    if upstream.then != ours.then:
        found.append(f"then:\n  upstream: {upstream.then}\n  ours:     {ours.then}")
    if compare_node and upstream.verdict == ours.verdict == "bound" and upstream.node != ours.node:
        found.append(f"node: upstream {upstream.node}, ours {ours.node}")
    if upstream.nominated != ours.nominated:
        found.append(f"nominated: upstream {upstream.nominated!r}, ours {ours.nominated!r}")
    if upstream.victims != ours.victims:
        found.append(f"victims: upstream {upstream.victims}, ours {ours.victims}")
    return found

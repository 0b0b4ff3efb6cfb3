"""Comparing the two schedulers' observations of one case."""

from __future__ import annotations

from tests.differential.placement import Observation

# Failures of kube-scheduler v1.36 we do not copy: the start of the text it fails the pod with,
# and what happens there. Such a case counts as a fault of upstream's, not a disagreement,
# when upstream fails the pod with that text and we bind it.
UPSTREAM_FAULTS = {
    'running PreBind plugin "DynamicResources": nil or empty request mappings': (
        "a pod with claims of its own also asks for an extended resource a DeviceClass "
        "provides, and a device plugin offers it on the chosen node: kube-scheduler makes an "
        "empty claim for it there and fails PreBind on it at every attempt; we bind the pod"
    ),
}


def upstream_fault(upstream: Observation, ours: Observation) -> str | None:
    """What upstream got wrong in this case, if it is one of UPSTREAM_FAULTS."""
    if upstream.verdict != "unschedulable" or ours.verdict != "bound":
        return None
    for text, what in UPSTREAM_FAULTS.items():
        if upstream.message.startswith(text):
            return what
    return None


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

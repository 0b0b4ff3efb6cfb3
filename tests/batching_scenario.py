"""Three nodes and alike pods on which reusing a ranking (opportunistic batching) and scoring
afresh choose different nodes; shared by the simulator, CLI and e2e tests.

Each node fits one pod. A is preferred most (node affinity weight 100), B a little (20), C
less (10) but has the most room. While A is among the scored nodes, NodeAffinity's normalized
scores of B and C are 40 and 20 (weighted), and C's room puts it ahead of B; with A gone they
become 200 and 100, and B is ahead. So the first pod goes to A, and the second to C when it
reuses the first pod's ranking, to B when it is scored. PodTopologySpread must be off in the
profile: under its system defaults no pod is signed, so none is batched.
"""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.builders import NodeBuilder
from scheduler.testing.builders import PodBuilder

PREFERENCE = "example.com/preference"
NODE_CPUS = {"a": "4", "b": "4", "c": "6"}
WEIGHTS = {"a": 100, "b": 20, "c": 10}
NO_SPREADING = {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}
"""The `plugins` of a profile that batches: the default plugins but PodTopologySpread."""


def preference_node(name: str, preference: str) -> NodeBuilder:
    """Node `preference` (a, b or c) of the scenario, named `name`."""
    node = make_node(name).capacity(cpu=NODE_CPUS[preference], memory="16Gi", pods="110")
    return node.label(PREFERENCE, preference)


def preferred_terms() -> list[dict[str, Any]]:
    """The pods' preferredDuringSchedulingIgnoredDuringExecution node affinity."""
    return [
        {
            "weight": weight,
            "preference": {
                "matchExpressions": [{"key": PREFERENCE, "operator": "In", "values": [node]}]
            },
        }
        for node, weight in WEIGHTS.items()
    ]


def preferring_pod(name: str) -> PodBuilder:
    """A pod of the scenario: 4 CPUs (one fits a node), preferring a, then b, then c."""
    pod = make_pod(name).req(cpu="4", memory="4Gi")
    for term in preferred_terms():
        pod.preferred_node_affinity(term["weight"], term["preference"])
    return pod

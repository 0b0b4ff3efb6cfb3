"""`explain` on a cluster as it stands (nothing simulated first): pods the scheduler would not
try are said to be so, the plugin columns count nominated pods as the verdict does, and the
PLUGIN of a verdict is always a plugin."""

from __future__ import annotations

from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.sim import SimCluster
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.session import explain_in
from scheduler.testing import FakeClock

NODE_A = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, disk: hdd}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
"""


def _node_a_and_web(spec: str) -> str:
    """node-a and a pod default/web of this spec (YAML lines indented by two)."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n"
    return f"{NODE_A}---\n{pod}{spec}"


async def _explain(cluster: str, name: str = "web") -> Explanation:
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(cluster, "cluster").objects))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    return await explain_in(sim, "default", name, config, profiles, registry)


async def test_a_pod_held_by_scheduling_gates_is_gated_and_shows_what_would_follow() -> None:
    explanation = await _explain(
        _node_a_and_web(
            "  schedulingGates: [{name: example.com/wait}]\n  containers: [{name: c, image: x}]\n"
        )
    )
    assert explanation.outcome == "Gated"
    assert explanation.gate is not None
    assert explanation.gate.plugin == "SchedulingGates"
    assert explanation.gate.reasons == ("waiting for scheduling gates: [example.com/wait]",)
    assert explanation.chosen_node == "node-a"
    assert explanation.to_json()["gate"]["plugin"] == "SchedulingGates"


async def test_a_pod_whose_claim_does_not_exist_is_gated_by_dynamic_resources() -> None:
    explanation = await _explain(
        _node_a_and_web(
            "  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]\n"
            "  resourceClaims: [{name: gpu, resourceClaimName: missing}]\n"
        )
    )
    assert explanation.outcome == "Gated"
    assert explanation.gate is not None and explanation.gate.plugin == "DynamicResources"


async def test_a_pod_being_deleted_is_skipped_with_the_schedulers_event_text() -> None:
    explanation = await _explain(
        NODE_A
        + """---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  deletionTimestamp: "2026-01-01T00:00:00Z"
  finalizers: [example.com/keep]
spec:
  containers: [{name: c, image: x}]
"""
    )
    assert (explanation.outcome, explanation.message) == (
        "Skipped",
        "skip schedule deleting pod: default/web",
    )
    assert explanation.chosen_node == "" and explanation.gate is None
    assert explanation.to_json()["gate"] is None


NOMINATED = """---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  priority: 100
  nodeSelector: {nope: nope}
  containers: [{name: c, image: x, resources: {requests: {cpu: 1500m}}}]
status: {nominatedNodeName: node-a}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


async def test_the_plugin_column_counts_the_pods_nominated_to_the_node() -> None:
    explanation = await _explain(NODE_A + NOMINATED)
    node = explanation.node("node-a")
    assert (node.verdict.plugin, node.verdict.reasons) == (
        "NodeResourcesFit",
        ("Insufficient cpu",),
    )
    fit = next(v for v in node.plugins if v.plugin == "NodeResourcesFit")
    assert fit.reasons == ("Insufficient cpu",)
    assert fit.details[0] == "counting the pods nominated to this node: default/big"
    # The nominated pod's room is not offered: the pod fits in what it leaves.
    assert [f.summary for f in explanation.fixes if f.kind == "resources"] == [
        "fits node-a if the cpu request is ≤ 500m"
    ]
    # The other plugins pass with the nominated pod and without it (or have nothing to do).
    assert {v.code for v in node.plugins if v.plugin != "NodeResourcesFit"} <= {"Success", "Skip"}


async def test_nodes_outside_what_pre_filter_allows_name_the_plugin_that_narrowed_them() -> None:
    node_b = NODE_A.replace("node-a", "node-b").replace("hdd", "ssd")
    pod = """---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [node-b]}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
"""
    explanation = await _explain(NODE_A + "---" + node_b + pod)
    assert explanation.outcome == "Unschedulable"
    verdicts = {n.name: n.verdict for n in explanation.nodes}
    assert verdicts["node-a"].plugin == "NodeAffinity"
    assert verdicts["node-a"].reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    assert verdicts["node-b"].plugin == "NodeResourcesFit"
    # A pass is decided by no one plugin.
    fits = await _explain(NODE_A + NOMINATED.replace('cpu: "1"', "cpu: 100m"))
    assert [n.verdict.plugin for n in fits.nodes if n.feasible] == [""]

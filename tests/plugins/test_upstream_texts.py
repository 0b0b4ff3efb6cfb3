"""Every Filter and PreFilter reason of the default plugins, word for word as kube-scheduler
v1.36 writes it: users read these in `kubectl describe pod`, alerts match on them.

The expected texts are written out here rather than imported, so a change to any of them
fails this test.
"""

from __future__ import annotations

import pytest

from plugins import inter_pod_affinity
from plugins import node_affinity
from plugins import node_name
from plugins import node_ports
from plugins import node_unschedulable
from plugins import node_volume_limits
from plugins import pod_topology_spread
from plugins import taint_toleration
from plugins import volume_binding
from plugins import volume_restrictions
from plugins import volume_zone
from plugins.helpers.preemption import messages as preemption
from plugins.helpers.preemption.victims import NO_VICTIMS_FOUND

V136_TEXTS: dict[str, tuple[str, str]] = {
    "NodeAffinity/pod": (
        node_affinity.REASON_POD,
        "node(s) didn't match Pod's node affinity/selector",
    ),
    "NodeAffinity/enforced": (
        node_affinity.REASON_ENFORCED,
        "node(s) didn't match scheduler-enforced node affinity",
    ),
    "NodeAffinity/conflict": (node_affinity.REASON_CONFLICT, "pod affinity terms conflict"),
    "NodeName": (node_name.REASON, "node(s) didn't match the requested node name"),
    "NodePorts": (node_ports.REASON, "node(s) didn't have free ports for the requested pod ports"),
    "NodeUnschedulable": (node_unschedulable.REASON, "node(s) were unschedulable"),
    "TaintToleration": (taint_toleration.REASON, "node(s) had untolerated taint(s)"),
    "InterPodAffinity/affinity": (
        inter_pod_affinity.AFFINITY_RULES_NOT_MATCH,
        "node(s) didn't match pod affinity rules",
    ),
    "InterPodAffinity/anti-affinity": (
        inter_pod_affinity.ANTI_AFFINITY_RULES_NOT_MATCH,
        "node(s) didn't match pod anti-affinity rules",
    ),
    "InterPodAffinity/existing": (
        inter_pod_affinity.EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
        "node(s) didn't satisfy existing pods anti-affinity rules",
    ),
    "PodTopologySpread/constraints": (
        pod_topology_spread.CONSTRAINTS_NOT_MATCH,
        "node(s) didn't match pod topology spread constraints",
    ),
    "PodTopologySpread/label": (
        pod_topology_spread.NODE_LABEL_NOT_MATCH,
        "node(s) didn't match pod topology spread constraints (missing required label)",
    ),
    "VolumeBinding/bind": (
        volume_binding.REASON_BIND_CONFLICT,
        "node(s) didn't find available persistent volumes to bind",
    ),
    "VolumeBinding/node": (
        volume_binding.REASON_NODE_CONFLICT,
        "node(s) didn't match PersistentVolume's node affinity",
    ),
    "VolumeBinding/space": (
        volume_binding.REASON_NOT_ENOUGH_SPACE,
        "node(s) did not have enough free storage",
    ),
    "VolumeBinding/pv": (
        volume_binding.REASON_PV_NOT_EXIST,
        "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
    ),
    "VolumeBinding/immediate": (
        volume_binding.REASON_UNBOUND_IMMEDIATE,
        "pod has unbound immediate PersistentVolumeClaims",
    ),
    "VolumeRestrictions/disk": (
        volume_restrictions.REASON_DISK_CONFLICT,
        "node(s) had no available disk",
    ),
    "VolumeRestrictions/rwop": (
        volume_restrictions.REASON_READ_WRITE_ONCE_POD_CONFLICT,
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod",
    ),
    "VolumeZone": (volume_zone.REASON_CONFLICT, "node(s) had no available volume zone"),
    "NodeVolumeLimits": (
        node_volume_limits.REASON_MAX_VOLUME_COUNT,
        "node(s) exceed max volume count",
    ),
    "DefaultPreemption/not-helpful": (
        preemption.NOT_HELPFUL,
        "Preemption is not helpful for scheduling",
    ),
    "DefaultPreemption/no-victims": (
        NO_VICTIMS_FOUND,
        "No preemption victims found for incoming pod",
    ),
    "DefaultPreemption/never": (
        preemption.NOT_ELIGIBLE_POLICY_NEVER,
        "not eligible due to preemptionPolicy=Never.",
    ),
    "DefaultPreemption/terminating": (
        preemption.NOT_ELIGIBLE_TERMINATING,
        "not eligible due to a terminating pod on the nominated node.",
    ),
}


@pytest.mark.parametrize("case", sorted(V136_TEXTS), ids=str)
def test_text_is_upstream_v1_36(case: str) -> None:
    ours, upstream = V136_TEXTS[case]
    assert ours == upstream

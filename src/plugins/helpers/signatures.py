"""Pod signatures (opportunistic batching): the names of the fragments plugins sign pods with,
and the signers several plugins share.

A plugin's fragments hold all of the pod that its PreFilter, Filter, PreScore and Score read
(`SignPlugin`): two pods with equal fragments get the same answers from it on a node. Values
are hashable and canonical: a map becomes its sorted items and a list whose order means
nothing is sorted, so that the pods of one template sign alike whatever order their lists
come in. Plugins that give a fragment of the same name must give the same value for a pod,
which is why each shared one has a single signer here.

Upstream names fragments after the pod fields they come from (`v1.Pod.Spec.Tolerations`);
the names here are shorter. Only the values are compared, never a name against another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from typing import NamedTuple

import orjson

from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.resources.allocation import has_pod_level_requests
from plugins.helpers.resources.allocation import request_summary
from plugins.helpers.volumes import pod_volumes
from scheduler.framework import Pod
from scheduler.framework import SignFragments
from scheduler.objects.taints import Toleration

RESOURCES: Final = "resources"
VOLUMES: Final = "volumes"
NAMESPACE: Final = "namespace"
TOLERATIONS: Final = "tolerations"
NODE_AFFINITY: Final = "nodeAffinity"
NODE_SELECTOR: Final = "nodeSelector"
NODE_NAME: Final = "nodeName"
HOST_PORTS: Final = "hostPorts"
IMAGES: Final = "images"
LABELS: Final = "labels"
FEATURES: Final = "features"

# Volume sources that name pod-specific objects but never decide where a pod may go; left out,
# or no two pods of a Deployment that mounts its own token or config would ever sign alike.
_UNPLACED_SOURCES: Final = ("configMap", "secret")


def sorted_items(mapping: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A string map (labels, a node selector) in a hashable form that ignores key order."""
    return tuple(sorted(mapping.items()))


# ---- tolerations: TaintToleration and NodeUnschedulable -------------------------------------


def _toleration_order(toleration: Toleration) -> tuple[str, str, str, str]:
    # Upstream sorts by key and value only; the operator and effect complete the order, so
    # that tolerations differing only there compare equal in any order too.
    return toleration.key, toleration.value, toleration.operator, toleration.effect


def tolerations_fragments(pod: Pod) -> SignFragments:
    return {TOLERATIONS: tuple(sorted(pod.tolerations, key=_toleration_order))}


# ---- volumes: NodeVolumeLimits, VolumeBinding, VolumeZone, VolumeRestrictions ---------------


def volumes_fragments(pod: Pod) -> SignFragments | None:
    """Each volume's source (its definition without its name) in JSON with sorted keys, the
    list sorted; configMap and secret volumes are left out.

    Stricter than upstream in two ways, both so that equal fragments mean equal answers: a
    PersistentVolumeClaim is looked up in the pod's namespace, so a pod using one signs its
    namespace as well; and a generic ephemeral volume's claim is the pod's own (named after
    the pod, created and bound for it alone), so such a pod is not compared with others.
    """
    sources: list[str] = []
    uses_claims = False
    for volume in pod_volumes(pod):
        if any(volume.get(kind) is not None for kind in _UNPLACED_SOURCES):
            continue
        if volume.get("ephemeral") is not None:
            return None
        uses_claims = uses_claims or volume.get("persistentVolumeClaim") is not None
        source = {key: value for key, value in volume.items() if key != "name"}
        try:
            sources.append(orjson.dumps(source, option=orjson.OPT_SORT_KEYS).decode())
        except TypeError:
            # Not plain JSON (an object built in memory): no canonical form to compare.
            return None
    fragments: dict[str, object] = {VOLUMES: tuple(sorted(sources))}
    if uses_claims:
        fragments[NAMESPACE] = pod.namespace
    return fragments


# ---- resources: NodeResourcesFit and NodeResourcesBalancedAllocation -------------------------


class RequestSummary(NamedTuple):
    """A pod's requests (sorted by name), with the non-zero cpu and memory scoring uses."""

    requests: tuple[tuple[str, int], ...]
    non_zero_cpu: int
    non_zero_memory: int


def _summary(pod: Pod, *, pod_level: bool) -> RequestSummary:
    requests, non_zero_cpu, non_zero_memory = request_summary(pod, pod_level=pod_level)
    return RequestSummary(tuple(sorted(requests.items())), non_zero_cpu, non_zero_memory)


def resources_fragments(pod: Pod, device_classes: DeviceClassResolver) -> SignFragments | None:
    """The pod's effective requests (init containers, sidecars, overhead and pod-level
    resources folded in), or None when a DeviceClass provides one of the resources it asks for.

    Where the pod sets pod-level requests, its containers' sum is signed too: NodeResourcesFit
    scores by that sum (upstream signs only the effective requests).
    """
    if device_classes.provides_any(pod):
        return None
    containers = _summary(pod, pod_level=False) if has_pod_level_requests(pod) else None
    return {RESOURCES: (_summary(pod, pod_level=True), containers)}

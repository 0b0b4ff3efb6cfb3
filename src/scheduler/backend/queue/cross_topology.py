"""Which unschedulable pods an assigned pod's arrival or change can possibly help.

A pod event only matters to pods whose placement depends on other pods across a topology:
those with a required pod-affinity term matching the assigned pod, and those rejected by
PodTopologySpread in the same namespace. Everything else is left alone before any hint runs.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping

from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.objects.pod import Pod

POD_TOPOLOGY_SPREAD = "PodTopologySpread"

NamespaceLabels = Callable[[str], Mapping[str, str] | None]


def pods_with_cross_topology_term(
    candidates: Iterable[QueuedPodInfo], assigned: Pod, namespace_labels: NamespaceLabels
) -> list[QueuedPodInfo]:
    labels_of_namespace: Mapping[str, str] | None = None
    looked_up = False
    selected: list[QueuedPodInfo] = []
    for info in candidates:
        pod = info.pod
        if (
            POD_TOPOLOGY_SPREAD in info.unschedulable_plugins
            and pod.namespace == assigned.namespace
        ):
            selected.append(info)
            continue
        if pod.pod_affinity is None or not pod.pod_affinity.required:
            continue
        if not looked_up:
            # Namespace labels are needed only for namespaceSelector terms; fetch them once.
            labels_of_namespace = namespace_labels(assigned.namespace)
            looked_up = True
        if any(
            term.matches_pod(assigned.namespace, assigned.labels, labels_of_namespace)
            for term in pod.pod_affinity.required
        ):
            selected.append(info)
    return selected

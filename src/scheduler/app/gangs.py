"""PodGroups in `simulate`: generated gangs, the profile they need, and each group's outcome."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.dialects import group_of_raw
from plugins.coscheduling.dialects import resource_of_api_version
from scheduler.config import EffectiveProfile
from scheduler.framework.errors import ConfigError
from scheduler.objects.raw import DEFAULT_NAMESPACE

COSCHEDULING = "Coscheduling"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

# The profile generated gangs get when no configuration is given: Coscheduling at every point
# and as the queue sort, as in deploy/examples/gang-scheduling-config.yaml.
GANG_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": COSCHEDULING}]},
                "queueSort": {"enabled": [{"name": COSCHEDULING}], "disabled": [{"name": "*"}]},
            },
        }
    ],
}


def generate_gangs(
    gangs: int, size: int, shape: Mapping[str, str], scheduler_name: str
) -> list[dict[str, Any]]:
    """`gangs` PodGroups of minMember `size`, each with `size` labelled pods."""
    objects: list[dict[str, Any]] = []
    width = len(str(max(gangs - 1, 0)))
    container: dict[str, Any] = {"name": "pause", "image": "registry.k8s.io/pause:3.10"}
    if shape:
        container["resources"] = {"requests": dict(shape)}
    for g in range(gangs):
        name = f"gang-{g:0{width}d}"
        objects.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
                "spec": {"minMember": size},
            }
        )
        objects.extend(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{i}",
                    "namespace": DEFAULT_NAMESPACE,
                    "labels": {GROUP_LABEL: name},
                },
                "spec": {"schedulerName": scheduler_name, "containers": [copy.deepcopy(container)]},
            }
            for i in range(size)
        )
    return objects


def require_coscheduling(profiles: Sequence[EffectiveProfile], scheduler_name: str) -> None:
    """Generated gangs are pointless in a profile that does not gang-schedule: say so."""
    for profile in profiles:
        if profile.scheduler_name == scheduler_name:
            if any(ref.name == COSCHEDULING for refs in profile.plugins.values() for ref in refs):
                return
            raise ConfigError(
                f"--gangs: profile {scheduler_name!r} does not enable {COSCHEDULING}; its "
                "PodGroups would be ignored (see deploy/examples/gang-scheduling-config.yaml)"
            )
    raise ConfigError(f"--gangs: no profile has schedulerName {scheduler_name!r}")


@dataclass(slots=True)
class GroupOutcome:
    namespace: str
    name: str
    min_member: int
    pods: int
    bound: int
    waiting: int
    status: str  # Scheduled, Waiting, Unschedulable
    message: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def group_outcomes(
    groups: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    waiting: set[str],
    failures: Mapping[str, str],
) -> list[GroupOutcome]:
    """Each PodGroup: how many members exist, are bound, wait at Permit; and why not placed."""
    members: dict[GroupRef, list[Mapping[str, Any]]] = {}
    for pod in pods:
        ref = group_of_raw(pod)
        if ref is not None:
            members.setdefault(ref, []).append(pod)
    outcomes = []
    for group in groups:
        resource = resource_of_api_version(str(group.get("apiVersion") or ""))
        if resource is None:
            continue
        meta = group.get("metadata") or {}
        ref = GroupRef(
            resource, str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta.get("name"))
        )
        spec = group.get("spec") or {}
        gang = (spec.get("schedulingPolicy") or {}).get("gang") or {}
        minimum = int(spec.get("minMember") or gang.get("minCount") or 1)
        mine = members.get(ref, [])
        keys = [f"{ref.namespace}/{(p.get('metadata') or {}).get('name')}" for p in mine]
        bound = sum(1 for p in mine if (p.get("spec") or {}).get("nodeName"))
        held = sum(1 for k in keys if k in waiting)
        if bound >= minimum:
            status, message = "Scheduled", ""
        elif held:
            status, message = "Waiting", f"{held} members wait at Permit for the rest"
        else:
            status = "Unschedulable"
            message = next((failures[k] for k in sorted(keys) if k in failures), "")
            if not mine:
                message = f"no pods name the group ({minimum} required)"
        outcomes.append(
            GroupOutcome(ref.namespace, ref.name, minimum, len(mine), bound, held, status, message)
        )
    return sorted(outcomes, key=lambda o: o.key)

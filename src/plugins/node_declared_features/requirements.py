"""Which declared node features a pod needs, as kube-scheduler v1.36 infers them.

A node's kubelet lists in `status.declaredFeatures` the newer features it supports. v1.36's
registry knows five, and only two of them can be inferred from a pod's spec (the others concern
updates of running pods, which scheduling never sees):

- `RestartAllContainersOnContainerExits`: a container or init container with a restart rule
  whose action is `RestartAllContainers`;
- `UserNamespacesHostNetworkSupport`: a pod on the host network in its own user namespace
  (`hostNetwork: true` with `hostUsers: false`).

None of them has a release past which every node is assumed to have it, so no requirement is
dropped for the scheduler's version.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK: Final = "UserNamespacesHostNetworkSupport"

Requirements = tuple[str, ...]
"""Feature names, sorted."""


def required_features(spec: Mapping[str, Any]) -> Requirements:
    """The declared features a node needs for a pod with this spec, sorted by name."""
    needed = []
    if _restarts_all_containers(spec):
        needed.append(RESTART_ALL_CONTAINERS)
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        needed.append(USER_NAMESPACES_HOST_NETWORK)
    return tuple(sorted(needed))


def _restarts_all_containers(spec: Mapping[str, Any]) -> bool:
    containers: Sequence[Any] = [
        *(spec.get("containers") or ()),
        *(spec.get("initContainers") or ()),
    ]
    return any(
        isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers"
        for container in containers
        if isinstance(container, Mapping)
        for rule in container.get("restartPolicyRules") or ()
    )

"""Fluent builders for Pod and Node API objects (dicts) and their parsed views.

pod = make_pod("web-1").req(cpu="100m", memory="500Mi").label("app", "web").obj()
node = make_node("n1").capacity(cpu="4", memory="32Gi", pods=110).zone("a").obj()
"""

from __future__ import annotations

import itertools
from typing import Any
from typing import Self

from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import REGION_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.testing.object_builder import ObjectBuilder

_uids = itertools.count(1)


class PodBuilder(ObjectBuilder):
    def __init__(self, name: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": f"uid-{name}-{next(_uids)}",
                    "labels": {},
                },
                "spec": {
                    "schedulerName": "default-scheduler",
                    "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                },
                "status": {"phase": "Pending"},
            }
        )

    def namespace(self, namespace: str) -> Self:
        self._meta["namespace"] = namespace
        return self

    def uid(self, uid: str) -> Self:
        self._meta["uid"] = uid
        return self

    def scheduler(self, name: str) -> Self:
        self._spec["schedulerName"] = name
        return self

    def node(self, name: str) -> Self:
        self._spec["nodeName"] = name
        return self

    def priority(self, value: int) -> Self:
        self._spec["priority"] = value
        return self

    def preemption_policy(self, policy: str) -> Self:
        self._spec["preemptionPolicy"] = policy
        return self

    def req(self, **requests: str | int) -> Self:
        """Requests of the first container; extended resources via `req(**{"x.io/gpu": 1})`."""
        container = self._spec["containers"][0]
        container.setdefault("resources", {}).setdefault("requests", {}).update(
            {k: str(v) for k, v in requests.items()}
        )
        return self

    def container(self, image: str, **requests: str | int) -> Self:
        """Add another container."""
        entry: dict[str, Any] = {"name": f"c{len(self._spec['containers'])}", "image": image}
        if requests:
            entry["resources"] = {"requests": {k: str(v) for k, v in requests.items()}}
        self._spec["containers"].append(entry)
        return self

    def image(self, image: str) -> Self:
        self._spec["containers"][0]["image"] = image
        return self

    def init_container(self, sidecar: bool = False, **requests: str | int) -> Self:
        entry: dict[str, Any] = {
            "name": f"init{len(self._spec.get('initContainers', []))}",
            "image": "busybox",
            "resources": {"requests": {k: str(v) for k, v in requests.items()}},
        }
        if sidecar:
            entry["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(entry)
        return self

    def overhead(self, **resources: str | int) -> Self:
        self._spec["overhead"] = {k: str(v) for k, v in resources.items()}
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> Self:
        entry: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            entry["hostIP"] = host_ip
        self._spec["containers"][0].setdefault("ports", []).append(entry)
        return self

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal"
    ) -> Self:
        entry = {"key": key, "operator": operator, "effect": effect}
        if value:
            entry["value"] = value
        self._spec.setdefault("tolerations", []).append(entry)
        return self

    def node_selector(self, **labels: str) -> Self:
        self._spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def _affinity(self, kind: str) -> dict[str, Any]:
        section: dict[str, Any] = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        return section

    def node_affinity_in(self, key: str, *values: str) -> Self:
        """Add a required node-affinity term `key In values` (terms are ORed)."""
        required = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        required["nodeSelectorTerms"].append(
            {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        )
        return self

    def node_affinity_term(self, term: dict[str, Any]) -> Self:
        required = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        required["nodeSelectorTerms"].append(term)
        return self

    def preferred_node_affinity(self, weight: int, term: dict[str, Any]) -> Self:
        self._affinity("nodeAffinity").setdefault(
            "preferredDuringSchedulingIgnoredDuringExecution", []
        ).append({"weight": weight, "preference": term})
        return self

    def pod_affinity(
        self,
        kind: str,
        topology_key: str,
        match_labels: dict[str, str] | None = None,
        *,
        anti: bool = False,
        weight: int = 0,
        namespaces: list[str] | None = None,
        namespace_selector: dict[str, Any] | None = None,
        match_expressions: list[dict[str, Any]] | None = None,
    ) -> Self:
        """Add a pod (anti-)affinity term; `kind` is "required" or "preferred"."""
        selector: dict[str, Any] = {}
        if match_labels is not None:
            selector["matchLabels"] = match_labels
        if match_expressions is not None:
            selector["matchExpressions"] = match_expressions
        term: dict[str, Any] = {"labelSelector": selector, "topologyKey": topology_key}
        if namespaces is not None:
            term["namespaces"] = namespaces
        if namespace_selector is not None:
            term["namespaceSelector"] = namespace_selector
        section = self._affinity("podAntiAffinity" if anti else "podAffinity")
        if kind == "required":
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def scheduling_gate(self, name: str) -> Self:
        self._spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def nominated(self, node_name: str) -> Self:
        self._raw["status"]["nominatedNodeName"] = node_name
        return self

    def phase(self, phase: str) -> Self:
        self._raw["status"]["phase"] = phase
        return self

    def spec(self, **fields: Any) -> Self:
        self._spec.update(fields)
        return self

    def obj(self) -> Pod:
        return Pod.from_dict(self.dict())


class NodeBuilder(ObjectBuilder):
    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-node-{name}-{next(_uids)}",
                    "labels": {HOSTNAME_LABEL: name},
                },
                "spec": {},
                "status": {
                    "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                    "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )

    def capacity(self, **resources: str | int) -> Self:
        values = {k: str(v) for k, v in resources.items()}
        self._raw["status"]["capacity"] = dict(values)
        self._raw["status"]["allocatable"] = dict(values)
        return self

    def allocatable(self, **resources: str | int) -> Self:
        self._raw["status"]["allocatable"].update({k: str(v) for k, v in resources.items()})
        return self

    def zone(self, zone: str, region: str = "") -> Self:
        self._raw["metadata"]["labels"][ZONE_LABEL] = zone
        if region:
            self._raw["metadata"]["labels"][REGION_LABEL] = region
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        entry = {"key": key, "effect": effect}
        if value:
            entry["value"] = value
        self._raw["spec"].setdefault("taints", []).append(entry)
        return self

    def unschedulable(self, value: bool = True) -> Self:
        self._raw["spec"]["unschedulable"] = value
        return self

    def declared_features(self, *names: str) -> Self:
        """status.declaredFeatures, which the kubelet keeps sorted."""
        self._raw["status"]["declaredFeatures"] = sorted(names)
        return self

    def image(self, name: str, size_bytes: int) -> Self:
        self._raw["status"].setdefault("images", []).append(
            {"names": [name], "sizeBytes": size_bytes}
        )
        return self

    def obj(self) -> Node:
        return Node.from_dict(self.dict())


def make_pod(name: str, namespace: str = DEFAULT_NAMESPACE) -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)

"""Simulation input: Kubernetes YAML documents and generated clusters.

A scenario file is ordinary multi-document Kubernetes YAML (Nodes, Pods, Namespaces, ...). It
may also carry one KubeSchedulerConfiguration document, used when --config is not given.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from importlib import resources
from pathlib import Path
from typing import Any

from scheduler.app.toleration_admission import check_tolerations
from scheduler.app.workloads import WORKLOAD_KINDS
from scheduler.app.workloads import check_pod_template
from scheduler.app.workloads import refuse_unexpanded
from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.sim.kinds import KindRegistry
from scheduler.config import load_yaml_documents
from scheduler.config import read_text
from scheduler.framework.errors import ConfigError
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity
from scheduler.objects.raw import DEFAULT_NAMESPACE

CONFIG_KIND = "KubeSchedulerConfiguration"
BUNDLED = "default.yaml"


@dataclass(slots=True)
class Scenario:
    objects: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] | None = None
    sources: list[str] = field(default_factory=list)

    def extend(self, other: Scenario) -> None:
        self.objects.extend(other.objects)
        self.sources.extend(other.sources)
        if other.config is not None:
            if self.config is not None:
                raise ConfigError(
                    f"{', '.join(other.sources)}: a second {CONFIG_KIND} document; "
                    "give only one (or pass --config)"
                )
            self.config = other.config

    @property
    def pods(self) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == "Pod"]

    @property
    def nodes(self) -> list[dict[str, Any]]:
        return [o for o in self.objects if o.get("kind") == "Node"]


def parse_documents(text: str, source: str) -> Scenario:
    documents = load_yaml_documents(text, source)
    scenario = Scenario(sources=[source])
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise ConfigError(f"{source}: document {index}: expected a Kubernetes object")
        items = document.get("items") if str(document.get("kind", "")).endswith("List") else None
        for item in items if isinstance(items, list) else [document]:
            _check_object(item, f"{source}: document {index}")
            if item.get("kind") == CONFIG_KIND:
                if scenario.config is not None:
                    raise ConfigError(f"{source}: more than one {CONFIG_KIND} document")
                scenario.config = dict(item)
            else:
                scenario.objects.append(dict(item))
    return scenario


def _check_object(item: Any, where: str) -> None:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: expected a Kubernetes object, got {type(item).__name__}")
    for required in ("apiVersion", "kind"):
        if not item.get(required):
            raise ConfigError(f"{where}: {required}: Required value")
        if not isinstance(item[required], str):
            raise ConfigError(f"{where}: {required}: must be a string")
    if item.get("kind") == CONFIG_KIND:
        return
    meta = item.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise ConfigError(f"{where}: {item.get('kind')}: metadata.name: Required value")
    for key in ("name", "namespace"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise ConfigError(f"{where}: {item.get('kind')}: metadata.{key}: must be a string")
    for key in ("spec", "status"):
        # The simulated cluster fills defaults into both, as the API server would.
        if key in item and not isinstance(item[key], Mapping):
            named = "/".join(str(meta[k]) for k in ("namespace", "name") if meta.get(k))
            raise ConfigError(f"{where}: {item.get('kind')} {named}: {key}: must be an object")
    try:
        refuse_unexpanded(item)
        _KINDS.for_object(item)
        check_pod_template(item)
    except (ValueError, ConfigError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    # Pods and nodes are read the way the scheduler will read them, so that a bad quantity or
    # selector is reported here, naming the file, rather than skipped during the run.
    parser = _PARSERS.get(str(item.get("kind")))
    if parser is not None and str(item.get("apiVersion")) == "v1":
        try:
            parser(item)
        except InvalidObjectError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
    if item.get("kind") == "Pod" and item.get("apiVersion") == "v1":
        try:
            check_tolerations(item.get("spec") or {}, "spec")
        except ConfigError as exc:
            named = f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta['name']}"
            raise ConfigError(f"{where}: Pod {named}: {exc}") from exc


# The kinds the simulated cluster can hold, so an unknown one is reported with its document.
_KINDS = KindRegistry((*BUILTIN_KINDS, *WORKLOAD_KINDS))

_PARSERS: dict[str, Callable[[Mapping[str, Any]], object]] = {
    "Pod": Pod.from_dict,
    "Node": Node.from_dict,
}


def load_scenario_file(path: str | Path) -> Scenario:
    return parse_documents(read_text(path), str(path))


def load_bundled() -> Scenario:
    text = resources.files("scheduler.app.scenarios").joinpath(BUNDLED).read_text()
    return parse_documents(text, f"bundled scenario {BUNDLED}")


def parse_shape(text: str, option: str) -> dict[str, str]:
    """`cpu=4,memory=32Gi,pods=110` -> {"cpu": "4", ...}, each value a valid quantity."""
    shape: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name or not value:
            raise ConfigError(f"{option}: {part!r}: expected resource=quantity")
        try:
            parse_quantity(value)
        except QuantityError as exc:
            raise ConfigError(f"{option}: {name}: {exc}") from exc
        shape[name] = value
    return shape


def generate_nodes(count: int, shape: Mapping[str, str], zones: int) -> list[dict[str, Any]]:
    nodes = []
    width = len(str(max(count - 1, 0)))
    for i in range(count):
        name = f"node-{i:0{width}d}"
        labels = {HOSTNAME_LABEL: name}
        if zones > 0:
            labels[ZONE_LABEL] = f"zone-{i % zones}"
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {},
                "status": {
                    "capacity": dict(shape),
                    "allocatable": dict(shape),
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
        )
    return nodes


def generate_pods(
    count: int, shape: Mapping[str, str], scheduler_name: str, namespace: str = DEFAULT_NAMESPACE
) -> list[dict[str, Any]]:
    width = len(str(max(count - 1, 0)))
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10"}
    if shape:
        container["resources"] = {"requests": dict(shape)}  # type: ignore[assignment]
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{i:0{width}d}", "namespace": namespace},
            "spec": {"schedulerName": scheduler_name, "containers": [copy.deepcopy(container)]},
        }
        for i in range(count)
    ]


def ordered_for_loading(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Namespaces, then nodes, then everything else, pods last (as a cluster would see them)."""
    rank = {"Namespace": 0, "Node": 1, "Pod": 3}
    return sorted(objects, key=lambda o: rank.get(str(o.get("kind")), 2))

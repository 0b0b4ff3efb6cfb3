"""The nodes and pods of one daemon test, and what the cluster says about them.

Nodes are cluster-scoped and the control plane is shared by the session, so every test's nodes
carry a label value unique to the test, its pods select that value with a nodeSelector, and
the nodes are deleted when the test ends. Pods live in the test's own namespace.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scheduler.objects.resources import pod_requests
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import poll_until

NODE_LABEL = "e2e.kube-pyscheduler.io/test"
EVENTS_V1 = "/apis/events.k8s.io/v1"
# Object creation is I/O bound; a few threads make a few hundred pods quick to create.
CREATE_THREADS = 8

Object = dict[str, Any]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _server_side(manifest: Object) -> Object:
    """Builder objects carry a made-up uid; the server assigns its own."""
    manifest["metadata"].pop("uid", None)
    return manifest


def pod_scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            return condition  # type: ignore[no-any-return]
    return None


def cpu_millis(pod: Mapping[str, Any]) -> int:
    return pod_requests(pod.get("spec") or {}).get("cpu", 0)


class Workload:
    def __init__(self, admin: ApiClient, namespace: str) -> None:
        self.admin = admin
        self.namespace = namespace
        self.label_value = unique("w")
        self.nodes: list[str] = []

    @property
    def node_selector(self) -> dict[str, str]:
        return {NODE_LABEL: self.label_value}

    # ---- nodes -------------------------------------------------------------------------

    def create_node(
        self, *, cpu: str = "4", memory: str = "8Gi", pods: int = 110, prefix: str = "node"
    ) -> str:
        name = unique(prefix)
        manifest = make_node(name).capacity(cpu=cpu, memory=memory, pods=pods)
        manifest.label(NODE_LABEL, self.label_value)
        created = self.admin.post("/api/v1/nodes", _server_side(manifest.dict()))
        assert created.status == 201, created
        self.nodes.append(name)
        return name

    def create_nodes(self, count: int, **shape: Any) -> list[str]:
        return [self.create_node(**shape) for _ in range(count)]

    def delete_nodes(self) -> None:
        for name in self.nodes:
            self.admin.delete(f"/api/v1/nodes/{name}")
        self.nodes.clear()

    # ---- pods --------------------------------------------------------------------------

    def pod_manifest(
        self, name: str, scheduler: str, *, cpu: str = "100m", node_name: str | None = None
    ) -> Object:
        builder = make_pod(name, self.namespace).scheduler(scheduler).req(cpu=cpu)
        builder.node_selector(**self.node_selector)
        if node_name is not None:
            builder.node(node_name)
        return _server_side(builder.dict())

    def create_pod(self, manifest: Object) -> Object:
        created = self.admin.post(f"/api/v1/namespaces/{self.namespace}/pods", manifest)
        assert created.status == 201, created
        body: Object = created.body
        return body

    def create_pods(
        self,
        names: Iterable[str],
        scheduler: str,
        *,
        cpu: str = "100m",
        node_name: str | None = None,
    ) -> list[str]:
        manifests = [self.pod_manifest(n, scheduler, cpu=cpu, node_name=node_name) for n in names]
        with ThreadPoolExecutor(CREATE_THREADS) as pool:
            list(pool.map(self.create_pod, manifests))
        return [m["metadata"]["name"] for m in manifests]

    def pods(self) -> dict[str, Object]:
        listed = self.admin.get(f"/api/v1/namespaces/{self.namespace}/pods")
        assert listed.status == 200, listed
        return {p["metadata"]["name"]: p for p in listed.body["items"]}

    def placements(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Pod name -> spec.nodeName ("" when unbound), for `names` or every pod."""
        pods = self.pods()
        wanted = pods if names is None else {n: pods.get(n, {}) for n in names}
        return {n: (p.get("spec") or {}).get("nodeName") or "" for n, p in wanted.items()}

    def wait_bound(self, names: Sequence[str], *, timeout_s: float) -> dict[str, str]:
        """Until every pod in `names` has a node; returns where each went."""

        def all_bound() -> dict[str, str] | None:
            placed = self.placements(names)
            return placed if all(placed.values()) else None

        def unbound_count() -> str:
            return f"{sum(1 for n in self.placements(names).values() if not n)} still unbound"

        try:
            return poll_until(all_bound, f"{len(names)} pods bound", timeout_s=timeout_s)
        except AssertionError as err:
            raise AssertionError(f"{err}; {unbound_count()}") from None

    # ---- events ------------------------------------------------------------------------

    def events(self, reason: str | None = None) -> list[Object]:
        listed = self.admin.get(f"{EVENTS_V1}/namespaces/{self.namespace}/events")
        assert listed.status == 200, listed
        items: list[Object] = listed.body["items"]
        return [e for e in items if reason is None or e.get("reason") == reason]

    def events_by_pod(self, reason: str) -> dict[str, list[Object]]:
        grouped: dict[str, list[Object]] = {}
        for event in self.events(reason):
            grouped.setdefault(event["regarding"]["name"], []).append(event)
        return grouped

    def wait_events(
        self, reason: str, names: Iterable[str], *, timeout_s: float
    ) -> dict[str, list[Object]]:
        """Until each pod in `names` has at least one `reason` event; returns them by pod."""
        wanted = set(names)

        def present() -> dict[str, list[Object]] | None:
            grouped = self.events_by_pod(reason)
            return grouped if wanted <= grouped.keys() else None

        return poll_until(present, f"{reason} events for {len(wanted)} pods", timeout_s=timeout_s)

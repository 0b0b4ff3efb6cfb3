"""DynamicResources against a real kube-apiserver: ResourceSlices created here in place of a
driver, claims allocated and reserved by the daemon, kept across a daemon restart, and a
device handed on once its pod is gone.

There is no kube-controller-manager in this control plane, so when a pod is deleted the test
does what its resourceclaim controller does: take the pod out of the claim's reservedFor and
deallocate the claim. Everything else is the daemon's own work.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.workload import Workload
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

RESOURCE_API = "/apis/resource.k8s.io/v1"
MERGE_PATCH = "application/merge-patch+json"
BIND_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 30.0


class DraObjects:
    """Cluster-scoped classes and slices this test creates, removed at the end."""

    def __init__(self, admin: ApiClient, namespace: str) -> None:
        self.admin, self.namespace = admin, namespace
        self.driver = f"{unique('gpu')}.example.com"
        self.device_class = unique("gpu-class")
        self._cluster_scoped: list[str] = []

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        created = self.admin.post(path, body)
        assert created.status == 201, created
        result: dict[str, Any] = created.body
        return result

    def setup(self, nodes: list[str], extended_resource_name: str = "") -> None:
        cls = make_device_class(
            self.device_class,
            f'device.driver == "{self.driver}"',
            extended_resource_name=extended_resource_name,
        )
        self.create(f"{RESOURCE_API}/deviceclasses", cls)
        self._cluster_scoped.append(f"{RESOURCE_API}/deviceclasses/{self.device_class}")
        for node in nodes:
            name = f"{node}-{self.driver}"
            body = make_slice(name, self.driver, [device("gpu-0", model="e2e")], node=node)
            self.create(f"{RESOURCE_API}/resourceslices", body)
            self._cluster_scoped.append(f"{RESOURCE_API}/resourceslices/{name}")

    def track(self, path: str) -> None:
        """Remove this cluster-scoped object at the end."""
        self._cluster_scoped.append(path)

    def create_claim(self, name: str) -> None:
        claim = make_claim(name, self.namespace).request("gpu", self.device_class).dict()
        for field in ("uid", "resourceVersion"):
            del claim["metadata"][field]
        self.create(f"{RESOURCE_API}/namespaces/{self.namespace}/resourceclaims", claim)

    def claim(self, name: str) -> dict[str, Any]:
        got = self.admin.get(f"{RESOURCE_API}/namespaces/{self.namespace}/resourceclaims/{name}")
        assert got.status == 200, got
        body: dict[str, Any] = got.body
        return body

    def patch_claim(self, name: str, patch: dict[str, Any], subresource: str = "") -> None:
        path = f"{RESOURCE_API}/namespaces/{self.namespace}/resourceclaims/{name}"
        path += f"/{subresource}" if subresource else ""
        done = self.admin.request("PATCH", path, patch, content_type=MERGE_PATCH)
        assert done.status == 200, done

    def release(self, name: str) -> None:
        """What the resourceclaim controller does once the claim's pod is gone."""
        self.patch_claim(name, {"status": {"reservedFor": None, "allocation": None}}, "status")
        self.patch_claim(name, {"metadata": {"finalizers": None}})

    def cleanup(self) -> None:
        listed = self.admin.get(f"{RESOURCE_API}/namespaces/{self.namespace}/resourceclaims")
        for claim in listed.body.get("items") or ():
            self.patch_claim(claim["metadata"]["name"], {"metadata": {"finalizers": None}})
        for path in reversed(self._cluster_scoped):
            self.admin.delete(path)


@pytest.fixture
def dra(admin: ApiClient, namespace: str) -> Iterator[DraObjects]:
    objects = DraObjects(admin, namespace)
    try:
        yield objects
    finally:
        objects.cleanup()


def claim_pod(workload: Workload, name: str, scheduler: str, claim: str) -> str:
    manifest = workload.pod_manifest(name, scheduler)
    manifest["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    manifest["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]
    workload.create_pod(manifest)
    return name


def only(node: str) -> dict[str, Any]:
    """A slice's node selector for one node (so other tests' nodes do not see its devices)."""
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    return {"nodeSelectorTerms": [{"matchFields": [field]}]}


def allocated_device(claim: dict[str, Any]) -> tuple[str, str]:
    [result] = claim["status"]["allocation"]["devices"]["results"]
    return (result["pool"], result["device"])


def test_claims_are_allocated_kept_across_a_restart_and_freed_with_their_pod(
    daemons: DaemonLauncher, workload: Workload, dra: DraObjects
) -> None:
    scheduler = unique("dra-sched")
    nodes = workload.create_nodes(2)
    dra.setup(nodes)
    for name in ("c1", "c2", "c3"):
        dra.create_claim(name)

    daemon = daemons.start(scheduler)
    first = [claim_pod(workload, n, scheduler, c) for n, c in (("p1", "c1"), ("p2", "c2"))]
    placed = workload.wait_bound(first, timeout_s=BIND_TIMEOUT_S)
    pods = workload.pods()
    for pod_name, claim_name in (("p1", "c1"), ("p2", "c2")):
        claim = dra.claim(claim_name)
        assert allocated_device(claim) == (placed[pod_name], "gpu-0")
        uid = pods[pod_name]["metadata"]["uid"]
        assert claim["status"]["reservedFor"] == [
            {"resource": "pods", "name": pod_name, "uid": uid}
        ]
        assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
        terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
        assert terms[0]["matchFields"][0]["values"] == [placed[pod_name]]
    assert set(placed.values()) == set(nodes)

    # A new daemon knows nothing in memory: it must find both devices taken in the claims.
    daemon.stop()
    daemons.start(scheduler, label="restarted")
    claim_pod(workload, "p3", scheduler, "c3")
    workload.wait_events("FailedScheduling", ["p3"], timeout_s=EVENT_TIMEOUT_S)
    [event] = workload.events_by_pod("FailedScheduling")["p3"][:1]
    # Our two nodes are full; nodes other tests left in the cluster fail the node selector.
    assert ": 2 cannot allocate all claims" in event["note"], event["note"]
    assert ". still not schedulable, preemption: " in event["note"], event["note"]
    assert workload.placements(["p3"]) == {"p3": ""}

    # Deleting p1 (and releasing its claim, as the controller would) frees its GPU for p3.
    deleted = workload.admin.delete(f"/api/v1/namespaces/{workload.namespace}/pods/p1")
    assert deleted.status == 200, deleted
    dra.release("c1")
    moved = workload.wait_bound(["p3"], timeout_s=BIND_TIMEOUT_S)
    assert moved["p3"] == placed["p1"]
    poll_until(
        lambda: dra.claim("c3").get("status", {}).get("reservedFor"),
        "c3 reserved for p3",
        timeout_s=EVENT_TIMEOUT_S,
    )
    assert allocated_device(dra.claim("c3")) == (placed["p1"], "gpu-0")


def test_a_device_with_binding_conditions_binds_its_pod_once_the_driver_reports_it_ready(
    daemons: DaemonLauncher, workload: Workload, dra: DraObjects
) -> None:
    """A fabric-attached GPU (offered to the node by a selector): the daemon allocates it,
    reserves the claim, says it waits, and binds the pod only after the driver (this test)
    reports the device attached."""
    scheduler = unique("dra-bind")
    [node] = workload.create_nodes(1)
    dra.setup([])
    fabric = device("fabric-0", model="e2e")
    fabric.update(
        bindingConditions=["example.com/attached"],
        bindingFailureConditions=["example.com/failed"],
        bindsToNode=True,
    )
    name = f"fabric-{dra.driver}"
    dra.create(
        f"{RESOURCE_API}/resourceslices",
        make_slice(name, dra.driver, [fabric], node_selector=only(node), pool="fabric"),
    )
    dra.track(f"{RESOURCE_API}/resourceslices/{name}")
    dra.create_claim("c1")

    daemons.start(scheduler)
    claim_pod(workload, "p1", scheduler, "c1")
    workload.wait_events("BindingConditionsPending", ["p1"], timeout_s=EVENT_TIMEOUT_S)
    [event] = workload.events_by_pod("BindingConditionsPending")["p1"]
    assert event["note"] == f"waiting for binding conditions for device on node {node}"
    claim = dra.claim("c1")
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert result["bindingConditions"] == ["example.com/attached"]
    assert result["bindingFailureConditions"] == ["example.com/failed"]
    terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert terms[0]["matchFields"][0]["values"] == [node]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["p1"]
    assert workload.placements(["p1"]) == {"p1": ""}

    attached = {
        "type": "example.com/attached",
        "status": "True",
        "reason": "Attached",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    device_status = {
        "driver": dra.driver,
        "pool": "fabric",
        "device": "fabric-0",
        "conditions": [attached],
    }
    dra.patch_claim("c1", {"status": {"devices": [device_status]}}, "status")
    placed = workload.wait_bound(["p1"], timeout_s=BIND_TIMEOUT_S)
    assert placed == {"p1": node}


def test_pods_asking_for_an_extended_resource_get_devices_through_claims_the_daemon_makes(
    daemons: DaemonLauncher, workload: Workload, dra: DraObjects
) -> None:
    """The class provides `<driver>/gpu`; no node offers it through a device plugin. Each pod
    asking for one gets a GPU device: the daemon creates a claim for the pod, allocated and
    reserved, and names it in the pod's status. A third pod finds no GPU left."""
    scheduler = unique("dra-extended")
    resource = f"{dra.driver}/gpu"
    nodes = workload.create_nodes(2)
    dra.setup(nodes, extended_resource_name=resource)

    def gpu_pod(name: str) -> str:
        manifest = workload.pod_manifest(name, scheduler)
        asked = manifest["spec"]["containers"][0].setdefault("resources", {})
        asked.setdefault("requests", {})[resource] = "1"
        asked.setdefault("limits", {})[resource] = "1"
        workload.create_pod(manifest)
        return name

    daemons.start(scheduler)
    placed = workload.wait_bound([gpu_pod("p1"), gpu_pod("p2")], timeout_s=BIND_TIMEOUT_S)
    assert set(placed.values()) == set(nodes)
    pods = workload.pods()
    listed = dra.admin.get(f"{RESOURCE_API}/namespaces/{dra.namespace}/resourceclaims")
    claims = {c["metadata"]["name"]: c for c in listed.body["items"]}
    assert len(claims) == 2
    for name in ("p1", "p2"):
        pod = pods[name]
        status = pod["status"]["extendedResourceClaimStatus"]
        claim = claims[status["resourceClaimName"]]
        assert claim["metadata"]["generateName"] == f"{name}-extended-resources-"
        assert claim["metadata"]["annotations"] == {
            "resource.kubernetes.io/extended-resource-claim": "true"
        }
        [owner] = claim["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Pod",
            pod["metadata"]["uid"],
            True,
        )
        assert allocated_device(claim) == (placed[name], "gpu-0")
        assert [r["uid"] for r in claim["status"]["reservedFor"]] == [pod["metadata"]["uid"]]
        [request] = claim["spec"]["devices"]["requests"]
        assert request["exactly"]["deviceClassName"] == dra.device_class
        container = pod["spec"]["containers"][0]["name"]
        assert status["requestMappings"] == [
            {"containerName": container, "resourceName": resource, "requestName": request["name"]}
        ]

    gpu_pod("p3")
    workload.wait_events("FailedScheduling", ["p3"], timeout_s=EVENT_TIMEOUT_S)
    [event] = workload.events_by_pod("FailedScheduling")["p3"][:1]
    assert "cannot allocate all claims" in event["note"], event["note"]
    assert workload.placements(["p3"]) == {"p3": ""}

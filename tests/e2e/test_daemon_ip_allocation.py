"""IPAllocation against a real kube-apiserver with the IPPool CRD installed.

- Two replicas share a Lease; 200 annotated pods across 20 nodes take addresses from one /24
  while the leader is SIGKILLed mid-run. At the end every pod is bound with its own address,
  and the pool's status holds exactly those addresses, each for the pod that carries it.
- With the RBAC of deploy/ plus deploy/ip-allocation/ only, a pod whose PreBind fails (an
  admission policy refuses its address annotation) gives its address back, is retried and
  placed once the policy goes; a deleted pod's address returns to the pool.
"""

from __future__ import annotations

import ipaddress
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugins.ip_allocation import NETWORK
from tests.deploy.manifests import DEPLOY_DIR
from tests.e2e.api_client import ApiClient
from tests.e2e.controlplane import ControlPlane
from tests.e2e.custom_resources import install_crds
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.manifests import apply
from tests.e2e.manifests import read_manifests
from tests.e2e.test_daemon_rbac import RBAC_PROPAGATION_S
from tests.e2e.test_daemon_rbac import apply_deployed_rbac
from tests.e2e.workload import Workload
from tests.e2e.workload import unique
from tests.ip_pools import allocations_of
from tests.ip_pools import carried
from tests.ip_pools import ip_pool

pytestmark = pytest.mark.e2e

POOLS = "/apis/kube-pyscheduler.io/v1alpha1/ippools"
VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
VAP_BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
MERGE_PATCH = "application/merge-patch+json"
ACQUIRED = "Successfully acquired lease"
REFUSE_LABEL = "e2e.kube-pyscheduler.io/refuse-address"
# Upper bounds for waiting on the daemons and the server, not synchronisation delays.
ELECTION_TIMEOUT_S = 30.0
BIND_TIMEOUT_S = 180.0
SETTLE_TIMEOUT_S = 30.0
POLICY_TIMEOUT_S = 30.0


def _config(tmp_path: Path) -> Path:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "placeholder",
                "plugins": {"multiPoint": {"enabled": [{"name": "IPAllocation"}]}},
                "pluginConfig": [{"name": "IPAllocation", "args": {"reconcileIntervalSeconds": 2}}],
            }
        ],
    }
    path = tmp_path / f"ip-allocation-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def pools(admin: ApiClient) -> Iterator[list[str]]:
    """Names of the IPPools a test creates (cluster-scoped: deleted at the end)."""
    install_crds(admin)
    created: list[str] = []
    yield created
    for name in created:
        admin.delete(f"{POOLS}/{name}")


def _create_pool(admin: ApiClient, pools: list[str], *cidrs: str, network: str) -> str:
    name = unique("pool")
    answer = admin.post(POOLS, ip_pool(name, *cidrs, network=network))
    assert answer.status == 201, answer
    pools.append(name)
    return name


def _pool(admin: ApiClient, name: str) -> dict[str, Any]:
    answer = admin.get(f"{POOLS}/{name}")
    assert answer.status == 200, answer
    body: dict[str, Any] = answer.body
    return body


def _create_pods(
    workload: Workload, names: list[str], scheduler: str, network: str, **labels: str
) -> list[str]:
    for name in names:
        manifest = workload.pod_manifest(name, scheduler)
        manifest["metadata"].setdefault("annotations", {})[NETWORK] = network
        manifest["metadata"].setdefault("labels", {}).update(labels)
        workload.create_pod(manifest)
    return names


class Consistent:
    """A poll: every pod of `names` bound and carrying an address of the pool, no address
    twice, and the pool's status holding exactly those addresses for those pods."""

    def __init__(self, admin: ApiClient, workload: Workload, pool: str, names: list[str]):
        self.admin, self.workload, self.pool, self.names = admin, workload, pool, names
        self.problem = ""

    def __call__(self) -> dict[str, str] | None:
        pods = self.workload.pods()
        carried_by = {}
        for name in self.names:
            pod = pods.get(name)
            where = carried(pod) if pod is not None else None
            if pod is None or not pod["spec"].get("nodeName") or where is None:
                self.problem = f"{name} not bound with an address"
                return None
            carried_by[name] = where
        uids = {pods[name]["metadata"]["uid"]: name for name in self.names}
        allocated = allocations_of([_pool(self.admin, self.pool)])
        expected = {where: pods[name]["metadata"]["uid"] for name, where in carried_by.items()}
        if len(set(carried_by.values())) != len(carried_by):
            raise AssertionError(f"an address was handed out twice: {carried_by}")
        if allocated != expected:
            extra = {k: uids.get(v, v) for k, v in allocated.items() if k not in expected}
            self.problem = f"status differs from the pods: extra {extra}"
            return None
        return {name: where[1] for name, where in carried_by.items()}

    def __repr__(self) -> str:
        return self.problem


def _identity(daemon: SchedulerDaemon) -> str | None:
    acquired = daemon.records(ACQUIRED)
    return str(acquired[-1]["identity"]) if acquired else None


def test_200_pods_on_20_nodes_get_distinct_addresses_across_a_sigkilled_leader(
    admin: ApiClient,
    daemons: DaemonLauncher,
    workload: Workload,
    namespace: str,
    pools: list[str],
    tmp_path: Path,
) -> None:
    ours = unique("sched")
    network = unique("net")
    pool = _create_pool(admin, pools, "10.77.0.0/24", network=network)
    workload.create_nodes(20)
    config = _config(tmp_path)
    # Longer than the defaults of these tests: 200 pods' worth of work on a shared machine must
    # not cost the leader its Lease before the test kills it.
    election = LeaderElection(
        namespace, unique("lease"), lease_duration="10s", renew_deadline="8s", retry_period="1s"
    )
    extra = [f"--config={config}"]
    first = daemons.start(ours, label="a", leader_election=election, extra_args=extra)
    second = daemons.start(ours, label="b", leader_election=election, extra_args=extra)
    leading = poll_until(
        lambda: [d for d in (first, second) if _identity(d)] or None,
        "a replica acquiring the lease",
        timeout_s=ELECTION_TIMEOUT_S,
    )
    [leader] = leading
    [standby] = [d for d in (first, second) if d is not leader]

    names = [f"web-{i:03}" for i in range(200)]
    # Half the pods first. The leader is killed while it allocates them (some addresses
    # written, possibly one write in flight); the other half is created only after the kill,
    # so the standby always has pods to place from the pool status the leader left, however
    # fast the leader was.
    _create_pods(workload, names[:100], ours, network)
    poll_until(
        lambda: len(allocations_of([_pool(admin, pool)])) >= 40,
        "the leader allocating its first addresses",
        timeout_s=BIND_TIMEOUT_S,
    )
    leader.kill()
    allocated_at_kill = len(allocations_of([_pool(admin, pool)]))
    _create_pods(workload, names[100:], ours, network)
    poll_until(lambda: _identity(standby), "the standby leading", timeout_s=ELECTION_TIMEOUT_S)

    workload.wait_bound(names, timeout_s=BIND_TIMEOUT_S)
    check = Consistent(admin, workload, pool, names)
    addresses = poll_until(check, "pool status matching the pods", timeout_s=SETTLE_TIMEOUT_S)

    assert 40 <= allocated_at_kill <= 100
    assert len(set(addresses.values())) == 200
    subnet = ipaddress.ip_network("10.77.0.0/24")
    assert all(ipaddress.ip_address(a) in subnet for a in addresses.values())
    # The standby placed the rest, with nothing refused on the way.
    assert standby.records("Successfully bound pod to node")
    assert workload.events("FailedScheduling") == []


def _refuse_addresses(admin: ApiClient, value: str) -> tuple[str, str]:
    """An admission policy refusing the address annotation on pods labelled `value`; returns
    the policy's and its binding's names."""
    name = f"refuse-address-{value}"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["UPDATE"],
                        "resources": ["pods"],
                    }
                ]
            },
            "validations": [
                {
                    "expression": "!has(object.metadata.annotations) || "
                    "!('ip-allocation.kube-pyscheduler.io/address' in object.metadata.annotations)",
                    "message": "this pod may not carry an address",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"objectSelector": {"matchLabels": {REFUSE_LABEL: value}}},
        },
    }
    assert admin.post(VAP, policy).status == 201
    assert admin.post(VAP_BINDINGS, binding).status == 201
    return name, name


def _wait_policy_enforced(admin: ApiClient, workload: Workload, value: str) -> None:
    """Policies reach admission through an informer: probe with a pod until it is refused."""
    probe = workload.pod_manifest(unique("probe"), "nobody")
    probe["metadata"]["labels"] = {REFUSE_LABEL: value}
    created = workload.create_pod(probe)
    path = f"/api/v1/namespaces/{workload.namespace}/pods/{created['metadata']['name']}"
    patch = {"metadata": {"annotations": {"ip-allocation.kube-pyscheduler.io/address": "x"}}}
    poll_until(
        lambda: admin.request("PATCH", path, patch, content_type=MERGE_PATCH).status in (403, 422),
        "the admission policy refusing addresses",
        timeout_s=POLICY_TIMEOUT_S,
    )
    admin.delete(path)


def test_a_failed_prebind_and_a_deleted_pod_give_their_addresses_back_with_deployed_rbac(
    admin: ApiClient,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    workload: Workload,
    pools: list[str],
    tmp_path: Path,
) -> None:
    token = apply_deployed_rbac(control_plane)
    for path in (DEPLOY_DIR / "ip-allocation").glob("clusterrole*.yaml"):
        for manifest in read_manifests(path):
            assert apply(admin, manifest).status in (200, 201)
    kubeconfig = control_plane.make_user_kubeconfig(token, user=unique("deployed"))
    client = control_plane.token_client(token)
    poll_until(
        lambda: client.get(f"{POOLS}?limit=1").status == 200,
        "the overlay's rights taking effect",
        timeout_s=RBAC_PROPAGATION_S,
    )
    ours = unique("sched")
    network = unique("net")
    pool = _create_pool(admin, pools, "10.78.0.0/29", network=network)
    workload.create_nodes(2)
    refused = uuid.uuid4().hex[:8]
    policy, binding = _refuse_addresses(admin, refused)
    try:
        _wait_policy_enforced(admin, workload, refused)
        daemon = daemons.start(
            ours, kubeconfig=kubeconfig, extra_args=[f"--config={_config(tmp_path)}"]
        )
        plain = _create_pods(workload, ["a", "b"], ours, network)
        [doomed] = _create_pods(workload, ["doomed"], ours, network, **{REFUSE_LABEL: refused})
        poll_until(
            Consistent(admin, workload, pool, plain), "a and b placed", timeout_s=BIND_TIMEOUT_S
        )
        failures = workload.wait_events("IPAllocationFailed", [doomed], timeout_s=BIND_TIMEOUT_S)
        assert "this pod may not carry an address" in failures[doomed][0]["note"]
        # Between its retries the doomed pod holds nothing: the pool has a's and b's only.
        poll_until(
            Consistent(admin, workload, pool, plain),
            "the doomed pod's address given back",
            timeout_s=SETTLE_TIMEOUT_S,
        )
        assert not workload.placements([doomed]).get(doomed)
    finally:
        admin.delete(f"{VAP_BINDINGS}/{binding}")
        admin.delete(f"{VAP}/{policy}")

    everyone = [*plain, doomed]
    poll_until(
        Consistent(admin, workload, pool, everyone),
        "the doomed pod placed once the policy is gone",
        timeout_s=BIND_TIMEOUT_S,
    )
    # A deleted pod's address returns to the pool at the next reconcile.
    assert admin.delete(f"/api/v1/namespaces/{workload.namespace}/pods/a?gracePeriodSeconds=0")
    poll_until(
        Consistent(admin, workload, pool, ["b", doomed]),
        "a's address released after its deletion",
        timeout_s=SETTLE_TIMEOUT_S,
    )
    # Refused by RBAC, nothing (the admission policy's refusals say "forbidden" too, but not
    # which user lacks what).
    assert [r for r in daemon.log_records() if "forbidden: user" in str(r).lower()] == []

"""Fixtures for the end-to-end tests: one real control plane per test session.

Building the binaries needs Go (hack/build-e2e-binaries.sh). Without Go the e2e tests are
skipped with a loud reason on a developer machine, and fail when CI is set: a skipped e2e
suite must never pass as green in CI.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from collections.abc import Generator
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import connect
from scheduler.cluster.kube import default_user_agent
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import binaries_or_skip
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.workload import Workload


@pytest.fixture(scope="session")
def e2e_binaries() -> ControlPlaneBinaries:
    return binaries_or_skip()


@pytest.fixture(scope="session")
def control_plane(e2e_binaries: ControlPlaneBinaries) -> Iterator[ControlPlane]:
    """A running etcd + kube-apiserver shared by the whole session; torn down at the end."""
    plane = ControlPlane(e2e_binaries)
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def admin(control_plane: ControlPlane) -> ApiClient:
    return control_plane.admin_client()


@pytest.fixture
async def kube(control_plane: ControlPlane) -> AsyncIterator[KubeClusterClient]:
    """The scheduler's own client to the control plane, with no rate limit."""
    client = await connect(
        kubeconfig=str(control_plane.kubeconfig_path),
        master=None,
        qps=-1,
        burst=100,
        user_agent=default_user_agent(),
    )
    yield client
    await client.close()


@pytest.fixture
def namespace(admin: ApiClient) -> str:
    """A fresh namespace per test.

    It is never deleted: without kube-controller-manager a deleted namespace stays Terminating
    forever, and the whole etcd is thrown away after the session anyway.
    """
    name = f"e2e-{uuid.uuid4().hex[:10]}"
    created = admin.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert created.status == 201, created
    return name


@pytest.fixture
def workload(admin: ApiClient, namespace: str) -> Iterator[Workload]:
    """The test's nodes (deleted at the end) and pods (in its namespace)."""
    objects = Workload(admin, namespace)
    try:
        yield objects
    finally:
        objects.delete_nodes()


@pytest.fixture
def daemons(control_plane: ControlPlane, tmp_path: Path) -> Iterator[DaemonLauncher]:
    """Starts scheduler daemons with the admin kubeconfig; stops them all at the end."""
    launcher = DaemonLauncher(
        control_plane.kubeconfig_path,
        tmp_path / "daemons",
        client_cert=control_plane.admin_cert_paths,
    )
    try:
        yield launcher
    finally:
        launcher.stop_all()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attaches the tails of the etcd and kube-apiserver logs, and the logs of the scheduler
    daemons it started, to every failed e2e test."""
    report = yield
    funcargs = getattr(item, "funcargs", {})
    plane = funcargs.get("control_plane")
    if report.failed and isinstance(plane, ControlPlane):
        report.sections.append(("control plane logs", plane.logs_tail(80)))
    launcher = funcargs.get("daemons")
    if report.failed and isinstance(launcher, DaemonLauncher) and launcher.started:
        report.sections.append(("scheduler daemon logs", launcher.report()))
    return report

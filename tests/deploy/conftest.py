"""Fixtures: the manifests of deploy/, parsed once per session."""

from __future__ import annotations

import pytest

from tests.deploy.manifests import DEPLOY_DIR
from tests.deploy.manifests import MONITORING_DIR
from tests.deploy.manifests import Manifest
from tests.deploy.manifests import Manifests
from tests.deploy.manifests import read_objects


@pytest.fixture(scope="session")
def base() -> Manifests:
    return read_objects(DEPLOY_DIR)


@pytest.fixture(scope="session")
def monitoring() -> Manifests:
    return read_objects(MONITORING_DIR)


@pytest.fixture(scope="session")
def deployment(base: Manifests) -> Manifest:
    return base[("Deployment", "kube-pyscheduler")]


@pytest.fixture(scope="session")
def pod_spec(deployment: Manifest) -> Manifest:
    spec: Manifest = deployment["spec"]["template"]["spec"]
    return spec


@pytest.fixture(scope="session")
def container(pod_spec: Manifest) -> Manifest:
    containers = pod_spec["containers"]
    assert len(containers) == 1
    only: Manifest = containers[0]
    return only

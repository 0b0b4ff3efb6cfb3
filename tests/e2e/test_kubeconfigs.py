"""The kubeconfigs the harness writes work with the client library the scheduler uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio import config
from kubernetes_asyncio.client.exceptions import ApiException

from tests.e2e.controlplane import ControlPlane

pytestmark = pytest.mark.e2e


async def _core_api(kubeconfig: Path) -> Any:
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    return client.CoreV1Api(client.ApiClient(configuration))


async def test_admin_kubeconfig_lists_namespaces(control_plane: ControlPlane) -> None:
    core = await _core_api(control_plane.kubeconfig_path)
    try:
        namespaces = await core.list_namespace()
    finally:
        await core.api_client.close()

    assert "default" in {ns.metadata.name for ns in namespaces.items}


async def test_token_kubeconfig_authenticates_as_the_service_account(
    control_plane: ControlPlane, namespace: str
) -> None:
    token = control_plane.service_account_token(namespace, "kubeconfig-user")
    core = await _core_api(control_plane.make_user_kubeconfig(token))
    try:
        with pytest.raises(ApiException) as raised:
            await core.list_namespaced_pod(namespace)
    finally:
        await core.api_client.close()

    assert raised.value.status == 403
    assert f"system:serviceaccount:{namespace}:kubeconfig-user" in str(raised.value.body)

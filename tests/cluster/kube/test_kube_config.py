"""Where the client connects: kubeconfig (and context), --master, in-cluster, or nowhere."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest
import yaml

from scheduler.cluster.kube import connect
from scheduler.cluster.kube import default_user_agent
from scheduler.cluster.kube import load_configuration
from scheduler.cluster.kube.config import connect_daemon
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConfigError
from scheduler.testing import FakeClock

if TYPE_CHECKING:
    from tests.cluster.kube.conftest import FakeApiServer


def kubeconfig(path: Path, clusters: dict[str, str], current: str) -> str:
    """A kubeconfig with one context, user and token per cluster name -> server URL."""
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [
            {"name": name, "cluster": {"server": server, "insecure-skip-tls-verify": True}}
            for name, server in clusters.items()
        ],
        "users": [{"name": name, "user": {"token": f"token-{name}"}} for name in clusters],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name}} for name in clusters
        ],
    }
    path.write_text(yaml.safe_dump(document))
    return str(path)


async def test_kubeconfig_current_context(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config", {"one": "https://10.0.0.1:6443", "two": "https://10.0.0.2:6443"}, "one"
    )
    configuration = await load_configuration(kubeconfig=path, master=None, environ={})
    assert configuration.host == "https://10.0.0.1:6443"
    assert configuration.api_key["BearerToken"] == "Bearer token-one"


async def test_kubeconfig_named_context(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config", {"one": "https://10.0.0.1:6443", "two": "https://10.0.0.2:6443"}, "one"
    )
    configuration = await load_configuration(
        kubeconfig=path, master=None, context="two", environ={}
    )
    assert configuration.host == "https://10.0.0.2:6443"
    assert configuration.api_key["BearerToken"] == "Bearer token-two"


async def test_master_overrides_the_kubeconfig_server(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"one": "https://10.0.0.1:6443"}, "one")
    configuration = await load_configuration(
        kubeconfig=path, master="https://override:8443/", environ={}
    )
    assert configuration.host == "https://override:8443"
    assert configuration.api_key["BearerToken"] == "Bearer token-one"


async def test_master_alone(tmp_path: Path) -> None:
    configuration = await load_configuration(
        kubeconfig=None, master="http://127.0.0.1:8080", environ={}
    )
    assert configuration.host == "http://127.0.0.1:8080"
    assert "BearerToken" not in configuration.api_key


async def test_in_cluster_service_account(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    environ = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    configuration = await load_configuration(
        kubeconfig=None, master=None, environ=environ, service_account_dir=tmp_path
    )
    assert configuration.host == "https://10.96.0.1:443"
    assert configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert await configuration.get_api_key_with_prefix("BearerToken") == "Bearer sa-token"


async def test_in_cluster_without_a_service_account_is_a_config_error(tmp_path: Path) -> None:
    environ = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="in-cluster configuration"):
        await load_configuration(
            kubeconfig=None, master=None, environ=environ, service_account_dir=tmp_path
        )


async def test_nothing_to_connect_to_names_the_flags_the_command_has() -> None:
    with pytest.raises(ConfigError, match="--kubeconfig") as daemon:
        await load_configuration(kubeconfig=None, master=None, environ={})
    assert "or --master," in str(daemon.value)
    with pytest.raises(ConfigError, match="--kubeconfig") as no_master:
        await load_configuration(kubeconfig=None, master=None, environ={}, master_flag="")
    assert "--master" not in str(no_master.value)


@pytest.mark.parametrize(
    ("problem", "says"),
    [
        ("missing-file", "no such file"),
        ("directory", "is a directory, not a kubeconfig file"),
        ("empty", "is empty"),
        ("not-a-mapping", "is not a kubeconfig (expected a YAML mapping)"),
        ("not-yaml", "not valid YAML at line 1, column 20"),
        ("no-current-context", "sets no current-context"),
        ("unknown-context", 'context "nope" is not in the file\'s contexts'),
        ("dangling-cluster", 'cluster "gone" is not in the file\'s clusters'),
        ("no-server", 'cluster "one" has no server'),
    ],
)
async def test_a_bad_kubeconfig_names_the_flag_the_file_and_the_problem(
    tmp_path: Path, problem: str, says: str
) -> None:
    path = tmp_path / "config"
    context = None
    if problem == "directory":
        path.mkdir()
    elif problem == "empty":
        path.write_text("")
    elif problem == "not-a-mapping":
        path.write_text("- a\n- b\n")
    elif problem == "not-yaml":
        path.write_text("clusters: [unclosed")
    elif problem != "missing-file":
        kubeconfig(path, {"one": "https://10.0.0.1:6443"}, "one")
        config = yaml.safe_load(path.read_text())
        if problem == "no-current-context":
            del config["current-context"]
        elif problem == "unknown-context":
            context = "nope"
        elif problem == "dangling-cluster":
            config["contexts"][0]["context"]["cluster"] = "gone"
        elif problem == "no-server":
            del config["clusters"][0]["cluster"]["server"]
        path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as raised:
        await load_configuration(kubeconfig=str(path), master=None, context=context, environ={})
    assert str(raised.value).startswith(f"--kubeconfig: {path}: {says}")


def test_default_user_agent_names_the_program_and_version() -> None:
    assert re.fullmatch(r"kube-pyscheduler/\d+\.\d+\.\d+\S*", default_user_agent())


async def test_connect_talks_to_the_kubeconfig_server(
    api: FakeApiServer, tmp_path: Path, clock: FakeClock
) -> None:
    path = kubeconfig(tmp_path / "config", {"local": api.url}, "local")
    api.reply("GET", "/api/v1/namespaces/default", body={"kind": "Namespace"})
    client = await connect(
        kubeconfig=path, master=None, qps=50, burst=100, user_agent="ua/1", clock=clock
    )
    try:
        assert await client.get("namespaces", "", "default") == {"kind": "Namespace"}
    finally:
        await client.close()
    headers = api.only().headers
    assert headers["authorization"] == "Bearer token-local"
    assert headers["User-Agent"] == "ua/1"


async def test_the_daemons_lease_requests_give_up_after_their_own_timeout(
    api: FakeApiServer, tmp_path: Path
) -> None:
    """A Lease read the API server never finishes fails after the leader-election timeout
    (client-go's half of the renew deadline), not after the scheduling client's minute."""
    path = kubeconfig(tmp_path / "config", {"local": api.url}, "local")
    lease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
    api.stream(lease, b"{", hold=True)
    clients = await connect_daemon(
        kubeconfig=path,
        master=None,
        qps=50,
        burst=100,
        user_agent="ua/1",
        lease_request_timeout=0.2,
    )
    try:
        with pytest.raises(APIError):
            await clients.leader_election.get("leases", "kube-system", "kube-scheduler")
    finally:
        api.release_streams()
        await clients.close()

"""Calls to an extender over real sockets, and the errors reported in Go's words."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from yarl import URL

from scheduler.config import Extender
from scheduler.framework.errors import ConfigError
from scheduler.runtime.extenders import ExtenderCallError
from scheduler.runtime.extenders.proxy import env_proxy
from scheduler.runtime.extenders.transport import ExtenderTransport
from tests.e2e.processes import free_loopback_port
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import running_extender


def _config(url: str, **fields: object) -> Extender:
    return Extender.model_validate({"urlPrefix": url, **fields})


async def test_a_verb_is_posted_under_the_url_prefix() -> None:
    with running_extender(ExtenderBehaviour()) as extender:
        transport = ExtenderTransport(_config(extender.url + "/"))
        try:
            answer = await transport.post("bind", {"PodName": "p"})
            with pytest.raises(ExtenderCallError) as refused:
                await transport.post("nothing-here", {})
        finally:
            await transport.close()
    assert answer == {"Error": "no binder"}
    assert extender.verbs() == ["bind", "nothing-here"]
    assert str(refused.value) == (
        f"failed nothing-here with extender at URL {extender.url}/nothing-here, code 404"
    )


async def test_calls_go_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The extender's host does not resolve: only the proxy (here the recording server, which
    answers for it) can carry the call."""
    with running_extender(ExtenderBehaviour()) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        transport = ExtenderTransport(_config("http://extender.invalid"))
        try:
            answer = await transport.post("bind", {"PodName": "p"})
        finally:
            await transport.close()
    assert answer == {"Error": "no binder"}
    assert proxy.verbs() == ["bind"]


@pytest.mark.parametrize(
    ("url", "no_proxy"),
    [
        ("http://localhost:8888", ""),
        ("http://127.0.0.1:8888", ""),
        ("http://[::1]:8888", ""),
        ("http://10.1.2.3:8888", "example.com, 10.0.0.0/8"),
        ("http://extender.example.com:8888", ".example.com"),
    ],
)
def test_loopback_hosts_and_those_no_proxy_covers_are_called_directly(
    monkeypatch: pytest.MonkeyPatch, url: str, no_proxy: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    assert env_proxy(url) == {}
    assert env_proxy("http://192.0.2.1:8888")["proxy"] == URL("http://proxy.invalid:3128")


async def test_a_refused_connection_reads_as_go_s_dial_error() -> None:
    port = free_loopback_port()
    transport = ExtenderTransport(_config(f"http://127.0.0.1:{port}"))
    with pytest.raises(ExtenderCallError) as failed:
        await transport.post("filter", {})
    await transport.close()
    assert str(failed.value) == (
        f'Post "http://127.0.0.1:{port}/filter": dial tcp 127.0.0.1:{port}: connect: '
        "connection refused"
    )


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections (into its backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()


async def test_an_extender_that_does_not_answer_in_http_timeout_fails(silent_server: int) -> None:
    url = f"http://127.0.0.1:{silent_server}"
    transport = ExtenderTransport(_config(url, httpTimeout="200ms"))
    with pytest.raises(ExtenderCallError) as failed:
        await transport.post("filter", {})
    await transport.close()
    assert str(failed.value) == (
        f'Post "{url}/filter": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    )


def test_an_insecure_tls_config_with_a_ca_is_refused_naming_the_extender() -> None:
    config = _config("https://x", tlsConfig={"insecure": True, "caData": "AAAA"})
    with pytest.raises(ConfigError, match=r"^extenders\[2\]\.tlsConfig: specifying a root"):
        ExtenderTransport(config, path="extenders[2]")


def test_a_client_certificate_needs_its_key() -> None:
    config = _config("https://x", tlsConfig={"certFile": "/tmp/cert.pem"})
    with pytest.raises(ConfigError, match="must be given together"):
        ExtenderTransport(config)

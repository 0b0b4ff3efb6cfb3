"""`/statusz` and `/flagz` over real HTTPS: the text and JSON forms, the choice between them by
Accept, and the gates that turn them off."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime

import aiohttp
import pytest
import yaml

from scheduler.app.http_server import HealthServer
from scheduler.app.zpages import ZPages
from scheduler.observability import SchedulerMetrics
from scheduler.testing import FakeClock
from tests.app.test_http_server import trusting

STATUSZ_JSON = "application/json;as=Statusz;v=v1beta1;g=config.k8s.io"
FLAGZ_JSON = "application/json;as=Flagz;v=v1beta1;g=config.k8s.io"
FLAGS = {"kubeconfig": "/etc/kubernetes/scheduler.conf", "leader-elect": "true", "v": "2"}
# "Name: value", "Name= value" or "Name  value".
FIELD = re.compile(r"^(?P<name>[A-Z][a-z]+(?: [a-z]+)?)(?:: |= |  )(?P<value>.+)$")


class Server:
    def __init__(self, clock: FakeClock, client: aiohttp.ClientSession, base: str) -> None:
        self.clock, self.client, self.base = clock, client, base

    async def get(
        self, path: str, accept: str | None = None, *, method: str = "GET"
    ) -> tuple[int, str, str]:
        headers = {"Accept": accept} if accept is not None else {}
        async with self.client.request(method, self.base + path, headers=headers) as answer:
            return answer.status, await answer.text(), answer.headers.get("Content-Type", "")


async def _serve(flags: Mapping[str, str] | None, statusz: bool) -> tuple[HealthServer, Server]:
    clock = FakeClock(wall_start=datetime(2026, 12, 6, 7, 5, 9, tzinfo=UTC))
    pages = ZPages(
        clock, binary_version="0.4.0", emulation_version="1.36", flags=flags, statusz=statusz
    )
    server = HealthServer(
        SchedulerMetrics(), healthz={}, readiness={}, configz=dict, clock=clock, zpages=pages
    )
    port = await server.start("127.0.0.1", 0)
    assert server.self_signed_ca_pem is not None
    connector = aiohttp.TCPConnector(ssl=trusting(server.self_signed_ca_pem))
    return server, Server(
        clock, aiohttp.ClientSession(connector=connector), f"https://127.0.0.1:{port}"
    )


@pytest.fixture
async def served() -> AsyncIterator[Server]:
    server, client = await _serve(FLAGS, statusz=True)
    async with client.client:
        yield client
    await server.stop()


def _fields(text: str) -> dict[str, str]:
    lines = text.splitlines()
    return {m["name"]: m["value"] for m in map(FIELD.match, lines[4:]) if m}


async def test_statusz_text_tells_start_uptime_versions_and_paths(served: Server) -> None:
    served.clock.advance(3725)
    status, text, content_type = await served.get("/statusz")
    assert (status, content_type) == (200, "text/plain; charset=utf-8")
    lines = text.splitlines()
    assert lines[:2] == ["", "kube-pyscheduler statusz"]
    assert lines[2].startswith("Warning: This endpoint is not meant to be machine parseable")
    fields = _fields(text)
    assert fields["Started"] == "Sun Dec  6 07:05:09 UTC 2026"
    assert fields["Up"] == "1 hr 02 min 05 sec"
    assert fields["Binary version"] == "0.4.0"
    assert fields["Emulation version"] == "1.36"
    assert fields["Paths"] == "/configz /flagz /healthz /livez /metrics /readyz"
    assert re.fullmatch(r"3\.\d+\.\d+", fields["Python version"])


async def test_statusz_json_is_the_config_k8s_io_object(served: Server) -> None:
    served.clock.advance(42)
    for version in ("v1beta1", "v1alpha1"):
        accept = f"application/json;as=Statusz;v={version};g=config.k8s.io"
        status, body, content_type = await served.get("/statusz", accept)
        assert status == 200
        assert content_type == f"application/json;g=config.k8s.io;v={version};as=Statusz"
        assert json.loads(body) == {
            "kind": "Statusz",
            "apiVersion": f"config.k8s.io/{version}",
            "metadata": {"name": "kube-pyscheduler"},
            "startTime": "2026-12-06T07:05:09Z",
            "uptimeSeconds": 42,
            "binaryVersion": "0.4.0",
            "emulationVersion": "1.36",
            "paths": ["/configz", "/flagz", "/healthz", "/livez", "/metrics", "/readyz"],
        }


async def test_flagz_lists_every_flag_in_both_forms(served: Server) -> None:
    status, text, _ = await served.get("/flagz", "text/plain")
    assert status == 200
    lines = text.splitlines()
    assert lines[1] == "kube-pyscheduler flagz"
    assert [re.split(r": |= |  ", line, maxsplit=1) for line in lines[3:]] == [
        [name, value] for name, value in FLAGS.items()
    ]
    status, body, _ = await served.get("/flagz", FLAGZ_JSON)
    assert status == 200
    assert json.loads(body)["flags"] == FLAGS


@pytest.mark.parametrize(
    ("accept", "form"),
    [
        ("*/*", "text"),
        ("text/plain;q=0.1, " + STATUSZ_JSON, "json"),
        (STATUSZ_JSON + ";q=0.2, text/plain;q=0.9", "text"),
        (FLAGZ_JSON + ", */*;q=0.5", "text"),
        ("application/json;as=Statusz;v=v2;g=config.k8s.io, " + STATUSZ_JSON, "json"),
    ],
)
async def test_the_form_follows_the_best_acceptable_offer(
    served: Server, accept: str, form: str
) -> None:
    status, _, content_type = await served.get("/statusz", accept)
    assert status == 200
    assert content_type.startswith("application/json" if form == "json" else "text/plain")


@pytest.mark.parametrize(
    "accept",
    ["application/json", "text/html", FLAGZ_JSON],
)
async def test_other_media_types_get_a_406_status(served: Server, accept: str) -> None:
    status, body, content_type = await served.get("/statusz", accept)
    assert (status, content_type) == (406, "application/json")
    answer = json.loads(body)
    assert (answer["kind"], answer["reason"], answer["code"]) == ("Status", "NotAcceptable", 406)
    assert answer["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "text/plain"
    )


async def test_a_yaml_client_gets_the_406_in_yaml(served: Server) -> None:
    status, body, content_type = await served.get("/flagz", "application/yaml")
    assert (status, content_type) == (406, "application/yaml")
    assert yaml.safe_load(body)["reason"] == "NotAcceptable"


async def test_the_gates_turn_each_page_off() -> None:
    server, client = await _serve(None, statusz=False)
    async with client.client:
        assert (await client.get("/statusz"))[0] == 404
        assert (await client.get("/flagz"))[0] == 404
    await server.stop()
    server, client = await _serve(None, statusz=True)
    async with client.client:
        status, text, _ = await client.get("/statusz")
    await server.stop()
    assert status == 200
    # A page that is off is not listed.
    assert _fields(text)["Paths"] == "/configz /healthz /livez /metrics /readyz"


@pytest.mark.parametrize("method", ["POST", "DELETE"])
@pytest.mark.parametrize("path", ["/statusz", "/flagz"])
async def test_the_pages_answer_any_method_as_upstreams(
    served: Server, path: str, method: str
) -> None:
    status, text, content_type = await served.get(path, method=method)
    assert (status, content_type) == (200, "text/plain; charset=utf-8")
    assert "statusz" in text or "flagz" in text

"""The guarded secure port over real HTTPS: status codes and bodies as kube-scheduler's."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from scheduler.app.access.authn import RequestAuthenticator
from scheduler.app.access.authn import TokenReviewAuthenticator
from scheduler.app.access.authz import AlwaysAllowPaths
from scheduler.app.access.authz import PrivilegedGroups
from scheduler.app.access.authz import RequestAuthorizer
from scheduler.app.access.authz import SubjectAccessReviewAuthorizer
from scheduler.app.access.delegation import build_access
from scheduler.app.access.guard import AccessGuard
from scheduler.app.http_server import HealthServer
from scheduler.app.secure_port_options import SecurePortOptions
from scheduler.observability import SchedulerMetrics
from tests.app.access.fakes import ReviewServer
from tests.app.access.fakes import SleeplessClock
from tests.e2e.certs import CertificateAuthority
from tests.e2e.certs import KeyPair


@dataclass(frozen=True)
class Reply:
    status: int
    text: str
    headers: dict[str, str]


@dataclass
class Port:
    url: str
    ca_pem: bytes

    async def get(
        self, path: str, *, token: str = "", cert: KeyPair | None = None, tmp: Path | None = None
    ) -> tuple[int, Any]:
        """The status and body, JSON bodies parsed."""
        reply = await self.request("GET", path, token=token, cert=cert, tmp=tmp)
        if reply.headers.get("Content-Type", "").startswith("application/json"):
            return reply.status, json.loads(reply.text)
        return reply.status, reply.text

    async def request(
        self,
        method: str,
        path: str,
        *,
        token: str = "",
        cert: KeyPair | None = None,
        tmp: Path | None = None,
    ) -> Reply:
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        if cert is not None and tmp is not None:
            cert.write(tmp / "c.crt", tmp / "c.key")
            context.load_cert_chain(tmp / "c.crt", tmp / "c.key")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connector = aiohttp.TCPConnector(ssl=context)
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.request(method, self.url + path, headers=headers) as response,
        ):
            return Reply(response.status, await response.text(), dict(response.headers))


async def serve(server: HealthServer) -> AsyncIterator[Port]:
    port = await server.start("127.0.0.1", 0)
    assert server.self_signed_ca_pem is not None
    yield Port(f"https://127.0.0.1:{port}", server.self_signed_ca_pem)
    await server.stop()


def forbidden(user: str, path: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'forbidden: User "{user}" cannot get path "{path}"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }


@pytest.fixture
def client_ca() -> CertificateAuthority:
    return CertificateAuthority.create("client-ca")


@pytest.fixture
async def without_reviews(client_ca: CertificateAuthority, tmp_path: Path) -> AsyncIterator[Port]:
    """No kubeconfig and no cluster around: client certificates and anonymous only."""
    ca_file = tmp_path / "client-ca.crt"
    ca_file.write_bytes(client_ca.cert_pem)
    access = await build_access(
        SecurePortOptions(client_ca_file=str(ca_file)),
        clock=SleeplessClock(),
        user_agent="test",
        environ={},
    )
    assert access.clients == []
    server = HealthServer(
        SchedulerMetrics(),
        healthz={},
        readiness={},
        configz=dict,
        guard=access.guard,
        client_ca_pem=access.client_ca_pem,
    )
    async for port in serve(server):
        yield port


async def test_anonymous_callers_get_health_and_nothing_else(without_reviews: Port) -> None:
    assert await without_reviews.get("/healthz") == (200, "ok")
    assert await without_reviews.get("/livez") == (200, "ok")
    assert await without_reviews.get("/metrics") == (
        403,
        forbidden("system:anonymous", "/metrics"),
    )
    assert await without_reviews.get("/configz") == (
        403,
        forbidden("system:anonymous", "/configz"),
    )
    assert await without_reviews.get("/readyz/shutdown") == (
        403,
        forbidden("system:anonymous", "/readyz/shutdown"),
    )
    # Without a TokenReview client a token proves nothing and is not looked at.
    status, _ = await without_reviews.get("/metrics", token="anything")
    assert status == 403


async def test_a_client_certificate_of_the_client_ca_is_its_user(
    without_reviews: Port, client_ca: CertificateAuthority, tmp_path: Path
) -> None:
    masters = client_ca.issue_client("admin", ["system:masters"])
    nobody = client_ca.issue_client("nobody", [])

    status, body = await without_reviews.get("/metrics", cert=masters, tmp=tmp_path)
    assert status == 200 and "scheduler_" in body
    assert await without_reviews.get("/configz", cert=masters, tmp=tmp_path) == (
        200,
        {"componentconfig": {}},
    )
    assert await without_reviews.get("/metrics", cert=nobody, tmp=tmp_path) == (
        403,
        forbidden("nobody", "/metrics"),
    )


async def test_a_certificate_from_an_untrusted_ca_fails_the_handshake(
    without_reviews: Port, tmp_path: Path
) -> None:
    stranger = CertificateAuthority.create("stranger").issue_client("admin", ["system:masters"])
    with pytest.raises(aiohttp.ClientError):
        await without_reviews.get("/metrics", cert=stranger, tmp=tmp_path)


@pytest.fixture
async def with_reviews() -> AsyncIterator[Port]:
    clock = SleeplessClock()

    def token_review(spec: Mapping[str, Any]) -> dict[str, Any]:
        users = {"reader-token": "reader", "other-token": "other"}
        name = users.get(spec["token"])
        return {"authenticated": True, "user": {"username": name}} if name else {}

    def access_review(spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"allowed": spec["user"] == "reader"}

    tokens = ReviewServer(token_review)
    reviews = ReviewServer(access_review)
    guard = AccessGuard(
        RequestAuthenticator([TokenReviewAuthenticator(tokens, clock, cache_ttl=10.0)]),
        RequestAuthorizer(
            [
                PrivilegedGroups(),
                AlwaysAllowPaths(["/healthz"]),
                SubjectAccessReviewAuthorizer(reviews, clock),
            ]
        ),
    )
    server = HealthServer(SchedulerMetrics(), healthz={}, readiness={}, configz=dict, guard=guard)
    async for port in serve(server):
        yield port


async def test_tokens_are_reviewed_then_authorized(with_reviews: Port) -> None:
    status, _ = await with_reviews.get("/metrics", token="reader-token")
    assert status == 200
    assert await with_reviews.get("/metrics", token="other-token") == (
        403,
        forbidden("other", "/metrics"),
    )
    assert await with_reviews.get("/metrics", token="not-a-token") == (
        401,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        },
    )
    # A bad token is refused even where anonymous callers are welcome.
    status, _ = await with_reviews.get("/healthz", token="not-a-token")
    assert status == 401
    assert await with_reviews.get("/healthz") == (200, "ok")


async def test_a_review_that_cannot_be_made_answers_500_as_upstreams_internal_error() -> None:
    clock = SleeplessClock()
    failing = ReviewServer(lambda spec: {"allowed": True}, failures=5)
    guard = AccessGuard(
        RequestAuthenticator([]), RequestAuthorizer([SubjectAccessReviewAuthorizer(failing, clock)])
    )
    server = HealthServer(SchedulerMetrics(), healthz={}, readiness={}, configz=dict, guard=guard)
    async for port in serve(server):
        reply = await port.request("GET", "/metrics?x=1&y=%3Ca%3E")
    # The request URI as sent, Go-quoted, then HTML-escaped by responsewriters' sanitizer.
    assert (reply.status, reply.text) == (
        500,
        'Internal Server Error: "/metrics?x=1&amp;y=%3Ca%3E": '
        "SubjectAccessReview: 500: etcdserver: request timed out\n",
    )
    assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["Cache-Control"] == "no-cache, private"


async def test_refusals_are_written_as_upstreams_filters_write_them(with_reviews: Port) -> None:
    unauthorized = await with_reviews.request("GET", "/metrics", token="not-a-token")
    forbidden_ = await with_reviews.request("GET", "/metrics", token="other-token")

    # Compact JSON ended by a newline, typed without a charset, never cached.
    assert unauthorized.text == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"Unauthorized","reason":"Unauthorized","code":401}\n'
    )
    assert forbidden_.text == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"forbidden: User \\"other\\" cannot get path \\"/metrics\\"",'
        '"reason":"Forbidden","details":{},"code":403}\n'
    )
    for reply in (unauthorized, forbidden_):
        assert reply.headers["Content-Type"] == "application/json"
        assert reply.headers["Cache-Control"] == "no-cache, private"
    # responsewriters.Forbidden marks its answer nosniff; the 401 is written without.
    assert forbidden_.headers["X-Content-Type-Options"] == "nosniff"
    assert "X-Content-Type-Options" not in unauthorized.headers


async def test_the_verb_is_the_lower_case_method_whatever_the_method(with_reviews: Port) -> None:
    reply = await with_reviews.request("POST", "/metrics", token="reader-token")
    assert reply.status == 200 and "scheduler_" in reply.text
    refused = await with_reviews.request("PATCH", "/metrics", token="other-token")
    assert json.loads(refused.text)["message"] == (
        'forbidden: User "other" cannot patch path "/metrics"'
    )


async def test_each_caller_is_counted_as_upstream_counts_them(tmp_path: Path) -> None:
    clock = SleeplessClock()
    tokens = ReviewServer(
        lambda spec: (
            {"authenticated": True, "user": {"username": "admin"}}
            if spec["token"] == "admin-token"
            else {}
        )
    )
    guard = AccessGuard(
        RequestAuthenticator([TokenReviewAuthenticator(tokens, clock, cache_ttl=10.0)]),
        RequestAuthorizer([AlwaysAllowPaths(["/healthz"])]),
    )
    metrics = SchedulerMetrics()
    server = HealthServer(metrics, healthz={}, readiness={}, configz=dict, guard=guard)
    async for port in serve(server):
        await port.get("/healthz")  # anonymous, allowed
        await port.get("/metrics", token="admin-token")  # admin, no opinion
        await port.get("/metrics", token="bad")  # refused

    samples = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.render().decode().splitlines()
        if line.startswith(("authentication_attempts", "authorization_attempts", "authenticated_"))
    }
    assert samples == {
        'authentication_attempts_total{result="success"}': 2.0,
        'authentication_attempts_total{result="error"}': 1.0,
        'authenticated_user_requests_total{username="other"}': 1.0,
        'authenticated_user_requests_total{username="admin"}': 1.0,
        'authorization_attempts_total{result="allowed"}': 1.0,
        'authorization_attempts_total{result="no-opinion"}': 1.0,
    }

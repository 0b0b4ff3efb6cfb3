"""Who a request is: front proxy, client certificate, TokenReview, anonymous."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from cryptography import x509

from scheduler.app.access.authn import AuthenticationFailedError
from scheduler.app.access.authn import ClientCertAuthenticator
from scheduler.app.access.authn import Credentials
from scheduler.app.access.authn import FrontProxyAuthenticator
from scheduler.app.access.authn import RequestAuthenticator
from scheduler.app.access.authn import TokenReviewAuthenticator
from scheduler.app.access.authn import bearer_token
from scheduler.app.access.client_ca import CABundle
from scheduler.app.access.user import ANONYMOUS
from scheduler.app.access.user import CREDENTIAL_ID_KEY
from scheduler.app.access.user import UserInfo
from tests.app.access.fakes import ReviewServer
from tests.app.access.fakes import SleeplessClock
from tests.e2e.certs import CertificateAuthority


def request(
    headers: Mapping[str, str | tuple[str, ...]] | None = None,
    cert: bytes | None = None,
) -> Credentials:
    values = {k.lower(): (v,) if isinstance(v, str) else v for k, v in (headers or {}).items()}
    leaf = x509.load_pem_x509_certificate(cert) if cert is not None else None
    return Credentials(headers=values, peer_certificate=leaf)


def tokens(valid: Mapping[str, dict[str, Any]]) -> ReviewServer:
    def answer(spec: Mapping[str, Any]) -> dict[str, Any]:
        user = valid.get(spec["token"])
        return {"authenticated": True, "user": user} if user else {"authenticated": False}

    return ReviewServer(answer)


def bundle(ca: CertificateAuthority) -> CABundle:
    return CABundle.from_pem(ca.cert_pem, source="test")


ALICE = {"username": "alice", "uid": "u-1", "groups": ["team"], "extra": {"scopes": ["a"]}}


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("  Bearer abc  ", "abc"),
        ("Bearer abc extra", "abc"),
        ("Bearer", ""),
        ("Bearer  abc", ""),
        ("Basic abc", ""),
        ("", ""),
    ],
)
def test_bearer_token_is_read_as_the_api_server_reads_it(header: str, token: str) -> None:
    assert bearer_token(header) == token


async def test_a_reviewed_token_is_its_user_and_the_answer_is_cached_for_the_ttl() -> None:
    clock = SleeplessClock()
    server = tokens({"good": ALICE})
    chain = RequestAuthenticator([TokenReviewAuthenticator(server, clock, cache_ttl=10.0)])

    user = await chain.authenticate(request({"Authorization": "Bearer good"}))
    await chain.authenticate(request({"Authorization": "Bearer good"}))

    assert user == UserInfo("alice", "u-1", ("team", "system:authenticated"), {"scopes": ("a",)})
    assert server.calls == [
        (
            "tokenreviews",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": "good"},
            },
        )
    ]
    clock.advance(10.0)
    await chain.authenticate(request({"Authorization": "Bearer good"}))
    assert len(server.calls) == 2


async def test_a_rejected_token_is_unauthorized_not_anonymous_and_is_cached_too() -> None:
    clock = SleeplessClock()
    server = tokens({})
    chain = RequestAuthenticator([TokenReviewAuthenticator(server, clock, cache_ttl=10.0)])

    for _ in range(2):
        with pytest.raises(AuthenticationFailedError, match="invalid bearer token"):
            await chain.authenticate(request({"Authorization": "Bearer not-a-token"}))
    assert len(server.calls) == 1


async def test_a_review_that_fails_is_retried_with_backoff_and_never_cached() -> None:
    clock = SleeplessClock()
    server = tokens({"good": ALICE})
    server.failures = 5
    authenticator = TokenReviewAuthenticator(server, clock, cache_ttl=10.0)

    with pytest.raises(AuthenticationFailedError, match="TokenReview: 500"):
        await authenticator.authenticate(request({"Authorization": "Bearer good"}))
    assert clock.sleeps == [0.5, 0.75, 1.125, 1.6875]
    assert len(server.calls) == 5
    user = await authenticator.authenticate(request({"Authorization": "Bearer good"}))
    assert user is not None and user.name == "alice"


async def test_a_client_error_from_the_review_is_not_retried() -> None:
    clock = SleeplessClock()
    server = tokens({})
    server.failures, server.failure_status = 1, 403
    authenticator = TokenReviewAuthenticator(server, clock, cache_ttl=10.0)

    with pytest.raises(AuthenticationFailedError, match="403"):
        await authenticator.authenticate(request({"Authorization": "Bearer x"}))
    assert (len(server.calls), clock.sleeps) == (1, [])


async def test_the_review_error_text_is_the_failure_and_is_not_cached() -> None:
    clock = SleeplessClock()
    server = ReviewServer(lambda spec: {"authenticated": False, "error": "token expired"})
    authenticator = TokenReviewAuthenticator(server, clock, cache_ttl=10.0)
    for _ in range(2):
        with pytest.raises(AuthenticationFailedError, match="token expired"):
            await authenticator.authenticate(request({"Authorization": "Bearer x"}))
    assert len(server.calls) == 2


async def test_no_credentials_is_anonymous() -> None:
    clock = SleeplessClock()
    chain = RequestAuthenticator([TokenReviewAuthenticator(tokens({}), clock, cache_ttl=10.0)])
    assert await chain.authenticate(request()) == ANONYMOUS
    assert await RequestAuthenticator([]).authenticate(request()) == ANONYMOUS


async def test_a_client_certificate_is_its_common_name_and_organizations() -> None:
    ca = CertificateAuthority.create()
    pair = ca.issue_client("carol", ["ops", "dev"])
    authenticator = ClientCertAuthenticator(bundle(ca), SleeplessClock())

    user = await RequestAuthenticator([authenticator]).authenticate(request(cert=pair.cert_pem))

    assert user.name == "carol"
    assert user.groups == ("ops", "dev", "system:authenticated")
    assert user.extra[CREDENTIAL_ID_KEY][0].startswith("X509SHA256=")


async def test_a_certificate_from_another_ca_falls_through_to_a_token() -> None:
    clock = SleeplessClock()
    stranger = CertificateAuthority.create("stranger").issue_client("mallory", [])
    chain = RequestAuthenticator(
        [
            ClientCertAuthenticator(bundle(CertificateAuthority.create()), clock),
            TokenReviewAuthenticator(tokens({"good": ALICE}), clock, cache_ttl=10.0),
        ]
    )
    with pytest.raises(AuthenticationFailedError, match="unknown authority"):
        await chain.authenticate(request(cert=stranger.cert_pem))
    user = await chain.authenticate(
        request({"Authorization": "Bearer good"}, cert=stranger.cert_pem)
    )
    assert user.name == "alice"


async def test_a_front_proxy_vouches_for_the_user_in_its_headers() -> None:
    proxy_ca = CertificateAuthority.create("front-proxy-ca")
    proxy = proxy_ca.issue_client("front-proxy-client", [])
    authenticator = FrontProxyAuthenticator(
        bundle(proxy_ca), SleeplessClock(), allowed_names=["front-proxy-client"]
    )
    headers: dict[str, str | tuple[str, ...]] = {
        "X-Remote-User": "dave",
        "X-Remote-Group": ("g1", "g2"),
        "X-Remote-Extra-Acme.com%2Fproject": "p1",
    }

    user = await authenticator.authenticate(request(headers, cert=proxy.cert_pem))

    assert user == UserInfo("dave", "", ("g1", "g2"), {"acme.com/project": ("p1",)})
    # Without a user header the proxy asserts nobody; the next authenticator may try.
    assert await authenticator.authenticate(request({}, cert=proxy.cert_pem)) is None


async def test_a_front_proxy_outside_the_allowed_names_is_refused() -> None:
    proxy_ca = CertificateAuthority.create("front-proxy-ca")
    other = proxy_ca.issue_client("someone-else", [])
    authenticator = FrontProxyAuthenticator(
        bundle(proxy_ca), SleeplessClock(), allowed_names=["front-proxy-client"]
    )
    with pytest.raises(AuthenticationFailedError, match="cn=someone-else is not in the allowed"):
        await authenticator.authenticate(request({"X-Remote-User": "dave"}, cert=other.cert_pem))


async def test_the_client_ca_does_not_make_a_front_proxy() -> None:
    client_ca = CertificateAuthority.create("client-ca")
    proxy_ca = CertificateAuthority.create("front-proxy-ca")
    clock = SleeplessClock()
    chain = RequestAuthenticator(
        [
            FrontProxyAuthenticator(bundle(proxy_ca), clock),
            ClientCertAuthenticator(bundle(client_ca), clock),
        ]
    )
    pair = client_ca.issue_client("erin", [])

    user = await chain.authenticate(request({"X-Remote-User": "root"}, cert=pair.cert_pem))

    assert user.name == "erin"

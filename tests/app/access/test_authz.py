"""May the request proceed: privileged groups, always-allowed paths, SubjectAccessReview."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.app.access.authz import AlwaysAllowPaths
from scheduler.app.access.authz import Attributes
from scheduler.app.access.authz import AuthorizationError
from scheduler.app.access.authz import Decision
from scheduler.app.access.authz import PrivilegedGroups
from scheduler.app.access.authz import RequestAuthorizer
from scheduler.app.access.authz import SubjectAccessReviewAuthorizer
from scheduler.app.access.user import ANONYMOUS
from scheduler.app.access.user import UserInfo
from scheduler.framework.errors import ConfigError
from tests.app.access.fakes import ReviewServer
from tests.app.access.fakes import SleeplessClock

READER = UserInfo("reader", "u-9", ("readers", "system:authenticated"), {"k": ("v",)})


def readers_may_get_metrics(spec: Mapping[str, Any]) -> dict[str, Any]:
    allowed = "readers" in spec.get("groups", ()) and spec["nonResourceAttributes"] == {
        "path": "/metrics",
        "verb": "get",
    }
    return {"allowed": True} if allowed else {"allowed": False, "reason": "no RBAC policy matched"}


def chain(server: ReviewServer, clock: SleeplessClock) -> RequestAuthorizer:
    return RequestAuthorizer(
        [
            PrivilegedGroups(),
            AlwaysAllowPaths(["/healthz", "/readyz", "/livez"]),
            SubjectAccessReviewAuthorizer(server, clock),
        ]
    )


async def test_a_review_asks_for_the_user_and_the_non_resource_url() -> None:
    server = ReviewServer(readers_may_get_metrics)
    verdict = await chain(server, SleeplessClock()).authorize(Attributes(READER, "get", "/metrics"))

    assert verdict.decision is Decision.ALLOW
    assert server.calls == [
        (
            "subjectaccessreviews",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": "reader",
                    "uid": "u-9",
                    "groups": ["readers", "system:authenticated"],
                    "extra": {"k": ["v"]},
                    "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
                },
            },
        )
    ]


async def test_answers_are_cached_for_their_ttl_allowed_or_denied() -> None:
    clock = SleeplessClock()
    server = ReviewServer(readers_may_get_metrics)
    authorizer = SubjectAccessReviewAuthorizer(server, clock, allow_ttl=10.0, deny_ttl=5.0)
    allowed = Attributes(READER, "get", "/metrics")
    denied = Attributes(ANONYMOUS, "get", "/metrics")

    for _ in range(2):
        assert (await authorizer.authorize(allowed)).decision is Decision.ALLOW
        assert (await authorizer.authorize(denied)).decision is Decision.NO_OPINION
    assert len(server.calls) == 2
    clock.advance(5.0)
    await authorizer.authorize(allowed)
    await authorizer.authorize(denied)
    assert len(server.calls) == 3  # only the denial expired
    clock.advance(5.0)
    await authorizer.authorize(allowed)
    assert len(server.calls) == 4


async def test_health_paths_and_masters_need_no_review() -> None:
    server = ReviewServer(readers_may_get_metrics)
    authorizer = chain(server, SleeplessClock())
    masters = UserInfo("admin", groups=("system:masters",))

    for attributes in (
        Attributes(ANONYMOUS, "get", "/healthz"),
        Attributes(ANONYMOUS, "get", "/readyz"),
        Attributes(masters, "get", "/metrics"),
        Attributes(masters, "post", "/anything"),
    ):
        assert (await authorizer.authorize(attributes)).decision is Decision.ALLOW
    assert server.calls == []
    # Exact paths only: a single check under /readyz is reviewed.
    verdict = await authorizer.authorize(Attributes(ANONYMOUS, "get", "/readyz/shutdown"))
    assert (verdict.decision, verdict.reason) == (Decision.NO_OPINION, "no RBAC policy matched")
    assert len(server.calls) == 1


async def test_a_trailing_star_allows_a_prefix_and_only_trailing() -> None:
    paths = AlwaysAllowPaths(["/debug/*", "/"])
    for path, decision in [
        ("/debug/pprof/heap", Decision.ALLOW),
        ("/", Decision.ALLOW),
        ("/metrics", Decision.NO_OPINION),
    ]:
        assert (await paths.authorize(Attributes(ANONYMOUS, "get", path))).decision is decision
    with pytest.raises(ConfigError, match="only a trailing"):
        AlwaysAllowPaths(["/a*b"])


async def test_an_explicit_denial_wins_and_a_failed_review_is_an_error() -> None:
    clock = SleeplessClock()
    denying = ReviewServer(lambda spec: {"allowed": False, "denied": True, "reason": "nope"})
    verdict = await chain(denying, clock).authorize(Attributes(READER, "get", "/metrics"))
    assert (verdict.decision, verdict.reason) == (Decision.DENY, "nope")

    failing = ReviewServer(readers_may_get_metrics, failures=5)
    with pytest.raises(AuthorizationError, match="SubjectAccessReview: 500"):
        await chain(failing, clock).authorize(Attributes(READER, "get", "/metrics"))
    # Failures are not cached: the next request is reviewed afresh.
    verdict = await chain(failing, clock).authorize(Attributes(READER, "get", "/metrics"))
    assert verdict.decision is Decision.ALLOW

"""Authorizing a request to the secure port, in kube-scheduler's order.

1. members of a privileged group (`system:masters`) may do anything: the API server would
   allow them anyway, so no review is spent on them;
2. the always-allowed paths (`--authorization-always-allow-paths`, by default `/healthz`,
   `/readyz` and `/livez` exactly; a trailing `*` allows a prefix);
3. a SubjectAccessReview for the non-resource URL and the lower-case HTTP method, its answer
   cached for 10 s whether allowed or denied.

The first authorizer with an opinion decides; with none the request is forbidden. A review that
fails (no answer, server error) answers 500, as upstream: it is not a denial.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from scheduler.app.access.chain import Outcome
from scheduler.app.access.chain import ask_in_turn
from scheduler.app.access.reviews import ACCESS_REVIEWS
from scheduler.app.access.reviews import ReviewAPI
from scheduler.app.access.reviews import create_review
from scheduler.app.access.ttl_cache import TTLCache
from scheduler.app.access.user import MASTERS_GROUP
from scheduler.app.access.user import UserInfo
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConfigError

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_ALWAYS_ALLOW_GROUPS = (MASTERS_GROUP,)
DEFAULT_ALLOW_CACHE_TTL = 10.0
DEFAULT_DENY_CACHE_TTL = 10.0


class Decision(enum.Enum):
    ALLOW = "allow"
    DENY = "deny"
    NO_OPINION = "no-opinion"


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    reason: str = ""


NO_OPINION = Verdict(Decision.NO_OPINION)


@dataclass(frozen=True, slots=True)
class Attributes:
    """A request to a non-resource URL: who, which verb (lower-case method), which path."""

    user: UserInfo
    verb: str
    path: str


class AuthorizationError(Exception):
    """An authorizer could not decide (its review failed)."""


class Authorizer(Protocol):
    async def authorize(self, attributes: Attributes) -> Verdict: ...


class PrivilegedGroups:
    def __init__(self, groups: Sequence[str] = DEFAULT_ALWAYS_ALLOW_GROUPS) -> None:
        self._groups = frozenset(groups)

    async def authorize(self, attributes: Attributes) -> Verdict:
        if self._groups.intersection(attributes.user.groups):
            return Verdict(Decision.ALLOW)
        return NO_OPINION


class AlwaysAllowPaths:
    def __init__(self, paths: Sequence[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        for given in paths:
            path = given.removeprefix("/")
            if "*" in path[:-1]:
                raise ConfigError(
                    f"--authorization-always-allow-paths: only a trailing * is allowed in {given!r}"
                )
            if path.endswith("*"):
                prefixes.append(path[:-1])
            else:
                exact.add(path)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)

    async def authorize(self, attributes: Attributes) -> Verdict:
        path = attributes.path.removeprefix("/")
        if path in self._exact or path.startswith(self._prefixes):
            return Verdict(Decision.ALLOW)
        return NO_OPINION


class SubjectAccessReviewAuthorizer:
    def __init__(
        self,
        api: ReviewAPI,
        clock: Clock,
        *,
        allow_ttl: float = DEFAULT_ALLOW_CACHE_TTL,
        deny_ttl: float = DEFAULT_DENY_CACHE_TTL,
    ) -> None:
        self._api = api
        self._clock = clock
        self._allow_ttl = allow_ttl
        self._deny_ttl = deny_ttl
        self._cache: TTLCache[dict[str, object]] = TTLCache(clock)

    async def authorize(self, attributes: Attributes) -> Verdict:
        spec = {
            **attributes.user.review_fields(),
            "nonResourceAttributes": {"path": attributes.path, "verb": attributes.verb},
        }
        key = json.dumps(spec, sort_keys=True)
        status = self._cache.get(key)
        if status is None:
            try:
                status = await create_review(self._api, ACCESS_REVIEWS, spec, self._clock)
            except APIError as error:
                raise AuthorizationError(f"SubjectAccessReview: {error}") from error
            ttl = self._allow_ttl if status.get("allowed") else self._deny_ttl
            self._cache.put(key, status, ttl)
        reason = str(status.get("reason") or "")
        allowed, denied = bool(status.get("allowed")), bool(status.get("denied"))
        if allowed and denied:
            raise AuthorizationError(
                "webhook subject access review returned both allow and deny response"
            )
        if denied:
            return Verdict(Decision.DENY, reason)
        if allowed:
            return Verdict(Decision.ALLOW, reason)
        return Verdict(Decision.NO_OPINION, reason)


class RequestAuthorizer:
    """The first allow or deny wins; a failed review is raised only if nobody decided."""

    def __init__(self, chain: Sequence[Authorizer]) -> None:
        self._chain = tuple(chain)

    async def authorize(self, attributes: Attributes) -> Verdict:
        outcome: Outcome[Verdict] = await ask_in_turn(
            self._chain,
            lambda authorizer: authorizer.authorize(attributes),
            decides=lambda verdict: verdict.decision is not Decision.NO_OPINION,
            failure=AuthorizationError,
        )
        if outcome.decided is not None:
            return outcome.decided
        reasons = [verdict.reason for verdict in outcome.undecided if verdict.reason]
        return Verdict(Decision.NO_OPINION, "\n".join(reasons))

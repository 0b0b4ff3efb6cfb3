"""The identity a request was authenticated as, in the shape the API server's reviews use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"
MASTERS_GROUP = "system:masters"
# Where an x509 or token identity records which credential proved it.
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def with_authenticated_group(self) -> UserInfo:
        """Every authenticated identity is in system:authenticated, unless it already says
        which of the two it belongs to (the API server adds the group the same way)."""
        if self.name == ANONYMOUS_USER:
            return self
        if AUTHENTICATED_GROUP in self.groups or UNAUTHENTICATED_GROUP in self.groups:
            return self
        return UserInfo(self.name, self.uid, (*self.groups, AUTHENTICATED_GROUP), self.extra)

    def review_fields(self) -> dict[str, Any]:
        """The user, uid, groups and extra fields of a SubjectAccessReview spec."""
        fields: dict[str, Any] = {"user": self.name}
        if self.uid:
            fields["uid"] = self.uid
        if self.groups:
            fields["groups"] = list(self.groups)
        if self.extra:
            fields["extra"] = {key: list(values) for key, values in sorted(self.extra.items())}
        return fields


ANONYMOUS = UserInfo(ANONYMOUS_USER, groups=(UNAUTHENTICATED_GROUP,))

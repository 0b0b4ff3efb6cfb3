"""What DynamicResources' PostFilter frees so the pod's next attempt can succeed, and how."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from plugins.dynamic_resources import messages
from plugins.dynamic_resources.claims import PodClaim
from plugins.dynamic_resources.extended_writes import delete_claim
from plugins.dynamic_resources.prebind import deallocate_claim
from scheduler.framework import Handle
from scheduler.framework import Status


@dataclass(frozen=True, slots=True)
class ClaimToFree:
    """What PostFilter frees for the next attempt: an allocated claim it deallocates, or the
    claim an earlier attempt made for the pod's extended resources, which it deletes."""

    claim: PodClaim
    delete: bool

    @property
    def verb(self) -> str:
        return "delete" if self.delete else "deallocate"

    @property
    def answer(self) -> Status:
        text = messages.EXTENDED_CLAIM_DELETED if self.delete else messages.DEALLOCATED
        return Status.unschedulable(text)

    def write(self, handle: Handle) -> Callable[[], Awaitable[None]]:
        if self.delete:
            return partial(delete_claim, handle, self.claim.namespace, self.claim.name)
        return partial(deallocate_claim, handle, self.claim.claim)

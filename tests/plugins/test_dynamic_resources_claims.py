"""DynamicResources PreEnqueue (which claims a pod uses) and its QueueingHints."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.dynamic_resources.hints import after_claim_change
from plugins.dynamic_resources.hints import after_pod_change
from scheduler.framework import Code
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import with_claims
from tests.plugins.dra_world import CLASS
from tests.plugins.dra_world import World
from tests.plugins.dra_world import outcome
from tests.plugins.dra_world import unresolvable

OWNER = make_pod("my-pod").uid("pod-uid").obj()


def template_pod(generated: dict[str, str | None] | None) -> Pod:
    raw = with_claims(
        make_pod("my-pod").uid("pod-uid").dict(),
        templates={"my-resource": "template"},
        generated=generated,
    )
    return Pod.from_dict(raw)


GENERATED = make_claim("my-pod-my-resource").request("r", CLASS)


@pytest.mark.parametrize(
    ("pod", "claims", "expected"),
    [
        pytest.param(make_pod("plain").obj(), [], (Code.SUCCESS, ""), id="no-claims"),
        pytest.param(
            template_pod(None),
            [],
            unresolvable('pod "default/my-pod": ResourceClaim not created yet'),
            id="missing-claim",
        ),
        pytest.param(
            template_pod({"my-resource": None}),
            [],
            (Code.SUCCESS, ""),
            id="not-generated-on-purpose",
        ),
        pytest.param(
            template_pod({"my-resource": "my-pod-my-resource"}),
            [],
            unresolvable('could not find ResourceClaim "default/my-pod-my-resource"'),
            id="claim-gone",
        ),
        pytest.param(
            template_pod({"my-resource": "my-pod-my-resource"}),
            [GENERATED.dict() | {}],
            unresolvable(
                "ResourceClaim default/my-pod-my-resource was not created for Pod "
                "default/my-pod (Pod is not owner)"
            ),
            id="wrong-claim",
        ),
        pytest.param(
            template_pod({"my-resource": "my-pod-my-resource"}),
            [
                make_claim("my-pod-my-resource")
                .request("r", CLASS)
                .owned_by(OWNER)
                .deleting()
                .dict()
            ],
            unresolvable('resourceclaim "my-pod-my-resource" is being deleted'),
            id="deleted-claim",
        ),
        pytest.param(
            template_pod({"my-resource": "my-pod-my-resource"}),
            [make_claim("my-pod-my-resource").request("r", CLASS).owned_by(OWNER).dict()],
            (Code.SUCCESS, ""),
            id="generated-claim",
        ),
        pytest.param(
            Pod.from_dict(with_claims(make_pod("p").dict(), claims={"gpu": "shared"})),
            [make_claim("shared").request("r", CLASS).dict()],
            (Code.SUCCESS, ""),
            id="named-claim",
        ),
    ],
)
def test_pre_enqueue(pod: Pod, claims: list[dict[str, Any]], expected: tuple[Code, str]) -> None:
    world = World([make_device_class(CLASS), *claims])
    assert outcome(world.plugin.pre_enqueue(pod)) == expected


def test_unsupported_pod_claim_entry() -> None:
    raw = make_pod("p").dict()
    raw["spec"]["resourceClaims"] = [{"name": "gpu"}]
    world = World([])
    assert outcome(world.plugin.pre_enqueue(Pod.from_dict(raw))) == unresolvable(
        'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set'
    )


def _named_pod() -> Pod:
    return Pod.from_dict(with_claims(make_pod("p").uid("p").dict(), claims={"gpu": "c"}))


def test_claim_hints() -> None:
    claim = make_claim("c").request("r", CLASS)
    world = World([claim.dict()])
    lister = world.handle.lister("resourceclaims")
    stored = world.claim("c")
    updated = {**stored, "status": {"reservedFor": [{"uid": "x"}]}}
    assert after_claim_change(lister, _named_pod(), None, stored) is QueueingHint.QUEUE
    assert after_claim_change(lister, _named_pod(), stored, updated) is QueueingHint.QUEUE
    assert after_claim_change(lister, _named_pod(), stored, dict(stored)) is QueueingHint.QUEUE_SKIP
    other = make_claim("other").request("r", CLASS).dict()
    assert after_claim_change(lister, _named_pod(), None, other) is QueueingHint.QUEUE_SKIP
    allocated = make_claim("other").request("r", CLASS).allocated(None, ("r", "d", "p", "x")).dict()
    # Another claim's devices were freed: they may fit this pod.
    assert after_claim_change(lister, _named_pod(), allocated, other) is QueueingHint.QUEUE


def test_pod_hint_when_generated_claims_appear() -> None:
    owned = make_claim("my-pod-my-resource").request("r", CLASS).owned_by(OWNER)
    world = World([owned.dict()])
    lister = world.handle.lister("resourceclaims")
    waiting = template_pod(None)
    named = template_pod({"my-resource": "my-pod-my-resource"})
    assert after_pod_change(lister, waiting, waiting, named) is QueueingHint.QUEUE
    assert after_pod_change(lister, waiting, waiting, waiting) is QueueingHint.QUEUE_SKIP
    stranger = make_pod("other").uid("other").obj()
    assert after_pod_change(lister, waiting, stranger, stranger) is QueueingHint.QUEUE_SKIP

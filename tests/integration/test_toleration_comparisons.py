"""Tolerations with Lt and Gt through the whole scheduler: with TaintTolerationComparisonOperators
a pod tolerating `sla` above 40 lands on the node tainted sla=50; without it the toleration
tolerates nothing and the pod waits with upstream's text."""

from __future__ import annotations

import pytest

from scheduler.config.feature_gates import FeatureGates
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

CONFIG = {"profiles": [{"schedulerName": "default-scheduler"}]}
GATE = "TaintTolerationComparisonOperators"


@pytest.mark.parametrize("gate", [True, False])
async def test_a_gt_toleration_lets_the_pod_onto_a_node_with_a_greater_value(gate: bool) -> None:
    features = FeatureGates({GATE: gate})
    async with Harness(CONFIG, features=features) as h:
        h.create(
            [
                make_node("sla-30").taint("sla", "30", "NoSchedule").dict(),
                make_node("sla-50").taint("sla", "50", "NoSchedule").dict(),
                make_pod("p").toleration("sla", "40", "NoSchedule", operator="Gt").dict(),
            ]
        )
        await h.schedule_active()
        await h.quiesce()
        if gate:
            assert h.node_of("default", "p") == "sla-50"
        else:
            assert h.node_of("default", "p") is None
            assert h.event_notes("default", "p", "FailedScheduling") == [
                "0/2 nodes are available: 2 node(s) had untolerated taint(s). no new claims to "
                "deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful "
                "for scheduling."
            ]

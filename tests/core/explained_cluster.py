"""A cluster as it stands (loaded, not simulated first), explained for one pod."""

from __future__ import annotations

import io

from scheduler.app.configuration import plugin_registry
from scheduler.app.explain.render import write
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.session import explain_in
from scheduler.testing import FakeClock

DEFAULTS = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


async def explained(text: str, namespace: str, name: str) -> tuple[Explanation, str]:
    """The explanation of `namespace/name` under upstream's default profile, and its table;
    fails if explain wrote anything to the cluster."""
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents(text, "cluster").objects))
    revision = sim.revision
    registry = plugin_registry([])
    config, profiles = load_config_dict(DEFAULTS, registry)
    explanation = await explain_in(sim, namespace, name, config, profiles, registry)
    assert sim.revision == revision, "explain wrote to the cluster"
    out = io.StringIO()
    write(explanation, "table", out)
    return explanation, out.getvalue()

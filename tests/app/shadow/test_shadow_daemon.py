"""The shadow daemon on the in-memory cluster: it compares Bindings made by someone else and
writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler.app.shadow.daemon import ShadowDaemon
from scheduler.app.shadow.options import ShadowOptions
from scheduler.cluster.read_only import ReadOnlyCluster
from scheduler.cluster.read_only import WriteRefusedError
from scheduler.cluster.sim import SimCluster
from scheduler.config import load_config_dict
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import SystemClock
from scheduler.objects.pod import Pod
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.app.daemon_on_sim import OPTIONS
from tests.app.daemon_on_sim import config_with_profile
from tests.app.daemon_on_sim import until


async def test_compares_a_binding_and_never_writes(tmp_path: Path) -> None:
    registry = PluginRegistry.discover()
    # Leader election configured, as for the production scheduler: shadow mode ignores it.
    document = config_with_profile("production", leader_elect=True)
    config, profiles = load_config_dict(document, registry)
    clock = SystemClock()
    cluster = SimCluster(clock=clock)
    cluster.load(
        [
            make_node("small").capacity(cpu="1", memory="4Gi", pods=10).dict(),
            make_node("big").capacity(cpu="8", memory="32Gi", pods=10).dict(),
        ]
    )
    report = tmp_path / "shadow.json"
    daemon = ShadowDaemon(
        SchedulerSetup(config, profiles, registry, cluster, clock),
        options=OPTIONS,
        shadow=ShadowOptions(report=report, report_interval=3600.0),
    )
    assert daemon.elector is None
    await daemon.start()
    try:
        await until(daemon._informers_synced)
        raw = make_pod("p", "ns").scheduler("production").req(cpu="500m").dict()
        [created] = cluster.load([raw])
        await until(lambda: daemon.scheduler.handlers.current_pod("ns/p") is not None)
        revision = cluster.revision
        # The production scheduler binds it to the node the candidate likes less.
        await cluster.bind(Pod.from_dict(created), "small")
        await until(lambda: daemon.tally.compared == 1)
        # Nothing but that Binding changed the cluster.
        assert cluster.revision == revision + 1
        assert cluster.events() == []
    finally:
        await daemon.shutdown()

    written = json.loads(report.read_text())
    assert written["compared"] == 1
    [differing] = written["differing"]
    assert differing["verdict"] == "lower_score"
    assert (differing["boundNode"], differing["candidateNodes"]) == ("small", ["big"])
    assert daemon.read_only.refused == []


async def test_the_read_only_client_refuses_every_write() -> None:
    client = ReadOnlyCluster(
        SimCluster(clock=SystemClock()), "shadow mode writes nothing to the cluster"
    )
    pod = Pod.from_dict(make_pod("p", "ns").dict())
    with pytest.raises(WriteRefusedError, match="refused binding of ns/p to n"):
        await client.bind(pod, "n")
    with pytest.raises(WriteRefusedError, match="refused creating an Event"):
        await client.create_event({})
    with pytest.raises(WriteRefusedError, match="refused status patch of pod ns/p"):
        await client.patch_pod_status("ns", "p", {})
    assert len(client.refused) == 3

"""`run --shadow`: the daemon with the candidate configuration, deciding but never binding.

It runs as the scheduling daemon does (informers, the secure port with /metrics and the health
checks, signals, shutdown), with three differences:
- it talks to the cluster through a read-only client, so nothing it does can change a pod;
- it takes part in no leader election: it needs no Lease and must never compete for the
  production scheduler's (run one shadow replica; two would only report twice);
- instead of the scheduling loop it compares each Binding the production scheduler makes with
  the candidate's choice (see `verdict.py` for what counts as agreeing), counts the verdicts
  in `scheduler_shadow_comparisons_total` and rewrites the JSON report periodically.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from scheduler.app.access.delegation import SecurePortAccess
from scheduler.app.daemon import Daemon
from scheduler.app.run_options import RunOptions
from scheduler.app.shadow.evaluate import evaluate
from scheduler.app.shadow.handlers import ShadowPodEventHandlers
from scheduler.app.shadow.options import ShadowOptions
from scheduler.app.shadow.tally import ShadowTally
from scheduler.app.shadow.tally import write_report
from scheduler.app.shadow.verdict import compare
from scheduler.cluster.read_only import ReadOnlyCluster
from scheduler.config import KubeSchedulerConfiguration
from scheduler.core.scheduler import SchedulerSetup
from scheduler.objects.pod import Pod
from scheduler.observability import V_BIND
from scheduler.observability import get_logger
from scheduler.observability import log_v

_log = get_logger("scheduler.shadow")


def without_leader_election(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    election = config.leader_election.model_copy(update={"leader_elect": False})
    return config.model_copy(update={"leader_election": election})


class ShadowDaemon(Daemon):
    def __init__(
        self,
        setup: SchedulerSetup,
        *,
        options: RunOptions,
        shadow: ShadowOptions,
        access: SecurePortAccess | None = None,
    ) -> None:
        config = setup.config
        if config.leader_election.leader_elect:
            _log.info(
                "Shadow mode takes part in no leader election",
                lease=f"{config.leader_election.resource_namespace}/"
                f"{config.leader_election.resource_name}",
            )
        self.read_only = ReadOnlyCluster(setup.client, "shadow mode writes nothing to the cluster")
        super().__init__(
            replace(setup, config=without_leader_election(config), client=self.read_only),
            options=options,
            access=access,
        )
        self.shadow = shadow
        self.tally = ShadowTally(self.metrics.registry)
        self.scheduler.handlers = ShadowPodEventHandlers(self.scheduler, self.compare_binding)
        self._report_task: asyncio.Task[None] | None = None

    def compare_binding(self, pod: Pod, node: str) -> None:
        """The candidate's choice for `pod`, which the production scheduler bound to `node`."""
        profile = self.scheduler.profiles[pod.scheduler_name]
        evaluation = evaluate(profile, pod, self.scheduler.cache.table)
        comparison = compare(pod.key, pod.scheduler_name, node, evaluation)
        self.tally.record(comparison)
        log_v(
            _log,
            V_BIND,
            "Shadow comparison",
            pod=pod.key,
            node=node,
            verdict=str(comparison.verdict),
            candidate=",".join(comparison.candidate_nodes),
            plugin=comparison.plugin,
            reason=comparison.reason,
        )

    # Replaces the scheduling loop: nothing is ever popped or bound.
    def _start_scheduling(self) -> None:
        if self._report_task is not None or self.shadow.report is None:
            return
        self._report_task = asyncio.create_task(self._report_periodically(), name="shadow-report")
        self.scheduler.watch(self._report_task)

    async def _report_periodically(self) -> None:
        while True:
            await self.clock.sleep(self.shadow.report_interval)
            self.write_report()

    def write_report(self) -> None:
        if self.shadow.report is None:
            return
        write_report(self.shadow.report, self.tally.report(self.clock.wall()))

    async def shutdown(self) -> None:
        if self._report_task is not None:
            self._report_task.cancel()
            await asyncio.gather(self._report_task, return_exceptions=True)
        await super().shutdown()
        self.write_report()
        if self.read_only.refused:
            _log.error("Shadow mode refused writes", writes=self.read_only.refused[:10])

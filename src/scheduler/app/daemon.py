"""The daemon: informers, the health/metrics port, leader election and the scheduling loop.

Informers and the HTTPS port run on every replica. The port comes first, as in kube-scheduler's
Run: health, metrics and configz answer while the informers list and the Lease is sought (a
replica whose API server is slow still passes its liveness probe); `--secure-port=0` turns it
off. Only the Lease holder pops and binds, and
only once its pod informer has listed since it took the Lease, so its cache holds every Binding
the API server had accepted from the previous holder. A replica makes its first attempt at the
Lease before its informers list: one that takes it then (the usual start of a lone or first
replica) lists once; a standby that takes over later lists the pods again. Losing the Lease cancels
scheduling and every binding cycle at once (they unreserve), flushes queued Events briefly, and
exits non-zero (as kube-scheduler does), so the Deployment restarts the replica as a follower.
SIGTERM stops popping, lets in-flight binding cycles finish (or unreserve) within a deadline,
drains the Events, releases the Lease and exits 0; a second signal exits at once.

Leader election and Events each have a client of their own (connections and rate budget), as
kube-scheduler builds them: a burst of Bindings must not delay a renewal, nor starve Events.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Coroutine
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.app.access.delegation import SecurePortAccess
from scheduler.app.configz import ConfigDocument
from scheduler.app.feature_gates import FOLLOWED_RELEASE
from scheduler.app.feature_gates import feature_states
from scheduler.app.health_checks import leader_election_check
from scheduler.app.health_checks import scheduler_checks
from scheduler.app.http_server import HealthServer
from scheduler.app.run_options import RunOptions
from scheduler.app.startup_gc import HOLD_LIMIT_S
from scheduler.app.startup_gc import START_UP
from scheduler.app.startup_marks import mark
from scheduler.app.unserved_pods import served_scheduler_names
from scheduler.app.unserved_pods import unserved_pods_source
from scheduler.app.zpages import ZPages
from scheduler.cluster.port import ClusterClient
from scheduler.config.defaults import DEFAULT_SCHEDULER_NAME
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.leader_election import LeaderElector
from scheduler.core.leader_election import new_identity
from scheduler.core.result_annotation import ResultAnnotations
from scheduler.core.scheduler import Scheduler
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import Clock
from scheduler.framework.handle import ObjectReference
from scheduler.observability import SchedulerMetrics
from scheduler.observability import get_logger
from scheduler.observability.component_metrics import own_version
from scheduler.observability.pod_resources import PodResourceMetrics

_log = get_logger("scheduler.daemon")

EXIT_LEADERSHIP_LOST = 1
# How long a replica that lost the Lease keeps writing queued Events before it exits. They
# decide nothing, so this is only about not losing them; kube-scheduler exits at once.
LOST_LEADERSHIP_EVENT_FLUSH_S = 2.0
# As klog.Fatal exits: the scheduler's own machinery failed and the process must restart.
EXIT_SCHEDULER_FAILED = 255


class Daemon:
    def __init__(
        self,
        setup: SchedulerSetup,
        *,
        options: RunOptions,
        identity: str | None = None,
        lease_client: ClusterClient | None = None,
        events_client: ClusterClient | None = None,
        access: SecurePortAccess | None = None,
    ) -> None:
        config, profiles, client, clock = setup.config, setup.profiles, setup.client, setup.clock
        self.config = config
        self.options = options
        self.client = client
        self._extra_clients = [c for c in (lease_client, events_client) if c is not None]
        self.clock = clock
        self.identity = identity or new_identity()
        self.metrics = SchedulerMetrics()
        self.metrics.feature_gates(feature_states(options.compat.feature_gates))
        self._configz = ConfigDocument(config, profiles)
        self._stopping = asyncio.Event()
        self._shutting_down = False
        self._lost_leadership = False
        self._leading_since: float | None = None
        self._elector_task: asyncio.Task[None] | None = None
        self._synced_task: asyncio.Task[None] | None = None
        # Until the informers exist, taking the Lease only records when (`start` goes on).
        self._informers_started = False
        # kube-scheduler's delayCacheUntilActive: a standby starts its informers only once it
        # holds the Lease (`_start_informers`, run by `_informers_task`).
        self._delay_caches = config.leader_election.leader_elect and config.delay_cache_until_active
        self._informers_task: asyncio.Task[None] | None = None
        # Set once the elector competes for the Lease; at once if the first attempt took it.
        self._campaigning = False
        self.elector: LeaderElector | None = None
        election = config.leader_election
        if election.leader_elect:
            self.elector = LeaderElector(
                lease_client or client,
                namespace=election.resource_namespace,
                name=election.resource_name,
                identity=self.identity,
                clock=clock,
                lease_duration=election.lease_duration,
                renew_deadline=election.renew_deadline,
                retry_period=election.retry_period,
                on_started_leading=self._on_started_leading,
                on_stopped_leading=self._on_stopped_leading,
                metrics=self.metrics,
            )
        self.scheduler = Scheduler(
            setup,
            metrics=self.metrics,
            # The host name part of the identity: events report `<profile>-<hostname>`.
            instance=self.identity.rsplit("_", 1)[0],
            max_in_unschedulable=options.compat.max_in_unschedulable,
            events_client=events_client,
            tenure=self.elector,
            features=FeatureGates(options.compat.feature_gates),
        )
        self.metrics.set_unserved_pods_source(
            unserved_pods_source(lambda: self.scheduler.informers, served_scheduler_names(profiles))
        )
        if options.plugin_result_annotation:
            self.scheduler.result_annotations = ResultAnnotations(client, self.scheduler.dispatcher)
        # A failure of the machinery ends the process (exit 255), as klog.Fatal would.
        self.scheduler.on_fatal(lambda _exc: self._stopping.set())
        # None with --secure-port=0: nothing is served, no certificate is made.
        self.server = self._health_server(access) if options.secure_port != 0 else None
        self._pod_resources = PodResourceMetrics(self._informer_pods)
        self._access = access
        self.port = 0

    def _health_server(self, access: SecurePortAccess | None) -> HealthServer:
        options, clock = self.options, self.clock
        healthz, readiness = scheduler_checks(
            handlers_synced=self._informers_synced,
            shutting_down=lambda: self._shutting_down,
            leader_election=(
                leader_election_check(self.elector, clock) if self.elector is not None else None
            ),
        )
        return HealthServer(
            self.metrics,
            healthz=healthz,
            readiness=readiness,
            configz=self._configz.get,
            resource_metrics=self._resource_metrics,
            profiling=self.config.enable_profiling,
            zpages=_zpages(options, clock),
            tls_cert_file=options.tls_cert_file,
            tls_private_key_file=options.tls_private_key_file,
            clock=clock,
            guard=access.guard if access is not None else None,
            client_ca_pem=access.client_ca_pem if access is not None else b"",
            tls_options=access.tls if access is not None else None,
            cert_dir=options.secure_port_access.cert_dir,
            reuse_address=options.secure_port_access.permit_address_sharing,
            reuse_port=options.secure_port_access.permit_port_sharing,
        )

    def _resource_metrics(self) -> bytes | None:
        """`/metrics/resources`: the leader's view only, as kube-scheduler serves it (a standby's
        informers hold the same pods, but two replicas reporting them would double the sums);
        None on a standby, which answers with nothing."""
        return self._pod_resources.render() if self.is_leader else None

    def _informer_pods(self) -> Sequence[Mapping[str, Any]]:
        pods = self.scheduler.informers.get("pods")
        return [] if pods is None else pods.store.list()

    @property
    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader

    def _informers_synced(self) -> bool:
        informers = self.scheduler.informers
        return bool(informers) and all(i.has_synced for i in informers.values())

    # ---- leadership ----------------------------------------------------------------------

    def _record_leadership(self, action: str, change: str) -> None:
        """kube-scheduler's LeaderElection Event on the Lease ("<identity> became leader"),
        reported as the first profile's scheduler, so `kubectl get events -n <namespace>`
        shows who led when. Upstream writes it through the core/v1 API, which needs no action;
        events.k8s.io/v1 does, and one per change keeps the two notes apart (Events alike but
        for their note would be counted as one series)."""
        if self.elector is None:
            return
        namespace, name, uid = self.elector.lease_reference
        self.scheduler.recorder.object_event(
            ObjectReference("coordination.k8s.io/v1", "Lease", namespace, name, uid),
            event_type="Normal",
            reason="LeaderElection",
            action=action,
            note=f"{self.identity} {change}",
            controller=next(iter(self.scheduler.profiles), DEFAULT_SCHEDULER_NAME),
        )

    def _on_started_leading(self) -> None:
        _log.info("became the leader; starting to schedule", identity=self.identity)
        self._record_leadership("BecameLeader", "became leader")
        self._leading_since = self.clock.now()
        if self._informers_started:
            self._start_scheduling()
        elif self._delay_caches and self._informers_task is None:
            self._informers_task = asyncio.create_task(
                self._start_informers(), name="informers-when-leading"
            )

    def _on_stopped_leading(self) -> None:
        self._record_leadership("StoppedLeading", "stopped leading")
        if self._shutting_down:
            return
        # kube-scheduler's own line, which log searches and alerts look for.
        _log.error("Leaderelection lost", identity=self.identity)
        self._lost_leadership = True
        self.scheduler.cancel_scheduling()
        # Binding cycles end now, not at shutdown: the next leader may already be binding.
        for task in list(self.scheduler.binding_tasks):
            task.cancel()
        self._stopping.set()

    def _start_scheduling(self) -> None:
        self.scheduler.start_scheduling(leading_since=self._leading_since)

    # ---- lifecycle -----------------------------------------------------------------------

    def request_stop(self) -> None:
        if self._stopping.is_set():
            _log.warning("second signal: exiting now")
            os._exit(1)
        _log.info("shutting down")
        self._stopping.set()

    def debug_cache(self) -> None:
        """SIGUSR2, as kube-scheduler takes it: log where the cache and queue differ from the
        informers, then the cache and queue themselves. Before the informers exist there is
        nothing to compare."""
        debugger = self.scheduler.cache_debugger()
        if debugger is not None:
            debugger.run()

    async def start(self) -> None:
        """The secure port, then the informers and (with leader election) the elector.

        A replica that did not take the Lease at once campaigns only once its informers have
        listed, as kube-scheduler does: one that cannot list (a resource its role does not
        grant yet, say) must not take the Lease from a standby that could schedule. With
        `delayCacheUntilActive` a standby holds no caches at all: it campaigns at once, and its
        informers start when it takes the Lease (kube-scheduler's trade of a slower takeover
        for the memory and watches of idle replicas)."""
        await self._serve()
        if self._delay_caches:
            assert self.elector is not None
            self._campaigning = True
            self._elector_task = self._own_elector(self.elector.run())
            return
        acquired = False
        if self.elector is not None:
            acquired = await self.elector.acquire_at_once()
            self._campaigning = acquired
        await self._start_informers()
        if self.is_leader:
            self._start_scheduling()
        if self.elector is not None:
            campaign = self.elector.run() if acquired else self._campaign_when_synced()
            self._elector_task = self._own_elector(campaign)

    def _own_elector(self, campaign: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """The elector's task, watched like the scheduling loop: a fault ending it is fatal,
        not a standby that silently stops competing while its health checks pass."""
        task = asyncio.create_task(campaign, name="leader-election")
        self.scheduler.watch(task)
        return task

    async def _serve(self) -> None:
        """Listen on the secure port, before anything that waits for the API server."""
        if self.server is None:
            _log.info("secure port off (--secure-port=0): not serving health, metrics or configz")
            return
        self.port = await self.server.start(self.options.bind_address, self.options.secure_port)
        _log.info("serving health and metrics", port=self.port)

    async def _start_informers(self) -> None:
        """The scheduler's informers (its caches); with `delayCacheUntilActive`, once leading,
        then scheduling as soon as they are up."""
        await self.scheduler.start()
        self._informers_started = True
        mark(_log, "Informers started")
        self._synced_task = asyncio.create_task(self._when_synced(), name="start-up-synced")
        if self._delay_caches and self.is_leader:
            self._start_scheduling()

    @property
    def campaigning(self) -> bool:
        """Whether this replica holds or competes for the Lease (always, without election)."""
        return self.elector is None or self._campaigning

    async def _campaign_when_synced(self) -> None:
        elector = self.elector
        if elector is None:
            return
        await self.scheduler.wait_synced()
        self._campaigning = True
        await elector.run()

    async def _when_synced(self) -> None:
        """Once every informer has listed: collect garbage again, freezing what start-up
        built (see `startup_gc`), and log the step."""
        synced = asyncio.ensure_future(self.scheduler.wait_synced())
        try:
            done, _ = await asyncio.wait({synced}, timeout=HOLD_LIMIT_S)
            START_UP.release(freeze=bool(done))
            await synced
        finally:
            synced.cancel()
        mark(_log, "Caches synced")

    async def wait(self) -> int:
        """Until a signal or lost leadership; then shut down. Returns the exit code."""
        await self._stopping.wait()
        await self.shutdown()
        if self.scheduler.fatal_error is not None:
            return EXIT_SCHEDULER_FAILED
        return EXIT_LEADERSHIP_LOST if self._lost_leadership else 0

    async def shutdown(self) -> None:
        """Stop popping, let binding cycles finish, release the Lease, drain the writes.

        Binding cycles, status patches and Events share one budget (`--shutdown-timeout`), so
        a stop under load ends within the pod's grace period (30 s in the manifests: the
        budget, one Lease request and two seconds for the last Events). The Lease goes once no
        binding cycle or status patch can land any more, and before the Events drain: they
        need no Lease and change no decision, and a standby should not wait for them to start
        scheduling. (A status patch landing after a new leader bound its pod would mark the
        bound pod unschedulable.)"""
        self._shutting_down = True
        await self.scheduler.stop_scheduling()
        lost = self._lost_leadership
        loop = asyncio.get_running_loop()
        budget = LOST_LEADERSHIP_EVENT_FLUSH_S if lost else self.options.shutdown_timeout
        ends = loop.time() + budget
        bindings = list(self.scheduler.binding_tasks)
        if bindings and not lost:
            _log.info("waiting for binding cycles", count=len(bindings))
            _done, pending = await asyncio.wait(bindings, timeout=budget)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.scheduler.dispatcher.drain(), max(0.0, ends - loop.time()))
        # Cancelling the elector releases the Lease (unless it was lost), so a standby takes
        # over at once.
        if self._elector_task is not None:
            self._elector_task.cancel()
            await asyncio.gather(self._elector_task, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.scheduler.events.drain(), max(0.0, ends - loop.time()))
        for helper in (self._informers_task, self._synced_task):
            if helper is not None:
                helper.cancel()
                await asyncio.gather(helper, return_exceptions=True)
        # Events the drain did not reach get a moment more.
        await self.scheduler.stop(event_deadline=LOST_LEADERSHIP_EVENT_FLUSH_S)
        if self.server is not None:
            await self.server.stop()
        if self._access is not None:
            await self._access.close()
        for client in (self.client, *self._extra_clients):
            await client.close()


def _zpages(options: RunOptions, clock: Clock) -> ZPages:
    gates = FeatureGates(options.compat.feature_gates)
    return ZPages(
        clock,
        binary_version=own_version(),
        emulation_version=FOLLOWED_RELEASE,
        flags=options.flag_values if gates.enabled("ComponentFlagz") else None,
        statusz=gates.enabled("ComponentStatusz"),
    )


def install_signal_handlers(daemon: Daemon) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, daemon.request_stop)
    loop.add_signal_handler(signal.SIGUSR2, daemon.debug_cache)

"""Connect to the cluster and run the daemon until it is told to stop."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.app.access.delegation import SecurePortAccess
from scheduler.app.access.delegation import build_access
from scheduler.app.daemon import Daemon
from scheduler.app.daemon import install_signal_handlers
from scheduler.app.run_options import RunOptions
from scheduler.app.shadow.options import ShadowOptions
from scheduler.cluster.kube import connect_daemon
from scheduler.cluster.kube import default_user_agent
from scheduler.cluster.kube.config import lease_request_timeout_for
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.spec import PluginSpec


async def serve(
    config: KubeSchedulerConfiguration,
    profiles: Sequence[EffectiveProfile],
    registry: Mapping[str, PluginSpec],
    options: RunOptions,
    shadow: ShadowOptions | None = None,
) -> int:
    connection = config.client_connection
    clock = SystemClock()
    access = await secure_port_access(options, clock)
    try:
        clients = await connect_daemon(
            kubeconfig=connection.kubeconfig or None,
            master=options.master,
            qps=connection.qps,
            burst=connection.burst,
            user_agent=default_user_agent(),
            lease_request_timeout=lease_request_timeout_for(config.leader_election.renew_deadline),
        )
    except BaseException:
        if access is not None:
            await access.close()
        raise
    setup = SchedulerSetup(config, profiles, registry, clients.main, clock)
    daemon: Daemon
    if shadow is not None:
        # Imported here: only shadow mode needs its evaluation and tallies.
        from scheduler.app.shadow.daemon import ShadowDaemon  # noqa: PLC0415

        # Shadow mode writes no Events and holds no Lease.
        await clients.events.close()
        await clients.leader_election.close()
        daemon = ShadowDaemon(setup, options=options, shadow=shadow, access=access)
    else:
        daemon = Daemon(
            setup,
            options=options,
            lease_client=clients.leader_election,
            events_client=clients.events,
            access=access,
        )
    review_clients = access.clients if access is not None else []
    for api in (clients.main, clients.events, clients.leader_election, *review_clients):
        api.observe_requests(daemon.metrics.rest_client)
    install_signal_handlers(daemon)
    try:
        await daemon.start()
    except BaseException:
        await daemon.shutdown()
        raise
    return await daemon.wait()


async def secure_port_access(options: RunOptions, clock: Clock) -> SecurePortAccess | None:
    """Who may call the secure port; None when it is off (`--secure-port=0`), which, as in
    kube-scheduler, also leaves its flags unread and opens no review client."""
    if options.secure_port == 0:
        return None
    return await build_access(
        options.secure_port_access, clock=clock, user_agent=default_user_agent()
    )

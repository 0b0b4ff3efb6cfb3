"""Connecting to a cluster: where the API server is, how to authenticate, how fast to talk.

The server and credentials come, in this order of preference, from a kubeconfig file (with an
optional context), from `--master` alone, or from the service account of the pod we run in;
`--master` also overrides the server of a kubeconfig, as kube-scheduler's flag does.

Of `clientConnection`, `qps` and `burst` drive the client-side rate limiter (zeros are
client-go's defaults, 5 and 10; a negative `qps` sets no limit). `contentType` is
ignored: this client speaks JSON only (kubernetes_asyncio has no protobuf codec), so a
configured `application/vnd.kubernetes.protobuf` still talks JSON.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path

from yaml import YAMLError

from scheduler.cluster.kube.client import KubeClusterClient
from scheduler.cluster.kube.client_library import ApiClient
from scheduler.cluster.kube.client_library import ConfigException
from scheduler.cluster.kube.client_library import Configuration
from scheduler.cluster.kube.client_library import load_incluster_config
from scheduler.cluster.kube.client_library import load_kube_config
from scheduler.cluster.kube.kubeconfig_check import check_kubeconfig
from scheduler.cluster.kube.rate_limit import TokenBucket
from scheduler.cluster.kube.rate_limit import client_go_rate
from scheduler.cluster.kube.transport import DEFAULT_REQUEST_TIMEOUT
from scheduler.cluster.kube.transport import Transport
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import ConfigError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# Connections a client may hold open at once, by default. Watches hold one each for as long as
# they run (a couple of dozen at most), which leaves room for dozens of requests in flight. More
# requests than that wait for a free connection: over HTTP/1.1 each request in flight needs a
# connection of its own, and a pool as large as a benchmark's burst (thousands) lets a backlog of
# Bindings open hundreds of TLS connections, each a handshake and buffers, to an API server that
# answers no faster for it. client-go's HTTP/2 multiplexes on one connection, up to the server's
# stream limit, and so queues likewise.
DEFAULT_POOL_SIZE = 100


def default_user_agent() -> str:
    try:
        release = version("kube-pyscheduler")
    except PackageNotFoundError:
        release = "0.0.0"
    return f"kube-pyscheduler/{release}"


async def load_configuration(
    *,
    kubeconfig: str | None,
    master: str | None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
    flag: str = "--kubeconfig",
    master_flag: str = "--master",
) -> Configuration:
    """The server URL and credentials, from the first source that applies (see module doc).
    `master_flag` is "" for a command that has no such flag, so errors do not offer it."""
    environ = os.environ if environ is None else environ
    configuration = Configuration()
    if kubeconfig:
        checked = check_kubeconfig(kubeconfig, context=context, flag=flag)
        try:
            await load_kube_config(
                config_file=checked.files,
                context=checked.context,
                client_configuration=configuration,
                persist_config=False,
            )
        # The loader reports a malformed file with whatever its parser raised.
        except (ConfigException, OSError, ValueError, KeyError, TypeError, YAMLError) as error:
            raise ConfigError(f"{flag}: cannot load {kubeconfig}: {error}") from error
    elif master:
        pass
    elif environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration,
                environ=environ,
                token_filename=str(service_account_dir / "token"),
                cert_filename=str(service_account_dir / "ca.crt"),
            )
        except ConfigException as error:
            raise ConfigError(f"in-cluster configuration: {error}") from error
    else:
        master_too = f" or {master_flag}" if master_flag else ""
        raise ConfigError(
            "--kubeconfig: no cluster to connect to; pass --kubeconfig (with --config, set"
            f" clientConnection.kubeconfig){master_too}, or run inside a pod with a service"
            " account"
        )
    if master:
        configuration.host = master.rstrip("/")
    return configuration


def new_client(
    configuration: Configuration,
    *,
    qps: float,
    burst: int,
    user_agent: str,
    clock: Clock | None = None,
    pool_size: int | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> KubeClusterClient:
    """A client over `configuration` with its own connections and its own rate limiter
    (`qps`/`burst`). Call inside the event loop that will use it (the connection pool belongs
    to that loop). `pool_size` defaults to DEFAULT_POOL_SIZE connections."""
    clock = clock if clock is not None else SystemClock()
    limiter = TokenBucket(qps, burst, clock)
    configuration = copy.copy(configuration)
    configuration.connection_pool_maxsize = pool_size or DEFAULT_POOL_SIZE
    api_client = ApiClient(configuration)
    api_client.user_agent = user_agent
    transport = Transport(api_client, limiter, request_timeout=request_timeout, clock=clock)
    return KubeClusterClient(transport, clock=clock)


@dataclass(frozen=True, slots=True)
class DaemonClients:
    """The daemon's clients, each with its own connections and rate budget, as kube-scheduler
    builds them: scheduling (watches, Bindings, status), Events, and leader election."""

    main: KubeClusterClient
    events: KubeClusterClient
    leader_election: KubeClusterClient

    async def close(self) -> None:
        for client in (self.main, self.events, self.leader_election):
            await client.close()


# Leader election sends one request every retry period; a couple of connections suffice, and
# its limiter never has a backlog to make a renewal wait.
LEADER_ELECTION_POOL = 2
# The Events client's QPS and burst, as a multiple of `clientConnection`'s (see below).
EVENTS_BUDGET_SHARE = 2


def lease_request_timeout_for(renew_deadline: float) -> float:
    """The leader election client's request timeout, as client-go sets its lock client's: half
    the renew deadline, so that one hung request leaves a leader time for another, but never
    under a second, which would fail requests a healthy API server is still answering."""
    return max(1.0, renew_deadline / 2)


async def connect_daemon(
    *,
    kubeconfig: str | None,
    master: str | None,
    qps: float,
    burst: int,
    user_agent: str,
    context: str | None = None,
    clock: Clock | None = None,
    event_workers: int = 64,
    lease_request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> DaemonClients:
    """The three clients the daemon runs on, for the cluster the flags point at. The leader
    election client gives up on a request after `lease_request_timeout` (see
    `lease_request_timeout_for`), so one hung request cannot use up a leader's time to renew."""
    configuration = await load_configuration(kubeconfig=kubeconfig, master=master, context=context)
    # Before the Events client's share is taken: a zero is a default, then doubled like a rate.
    qps, burst = client_go_rate(qps, burst)

    def client(
        agent: str,
        pool: int | None = None,
        share: int = 1,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> KubeClusterClient:
        return new_client(
            configuration,
            qps=qps * share,
            burst=burst * share,
            user_agent=agent,
            clock=clock,
            pool_size=pool,
            request_timeout=timeout,
        )

    return DaemonClients(
        main=client(user_agent),
        # Every Binding brings a Scheduled Event, and failures bring FailedScheduling ones:
        # on the same budget as Bindings, Events fall behind exactly when binding runs at its
        # limit (a burst), and a process that stops then loses the backlog. Twice the budget
        # keeps them level.
        events=client(f"{user_agent}/events", event_workers, EVENTS_BUDGET_SHARE),
        leader_election=client(
            f"{user_agent}/leader-election", LEADER_ELECTION_POOL, timeout=lease_request_timeout
        ),
    )


async def connect(
    *,
    kubeconfig: str | None,
    master: str | None,
    qps: float,
    burst: int,
    user_agent: str,
    context: str | None = None,
    clock: Clock | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    flag: str = "--kubeconfig",
    master_flag: str = "--master",
) -> KubeClusterClient:
    """A client for the cluster the flags and environment point at; close it when done.
    `flag` names the option the kubeconfig came from, in errors, and `master_flag` the one
    the server URL may come from ("" for none)."""
    configuration = await load_configuration(
        kubeconfig=kubeconfig, master=master, context=context, flag=flag, master_flag=master_flag
    )
    return new_client(
        configuration,
        qps=qps,
        burst=burst,
        user_agent=user_agent,
        clock=clock,
        request_timeout=request_timeout,
    )

"""The null scheduler: binds every pending pod of its schedulerName to the next node in turn.

It has no queue order, no filters, no scores and no Events: only the list and watch of pending
pods and one Binding per pod, through the same client stack as kube-pyscheduler (its cluster
client, transport and rate limiter). Whatever rate it reaches is what the API server on this
machine allows a scheduler, which puts the other schedulers' rates in proportion.

With --scheduled-events it also writes, after each Binding, the `Scheduled` Event every
scheduler writes (events.k8s.io/v1, as kube-scheduler's): the API server's limit for a
scheduler that kubectl can follow.

    python -m bench.null_scheduler --kubeconfig FILE --scheduler-name NAME [--scheduled-events]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import socket
import sys
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Any

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import connect
from scheduler.framework.errors import APIError
from scheduler.framework.errors import GoneError
from scheduler.objects.pod import Pod
from scheduler.observability import configure_logging

QPS = 5000
BURST = 5000
# Bindings in flight at once; kube-scheduler runs each binding cycle in its own goroutine.
BINDERS = 64


class NullScheduler:
    def __init__(
        self, client: KubeClusterClient, scheduler_name: str, *, scheduled_events: bool = False
    ) -> None:
        self._client = client
        self._scheduler_name = scheduler_name
        self._scheduled_events = scheduled_events
        self._selector = f"spec.schedulerName={scheduler_name},spec.nodeName="
        self._pending: asyncio.Queue[Pod] = asyncio.Queue()
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._seen: set[str] = set()
        self._nodes: Iterator[str] = iter(())
        self.bound = 0
        self.failed = 0

    async def run(self) -> None:
        listed = await self._client.list("nodes")
        names = [str(node["metadata"]["name"]) for node in listed.items]
        if not names:
            raise SystemExit("null-scheduler: the cluster has no nodes to bind to")
        self._nodes = itertools.cycle(names)
        binders = [asyncio.create_task(self._bind_forever()) for _ in range(BINDERS)]
        if self._scheduled_events:
            # Beside the binders, as kube-pyscheduler's Event writers work beside its Bindings.
            binders += [asyncio.create_task(self._write_events_forever()) for _ in range(BINDERS)]
        try:
            await self._follow_pending_pods()
        finally:
            for task in binders:
                task.cancel()

    async def _follow_pending_pods(self) -> None:
        version = await self._list_pending()
        while True:
            try:
                async for event in self._client.watch(
                    "pods", resource_version=version, field_selector=self._selector
                ):
                    version = event.resource_version or version
                    if event.type == "ADDED":
                        self._offer(event.object)
            except GoneError:
                version = await self._list_pending()

    async def _list_pending(self) -> str:
        listed = await self._client.list("pods", field_selector=self._selector)
        for item in listed.items:
            self._offer(item)
        return listed.resource_version

    def _offer(self, raw: dict[str, Any]) -> None:
        pod = Pod.from_dict(raw)
        # A re-list brings back pods whose Binding is still in flight.
        if pod.uid in self._seen:
            return
        self._seen.add(pod.uid)
        self._pending.put_nowait(pod)

    async def _bind_forever(self) -> None:
        while True:
            pod = await self._pending.get()
            node = next(self._nodes)
            try:
                await self._client.bind(pod, node)
            except APIError as error:
                self.failed += 1
                print(f"null-scheduler: binding {pod.key} failed: {error}", file=sys.stderr)
                continue
            self.bound += 1
            if self._scheduled_events:
                self._events.put_nowait(self._scheduled(pod, node))

    async def _write_events_forever(self) -> None:
        while True:
            event = await self._events.get()
            try:
                await self._client.create_event(event)
            except APIError as error:
                print(f"null-scheduler: an Event failed: {error}", file=sys.stderr)

    def _scheduled(self, pod: Pod, node: str) -> dict[str, Any]:
        """The Event kube-scheduler writes for a bound pod, with the fields it sets."""
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {
            "eventTime": now,
            "reportingController": self._scheduler_name,
            "reportingInstance": f"{self._scheduler_name}-{socket.gethostname()}",
            "action": "Binding",
            "reason": "Scheduled",
            "type": "Normal",
            "note": f"Successfully assigned {pod.key} to {node}",
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.uid,
            },
        }


async def serve(kubeconfig: str, scheduler_name: str, *, scheduled_events: bool) -> None:
    client = await connect(
        kubeconfig=kubeconfig, master=None, qps=QPS, burst=BURST, user_agent="null-scheduler"
    )
    try:
        await NullScheduler(client, scheduler_name, scheduled_events=scheduled_events).run()
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.null_scheduler", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", required=True)
    parser.add_argument(
        "--scheduled-events",
        action="store_true",
        help="also write the Scheduled Event of each bound pod",
    )
    args = parser.parse_args(argv)
    # As the daemon logs at its default verbosity: no line per request.
    configure_logging("text", 0)
    # Runs until it is stopped (SIGTERM ends the process).
    asyncio.run(serve(args.kubeconfig, args.scheduler_name, scheduled_events=args.scheduled_events))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The opt-in plugin-result annotation: why the latest attempt failed, on the pod itself.

With `run --plugin-result-annotation`, a failed attempt leaves on the pod (as
kube-scheduler-simulator does) a JSON summary of what the Filter plugins said: the message of
the FailedScheduling Event, nodes per plugin and reason, and each node's rejecting plugin and
reason. It is bounded to `MAX_BYTES` (nodes that do not fit are counted, not listed), and it is
removed once the pod is bound, so that it never describes a pod that is no longer pending.
`kube-pyscheduler explain` gives the full per-plugin picture on demand.

Writing it needs `patch` on pods, which the default ClusterRole does not grant.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler.cluster.port import ClusterClient
from scheduler.core.api_dispatcher import ApiDispatcher
from scheduler.core.outcome import Failure
from scheduler.framework.status import Code
from scheduler.objects.pod import Pod

ANNOTATION = "kube-pyscheduler.io/filter-result"
# Annotations of one object may hold 256 KiB in all; this one takes a small share.
MAX_BYTES = 8 * 1024
_REJECTING = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def filter_result(failure: Failure, limit: int = MAX_BYTES) -> str:
    """The annotation's value: compact JSON of at most `limit` bytes."""
    result: dict[str, Any] = {"message": failure.message[: limit // 2]}
    diagnosis = failure.diagnosis
    nodes: list[tuple[str, str]] = []
    if diagnosis is not None:
        plugins: dict[str, dict[str, int]] = {}
        for plugin, reasons, count in diagnosis.rejections_by_plugin():
            for reason in reasons:
                per_plugin = plugins.setdefault(plugin, {})
                per_plugin[reason] = per_plugin.get(reason, 0) + count
        result["plugins"] = plugins
        for code in _REJECTING:
            for name in diagnosis.nodes_with_code(int(code)):
                status = diagnosis.status_of(name)
                nodes.append((name, f"{status.plugin}: {status.message()}"))
    nodes.sort()
    result["nodes"] = {}
    result["omittedNodes"] = len(nodes)
    for name, text in nodes:
        result["nodes"][name] = text
        result["omittedNodes"] -= 1
        if len(_encode(result).encode()) > limit:
            del result["nodes"][name]
            result["omittedNodes"] += 1
            break
    return _encode(result)


class ResultAnnotations:
    """Writes and clears the annotation through the scheduler's API dispatcher."""

    def __init__(
        self, client: ClusterClient, dispatcher: ApiDispatcher, limit: int = MAX_BYTES
    ) -> None:
        self._client = client
        self._dispatcher = dispatcher
        self._limit = limit

    def _patch(self, pod: Pod, value: str | None) -> None:
        client = self._client
        patch = {"metadata": {"annotations": {ANNOTATION: value}}}

        async def send() -> None:
            await client.patch_object("pods", pod.namespace, pod.name, patch)

        self._dispatcher.submit(pod.key, f"plugin-result annotation of {pod.key}", send)

    def failed(self, pod: Pod, failure: Failure) -> None:
        self._patch(pod, filter_result(failure, self._limit))

    def bound(self, pod: Pod) -> None:
        if ANNOTATION in pod.annotations:
            self._patch(pod, None)

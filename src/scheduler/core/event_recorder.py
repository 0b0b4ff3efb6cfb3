"""events.k8s.io/v1 Events with upstream's reasons, actions and notes."""

from __future__ import annotations

import itertools
from typing import Any, NotRequired, TypedDict, Unpack

from scheduler.core.event_sink import EventSink
from scheduler.framework.clock import Clock
from scheduler.objects.pod import Pod

# Upstream truncates event notes to 1024 characters, ending them with " ...".
MAX_NOTE_LENGTH = 1024


def truncate_note(note: str) -> str:
    if len(note) <= MAX_NOTE_LENGTH:
        return note
    return note[: MAX_NOTE_LENGTH - 4] + " ..."


class EventFields(TypedDict):
    event_type: str
    reason: str
    action: str
    note: str
    controller: str
    related: NotRequired[Pod | None]


class EventRecorder:
    """Builds Events about pods and hands them to the sink: `pod_event` from synchronous code
    (the scheduling cycle), `pod_event_waiting` from binding cycles, which wait for room in the
    sink's queue rather than have an Event dropped."""

    def __init__(self, sink: EventSink, clock: Clock, instance: str) -> None:
        self._sink = sink
        self._clock = clock
        self._instance = instance
        self._sequence = itertools.count()

    def pod_event(self, pod: Pod, **fields: Unpack[EventFields]) -> None:
        self._sink.submit(self._body(pod, **fields))

    async def pod_event_waiting(self, pod: Pod, **fields: Unpack[EventFields]) -> None:
        await self._sink.put(self._body(pod, **fields))

    def _body(
        self,
        pod: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        controller: str,
        related: Pod | None = None,
    ) -> dict[str, Any]:
        now = self._clock.wall().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{pod.name}.{self._instance}{next(self._sequence):x}",
                "namespace": pod.namespace,
            },
            "eventTime": now,
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self._instance}",
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": truncate_note(note),
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.uid,
            },
        }
        if related is not None:
            body["related"] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": related.namespace,
                "name": related.name,
                "uid": related.uid,
            }
        return body

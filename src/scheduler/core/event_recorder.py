"""events.k8s.io/v1 Events with upstream's reasons, actions and notes."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from typing import NotRequired
from typing import TypedDict
from typing import Unpack

from scheduler.core.event_sink import EventSink
from scheduler.framework.clock import Clock
from scheduler.framework.handle import ObjectReference
from scheduler.objects.event_names import event_name
from scheduler.objects.pod import Pod

# The API server refuses an Event whose note is longer than 1024 bytes of UTF-8, so upstream
# cuts longer notes to that length, ending them with " ...".
MAX_NOTE_BYTES = 1024
_ELLIPSIS = " ..."


def truncate_note(note: str) -> str:
    """`note` cut to the API server's limit. Upstream counts bytes, as Go's `len` does; a note
    cut by characters could still be refused (a plugin's message may be in any script), and
    the Event would be lost. The cut falls between characters, where Go's may split one."""
    if len(note) <= MAX_NOTE_BYTES // 4:
        return note  # even four bytes per character would fit
    encoded = note.encode()
    if len(encoded) <= MAX_NOTE_BYTES:
        return note
    kept = encoded[: MAX_NOTE_BYTES - len(_ELLIPSIS)].decode(errors="ignore")
    return kept + _ELLIPSIS


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
    sink's queue rather than have an Event dropped. `instance` is the host name, as upstream's
    recorder uses: events report `<profile>-<instance>`, so an event can be traced to the
    replica that wrote it."""

    def __init__(self, sink: EventSink, clock: Clock, instance: str) -> None:
        self._sink = sink
        self._clock = clock
        self._instance = instance
        self._last_stamp = 0

    def _name(self, name: str, wall: datetime) -> str:
        """`<object>.<wall-clock nanoseconds in hex>`, upstream's name; a stamp is never reused
        in this process, so two events in one clock tick (or under a test clock) differ."""
        stamp = int(wall.timestamp()) * 1_000_000_000 + wall.microsecond * 1000
        self._last_stamp = max(stamp, self._last_stamp + 1)
        return event_name(name, self._last_stamp)

    def pod_event(self, pod: Pod, **fields: Unpack[EventFields]) -> None:
        self._sink.submit(self._body(_pod_reference(pod), **fields))

    async def pod_event_waiting(self, pod: Pod, **fields: Unpack[EventFields]) -> None:
        await self._sink.put(self._body(_pod_reference(pod), **fields))

    def object_event(self, regarding: ObjectReference, **fields: Unpack[EventFields]) -> None:
        self._sink.submit(self._body(regarding, **fields))

    def _body(
        self,
        regarding: ObjectReference,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        controller: str,
        related: Pod | None = None,
    ) -> dict[str, Any]:
        wall = self._clock.wall()
        now = wall.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": self._name(regarding.name, wall),
                "namespace": regarding.namespace,
            },
            "eventTime": now,
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self._instance}",
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": truncate_note(note),
            "regarding": _reference_body(regarding),
        }
        if related is not None:
            body["related"] = _reference_body(_pod_reference(related))
        return body


def _pod_reference(pod: Pod) -> ObjectReference:
    return ObjectReference("v1", "Pod", pod.namespace, pod.name, pod.uid, pod.resource_version)


def _reference_body(ref: ObjectReference) -> dict[str, str]:
    body = {
        "apiVersion": ref.api_version,
        "kind": ref.kind,
        "namespace": ref.namespace,
        "name": ref.name,
        "uid": ref.uid,
    }
    if ref.resource_version:
        body["resourceVersion"] = ref.resource_version
    return body

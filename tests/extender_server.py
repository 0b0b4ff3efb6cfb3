"""A small HTTP scheduler extender for tests: it filters, prioritizes, preempts and binds as
told, and records every call. It serves from a thread, so the scheduler under test (in this
process's event loop, or a daemon subprocess) talks to it over real HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

REJECTION = "extender says no"

# Called with (namespace, name, uid, node) to make a Binding; returns an error text or "".
Binder = Callable[[str, str, str, str], str]


@dataclass
class ExtenderBehaviour:
    """`reject` nodes get `REJECTION` (in FailedAndUnresolvableNodes for `unresolvable`
    ones); `scores` by node name, 0 for others; `binder` makes the Binding."""

    reject: set[str] = field(default_factory=set)
    unresolvable: set[str] = field(default_factory=set)
    # Nodes the filter leaves out of its answer without naming them as failed.
    drop: set[str] = field(default_factory=set)
    scores: dict[str, int] = field(default_factory=dict)
    binder: Binder | None = None
    # Preempt: candidate nodes to drop; the others are answered with the victims they came with
    # (as MetaVictims, whichever form was sent), unless `preempt_answer` is given to send.
    preempt_drop: set[str] = field(default_factory=set)
    preempt_answer: Any = None
    # Called with the verb before answering (a test changes the cluster meanwhile).
    on_call: Callable[[str], None] | None = None
    # A filter call offered this node alone answers with an Error (the extender fails there).
    filter_error_alone: str = ""


@dataclass(frozen=True)
class Call:
    verb: str
    body: Any


class RecordingExtender:
    def __init__(self, behaviour: ExtenderBehaviour) -> None:
        self.behaviour = behaviour
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def verbs(self) -> list[str]:
        with self._lock:
            return [c.verb for c in self.calls]

    def calls_of(self, verb: str) -> list[Any]:
        with self._lock:
            return [c.body for c in self.calls if c.verb == verb]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def answer(self, verb: str, body: Mapping[str, Any]) -> Any:
        with self._lock:
            self.calls.append(Call(verb, body))
        if self.behaviour.on_call is not None:
            self.behaviour.on_call(verb)
        if verb == "filter":
            return self._filter(body)
        if verb == "prioritize":
            return [
                {"Host": name, "Score": self.behaviour.scores.get(name, 0)}
                for name in candidate_names(body)
            ]
        if verb == "preempt":
            return self._preempt(body)
        if verb == "bind":
            binder = self.behaviour.binder
            error = (
                "no binder"
                if binder is None
                else binder(body["PodNamespace"], body["PodName"], body["PodUID"], body["Node"])
            )
            return {"Error": error}
        raise KeyError(verb)

    def _filter(self, body: Mapping[str, Any]) -> Any:
        names = candidate_names(body)
        if names == [self.behaviour.filter_error_alone]:
            return {"Error": f"cannot judge {names[0]} now"}
        rejected = self.behaviour.reject | self.behaviour.unresolvable | self.behaviour.drop
        kept = [n for n in names if n not in rejected]
        failed = {n: REJECTION for n in names if n in self.behaviour.reject}
        unresolvable = {n: REJECTION for n in names if n in self.behaviour.unresolvable}
        result: dict[str, Any] = {
            "FailedNodes": failed,
            "FailedAndUnresolvableNodes": unresolvable,
            "Error": "",
        }
        if body.get("NodeNames") is not None:
            result.update(Nodes=None, NodeNames=kept)
        else:
            items = [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in kept]
            result.update(Nodes={"items": items}, NodeNames=None)
        return result

    def _preempt(self, body: Mapping[str, Any]) -> Any:
        if self.behaviour.preempt_answer is not None:
            return self.behaviour.preempt_answer
        if body.get("NodeNameToMetaVictims") is not None:
            sent = body["NodeNameToMetaVictims"]
            uids = {node: [p["UID"] for p in v["Pods"]] for node, v in sent.items()}
        else:
            sent = body["NodeNameToVictims"]
            uids = {node: [p["metadata"]["uid"] for p in v["Pods"]] for node, v in sent.items()}
        kept = {
            node: {
                "Pods": [{"UID": uid} for uid in uids[node]],
                "NumPDBViolations": victims["NumPDBViolations"],
            }
            for node, victims in sent.items()
            if node not in self.behaviour.preempt_drop
        }
        return {"NodeNameToMetaVictims": kept}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        extender = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                try:
                    # A proxied call names the whole URL (`POST http://host/filter`).
                    answer = extender.answer(urlsplit(self.path).path.strip("/"), body)
                except KeyError:
                    self.send_error(404)
                    return
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def candidate_names(body: Mapping[str, Any]) -> list[str]:
    if body.get("NodeNames") is not None:
        return list(body["NodeNames"])
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


@contextmanager
def running_extender(behaviour: ExtenderBehaviour) -> Iterator[RecordingExtender]:
    extender = RecordingExtender(behaviour)
    extender.start()
    try:
        yield extender
    finally:
        extender.stop()


def extender_config(
    url: str,
    *,
    filter_verb: bool = True,
    prioritize_weight: int = 0,
    bind: bool = False,
    preempt: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """One `extenders[]` entry for the test extender at `url`."""
    config: dict[str, Any] = {"urlPrefix": url, **extra}
    if filter_verb:
        config["filterVerb"] = "filter"
    if prioritize_weight:
        config.update(prioritizeVerb="prioritize", weight=prioritize_weight)
    if bind:
        config["bindVerb"] = "bind"
    if preempt:
        config["preemptVerb"] = "preempt"
    return config

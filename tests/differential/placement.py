"""One case run against one scheduler on the shared apiserver: create, wait, observe, clean up.

Each run gets its own namespace and node names (`<prefix>-<name>`), so nothing of an earlier run
can be mistaken for this one's. Before the pending pod is created, a probe pod proves that the
scheduler's cache holds exactly this run's nodes (its FailedScheduling text counts them).
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from plugins.dynamic_resources.messages import DEALLOCATED
from tests.differential.cases import HOSTNAME
from tests.differential.cases import Case
from tests.differential.cases import Object
from tests.differential.devices import DEVICE_CLASS
from tests.differential.devices import IMPLICIT_PREFIX
from tests.e2e.api_client import ApiClient

EVENTS = "/apis/events.k8s.io/v1"
RESOURCE_API = "/apis/resource.k8s.io/v1"
TAINT_RULES = "/apis/resource.k8s.io/v1beta2/devicetaintrules"
POLL_S = 0.05
# Upper bounds for the scheduler to answer, not synchronisation delays.
ANSWER_TIMEOUT_S = 20.0
BARRIER_TIMEOUT_S = 60.0
# After a successful preemption the nomination and the victims' deletion follow the event.
PREEMPTION_TIMEOUT_S = 15.0
# What a FailedScheduling text says in place of the run's own namespace.
CASE_NAMESPACE = "<namespace>"
PROBE_LABEL = "differential.kube-pyscheduler.io/probe"
_NODE_COUNTS = re.compile(
    r"^0/(\d+) nodes are available: (?:(\d+) node\(s\) didn't match Pod's node affinity/selector)?"
)


class RunError(RuntimeError):
    """The scheduler did not answer, or the cluster refused an object."""


@dataclass
class Observation:
    """What one scheduler decided for the pending pod."""

    verdict: str  # "bound" or "unschedulable"
    node: str = ""
    message: str = ""
    # Where the first attempt's text was not the answer (its PostFilter took a claim's
    # allocation away, DEALLOCATED: the claim's update requeues the pod at once, and which of
    # the next attempt's Binding and this attempt's Event lands first is a race of a few
    # milliseconds) and the next attempt failed too: that attempt's text, from the pod's
    # PodScheduled condition.
    then: str = ""
    nominated: str = ""
    victims: list[str] = field(default_factory=list)

    def to_json(self) -> Object:
        return asdict(self)


def localize(case: Case, prefix: str) -> Case:
    """The case with every node name (and the names pointing at nodes) prefixed."""
    copied = copy.deepcopy(case)

    def named(name: str) -> str:
        return f"{prefix}-{name}"

    for node in copied.nodes:
        node["metadata"]["name"] = named(node["metadata"]["name"])
        node["metadata"]["labels"][HOSTNAME] = node["metadata"]["name"]
    for volume in copied.volumes:
        spec = volume["spec"]
        if volume["kind"] == "PersistentVolume":
            volume["metadata"]["name"] = named(volume["metadata"]["name"])
            for term in ((spec.get("nodeAffinity") or {}).get("required") or {}).get(
                "nodeSelectorTerms"
            ) or ():
                for requirement in term.get("matchExpressions") or ():
                    requirement["values"] = [named(v) for v in requirement["values"]]
        elif spec.get("volumeName"):
            spec["volumeName"] = named(spec["volumeName"])
    for obj in copied.devices:
        _localize_device_object(obj, named)
    for pod in copied.bound:
        pod["spec"]["nodeName"] = named(pod["spec"]["nodeName"])
    _localize_implicit_resource(copied.pending, named)
    required = ((copied.pending["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field_requirement in term.get("matchFields") or ():
            field_requirement["values"] = [named(v) for v in field_requirement["values"]]
    return copied


def _localize_implicit_resource(pod: Object, named: Callable[[str], str]) -> None:
    """The class's implicit extended resource name carries the class's name, the run's own."""
    implicit = IMPLICIT_PREFIX + DEVICE_CLASS
    spec = pod["spec"]
    for container in [*(spec.get("initContainers") or ()), *spec["containers"]]:
        for kind in ("requests", "limits"):
            amounts = (container.get("resources") or {}).get(kind) or {}
            if implicit in amounts:
                amounts[IMPLICIT_PREFIX + named(DEVICE_CLASS)] = amounts.pop(implicit)


def _localize_device_object(obj: Object, named: Callable[[str], str]) -> None:
    """Class, slice, rule and pool names, and the nodes they name, made this run's own
    (classes, slices and rules are cluster-scoped)."""
    spec = obj["spec"]
    if obj["kind"] in ("DeviceClass", "ResourceSlice", "DeviceTaintRule"):
        obj["metadata"]["name"] = named(obj["metadata"]["name"])
    if obj["kind"] == "DeviceTaintRule":
        spec["deviceSelector"]["pool"] = named(spec["deviceSelector"]["pool"])
        return
    if obj["kind"] == "ResourceSlice":
        spec["nodeName"] = named(spec["nodeName"])
        spec["pool"]["name"] = named(spec["pool"]["name"])
        return
    if obj["kind"] != "ResourceClaim":
        return
    for request in spec["devices"]["requests"]:
        for asked in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
            if asked["deviceClassName"] == DEVICE_CLASS:
                asked["deviceClassName"] = named(DEVICE_CLASS)
    allocation = (obj.get("status") or {}).get("allocation")
    if allocation:
        for result in allocation["devices"]["results"]:
            result["pool"] = named(result["pool"])
        for term in allocation["nodeSelector"]["nodeSelectorTerms"]:
            for requirement in term["matchFields"]:
                requirement["values"] = [named(v) for v in requirement["values"]]


def local_name(prefix: str, name: str) -> str:
    return name.removeprefix(f"{prefix}-")


class CaseRun:
    """Runs `case` for the scheduler named `scheduler_name` in namespace `namespace`."""

    def __init__(
        self, client: ApiClient, case: Case, *, prefix: str, namespace: str, scheduler_name: str
    ) -> None:
        self.client = client
        self.case = localize(case, prefix)
        self.prefix = prefix
        self.namespace = namespace
        self.scheduler_name = scheduler_name

    # ---- the run -----------------------------------------------------------------------

    def run(self) -> Observation:
        self._create("/api/v1/namespaces", _namespace(self.namespace))
        try:
            for volume in self.case.volumes:
                if volume["kind"] == "PersistentVolume":
                    self._create("/api/v1/persistentvolumes", volume)
                else:
                    claims = f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims"
                    self._create(claims, volume)
            for obj in self.case.devices:
                self._create_device_object(obj)
            for node in self.case.nodes:
                self._create("/api/v1/nodes", node)
            for pod in self.case.bound:
                self._create_pod(pod)
                if pod.get("status"):
                    self._set_status(pod["metadata"]["name"], pod["status"])
            self._wait_for_cache_of_this_run()
            self._create_pod(self.case.pending)
            return self._observe("pending")
        finally:
            self._clean_up()

    def _wait_for_cache_of_this_run(self) -> None:
        """Creates probe pods until one's FailedScheduling text counts exactly this run's nodes
        (all nodes = the run's nodes named by the probe's matchFields)."""
        names = [n["metadata"]["name"] for n in self.case.nodes]
        deadline = time.monotonic() + BARRIER_TIMEOUT_S
        attempt = 0
        last = ""
        while time.monotonic() < deadline:
            probe = f"probe-{attempt}"
            attempt += 1
            self._create_pod(_probe_pod(probe, names))
            last = self._wait_event(probe, deadline)
            self._delete_pod(probe)
            match = _NODE_COUNTS.match(last)
            if match and int(match[1]) == len(names) and int(match[2] or 0) == len(names):
                return
        raise RunError(f"{self.scheduler_name}: cache never showed this run's nodes: {last!r}")

    def _observe(self, name: str) -> Observation:
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while time.monotonic() < deadline:
            pod = self._get_pod(name)
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                return Observation("bound", node=local_name(self.prefix, node))
            message = self._first_event(name)
            if message is not None and DEALLOCATED not in message:
                return self._unschedulable(name, self._localized(message))
            then = _unscheduled_message(pod)
            if message is not None and then and DEALLOCATED not in then:
                # The attempt after the deallocation failed too: that is the answer. Its Event
                # is a series on the first one (an Event's note is not part of what makes two
                # alike), so its text is read from the pod's PodScheduled condition.
                return Observation(
                    "unschedulable", message=self._localized(message), then=self._localized(then)
                )
            time.sleep(POLL_S)
        raise RunError(f"{self.scheduler_name}: no answer for {self.namespace}/{name}")

    def _localized(self, message: str) -> str:
        """Each scheduler's run has a namespace of its own; a text naming it (a claim PreBind
        could not write, say) names the case's."""
        return message.replace(self.namespace, CASE_NAMESPACE)

    def _unschedulable(self, name: str, message: str) -> Observation:
        observation = Observation("unschedulable", message=message)
        # A FitError without a word from preemption: preemption found a node. (A failure of
        # the binding cycle, at PreBind say, is no FitError and preempts nothing.)
        fit_error = message.startswith("0/")
        if fit_error and "preemption:" not in message and self.case.pending["spec"].get("priority"):
            # Preemption found a candidate: the nomination follows the event, and the victims'
            # deletions run in the background. The pod's next attempt (the victims' updates
            # requeue it) fails again while they terminate; by then every deletion was sent.
            deadline = time.monotonic() + PREEMPTION_TIMEOUT_S
            while time.monotonic() < deadline:
                status = self._get_pod(name).get("status") or {}
                if status.get("nominatedNodeName") and len(self._events(name)) >= 2:
                    observation.nominated = local_name(self.prefix, status["nominatedNodeName"])
                    break
                time.sleep(POLL_S)
        observation.victims = sorted(
            p["metadata"]["name"]
            for p in self._pods()
            if p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] != name
        )
        return observation

    # ---- API helpers --------------------------------------------------------------------

    def _create(self, path: str, obj: Object) -> None:
        answer = self.client.post(path, obj)
        if answer.status != 201:
            raise RunError(f"creating {obj['kind']} {obj['metadata']['name']}: {answer}")

    def _create_device_object(self, obj: Object) -> None:
        if obj["kind"] == "DeviceClass":
            self._create(f"{RESOURCE_API}/deviceclasses", obj)
        elif obj["kind"] == "ResourceSlice":
            self._create(f"{RESOURCE_API}/resourceslices", obj)
        elif obj["kind"] == "DeviceTaintRule":
            self._create(TAINT_RULES, obj)
        else:
            claims = f"{RESOURCE_API}/namespaces/{self.namespace}/resourceclaims"
            self._create(claims, obj)
            if obj.get("status"):
                # Created without it, like a pod's: the status subresource takes the allocation.
                name = obj["metadata"]["name"]
                self._patch_status(f"{claims}/{name}/status", obj["status"], name)

    def _create_pod(self, pod: Object) -> None:
        pod = copy.deepcopy(pod)
        pod["metadata"]["namespace"] = self.namespace
        pod["spec"]["schedulerName"] = self.scheduler_name
        self._create(f"/api/v1/namespaces/{self.namespace}/pods", pod)

    def _set_status(self, name: str, status: Object) -> None:
        """The API drops a new pod's status; the status subresource takes it."""
        self._patch_status(f"/api/v1/namespaces/{self.namespace}/pods/{name}/status", status, name)

    def _patch_status(self, path: str, status: Object, name: str) -> None:
        answer = self.client.request(
            "PATCH", path, {"status": status}, content_type="application/merge-patch+json"
        )
        if answer.status != 200:
            raise RunError(f"setting the status of {name}: {answer}")

    def _get_pod(self, name: str) -> Object:
        answer = self.client.get(f"/api/v1/namespaces/{self.namespace}/pods/{name}")
        if answer.status != 200:
            raise RunError(f"reading pod {name}: {answer}")
        body: Object = answer.body
        return body

    def _pods(self) -> list[Object]:
        answer = self.client.get(f"/api/v1/namespaces/{self.namespace}/pods")
        items: list[Object] = answer.body["items"]
        return items

    def _events(self, name: str) -> list[tuple[str, str]]:
        """(creation time, note) of the pod's FailedScheduling events, oldest first."""
        answer = self.client.get(f"{EVENTS}/namespaces/{self.namespace}/events")
        return sorted(
            (str(e.get("eventTime") or ""), str(e.get("note") or ""))
            for e in answer.body["items"]
            if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == name
        )

    def _first_event(self, name: str) -> str | None:
        events = self._events(name)
        return events[0][1] if events else None

    def _wait_event(self, name: str, deadline: float) -> str:
        while time.monotonic() < deadline:
            message = self._first_event(name)
            if message is not None:
                return message
            time.sleep(POLL_S)
        return ""

    def _delete_pod(self, name: str) -> None:
        self.client.request(
            "DELETE",
            f"/api/v1/namespaces/{self.namespace}/pods/{name}",
            {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
        )

    def _clean_up(self) -> None:
        for pod in self._pods():
            self._delete_pod(pod["metadata"]["name"])
        for node in self.case.nodes:
            self.client.delete(f"/api/v1/nodes/{node['metadata']['name']}")
        for obj in self.case.devices:
            # Claims stay in the run's namespace; classes, slices and rules are cluster-scoped.
            if obj["kind"] == "DeviceClass":
                self.client.delete(f"{RESOURCE_API}/deviceclasses/{obj['metadata']['name']}")
            elif obj["kind"] == "ResourceSlice":
                self.client.delete(f"{RESOURCE_API}/resourceslices/{obj['metadata']['name']}")
            elif obj["kind"] == "DeviceTaintRule":
                self.client.delete(f"{TAINT_RULES}/{obj['metadata']['name']}")
        for volume in self.case.volumes:
            # Protection finalizers keep them (no controller removes them); names never recur.
            if volume["kind"] == "PersistentVolume":
                self.client.delete(f"/api/v1/persistentvolumes/{volume['metadata']['name']}")


def _unscheduled_message(pod: Object) -> str:
    """The message of the pod's PodScheduled=False condition, "" without one."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or "")
    return ""


def _namespace(name: str) -> Object:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _probe_pod(name: str, node_names: list[str]) -> Object:
    """Names this run's nodes and then fails on every one of them by its selector."""
    # The API allows one name per field requirement; terms are ORed.
    terms: Any = [
        {
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}],
            "matchExpressions": [{"key": PROBE_LABEL, "operator": "Exists"}],
        }
        for name in node_names
    ]
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "probe", "image": "registry.example/probe"}],
            "affinity": {"nodeAffinity": required},
            "tolerations": [{"operator": "Exists"}],
        },
    }

"""The JSON that kube-scheduler and an HTTP extender exchange (k8s.io/kube-scheduler/extender/v1).

Upstream's types carry no JSON tags, so the keys are the Go field names (`Pod`, `NodeNames`,
`FailedNodes`, ...) and an unset pointer is sent as `null`. Go's decoder matches keys without
regard to case, and extenders written against the documentation often answer `nodenames` or
`failedNodes`; answers are read the same forgiving way.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

# Extender scores range over [0, MAX_EXTENDER_PRIORITY]; the scheduler's over [0, 100].
MAX_EXTENDER_PRIORITY = 10


class WireError(ValueError):
    """An extender answered with JSON that does not have the shape of the expected type."""


def extender_args(
    pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], *, node_names_only: bool
) -> dict[str, Any]:
    """ExtenderArgs: the pod and either its candidate nodes' names (an extender keeping its own
    node cache) or the whole Node objects."""
    if node_names_only:
        names = [str((node.get("metadata") or {}).get("name", "")) for node in nodes]
        return {"Pod": pod, "Nodes": None, "NodeNames": names}
    return {"Pod": pod, "Nodes": {"metadata": {}, "items": list(nodes)}, "NodeNames": None}


def binding_args(namespace: str, name: str, uid: str, node: str) -> dict[str, Any]:
    """ExtenderBindingArgs."""
    return {"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node}


def preemption_args(
    pod: Mapping[str, Any],
    victims: Mapping[str, tuple[Sequence[Mapping[str, Any]], int]],
    *,
    uids_only: bool,
) -> dict[str, Any]:
    """ExtenderPreemptionArgs: the pod and, for each candidate node, its victims and how many
    budgets they break; the victims as UIDs (MetaVictims) to an extender keeping its own node
    cache, else as whole Pod objects."""
    if uids_only:
        meta = {
            node: {"Pods": [{"UID": _uid(p)} for p in pods], "NumPDBViolations": violations}
            for node, (pods, violations) in victims.items()
        }
        return {"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    full = {
        node: {"Pods": list(pods), "NumPDBViolations": violations}
        for node, (pods, violations) in victims.items()
    }
    return {"Pod": pod, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}


def _uid(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


@dataclass(frozen=True, slots=True)
class MetaVictims:
    """A node's victims as an extender names them back: pod UIDs, in its order."""

    uids: tuple[str, ...]
    num_pdb_violations: int


@dataclass(frozen=True, slots=True)
class FilterResult:
    """ExtenderFilterResult. `node_names` is None when the answer named no list of either
    kind; `nodes` is the list of Node objects when one was sent back."""

    node_names: tuple[str, ...] | None
    nodes: tuple[Mapping[str, Any], ...] | None
    failed: Mapping[str, str] = field(default_factory=dict)
    failed_and_unresolvable: Mapping[str, str] = field(default_factory=dict)
    error: str = ""


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """Go's rule: an exact key wins, else the first key equal to it ignoring case."""
    if key in obj:
        return obj[key]
    folded = key.casefold()
    for candidate, value in obj.items():
        if isinstance(candidate, str) and candidate.casefold() == folded:
            return value
    return None


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WireError(f"{what}: expected an object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        str: "a string",
        int: "a number",
        float: "a number",
        list: "an array",
    }.get(type(value), "an object")


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    mapping = _object(value, what)
    result: dict[str, str] = {}
    for key, text in mapping.items():
        if not isinstance(text, str):
            raise WireError(f"{what}[{key!r}]: expected a string, got {_kind(text)}")
        result[str(key)] = text
    return result


def _string(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(f"{what}: expected a string, got {_kind(value)}")
    return value


def parse_filter_result(answer: Any) -> FilterResult:
    body = _object(answer, "ExtenderFilterResult")
    names_value = _get(body, "NodeNames")
    names: tuple[str, ...] | None = None
    if names_value is not None:
        if not isinstance(names_value, list) or not all(isinstance(n, str) for n in names_value):
            raise WireError("ExtenderFilterResult.NodeNames: expected an array of strings")
        names = tuple(names_value)
    nodes: tuple[Mapping[str, Any], ...] | None = None
    nodes_value = _get(body, "Nodes")
    if nodes_value is not None:
        items = _get(_object(nodes_value, "ExtenderFilterResult.Nodes"), "items")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise WireError("ExtenderFilterResult.Nodes.items: expected an array")
        nodes = tuple(_object(item, "ExtenderFilterResult.Nodes.items[]") for item in items)
    return FilterResult(
        node_names=names,
        nodes=nodes,
        failed=_string_map(_get(body, "FailedNodes"), "ExtenderFilterResult.FailedNodes"),
        failed_and_unresolvable=_string_map(
            _get(body, "FailedAndUnresolvableNodes"),
            "ExtenderFilterResult.FailedAndUnresolvableNodes",
        ),
        error=_string(_get(body, "Error"), "ExtenderFilterResult.Error"),
    )


def parse_host_priorities(answer: Any) -> list[tuple[str, int]]:
    """HostPriorityList: (host, score) in the order sent; null is an empty list, as in Go."""
    if answer is None:
        return []
    if not isinstance(answer, list):
        raise WireError(f"HostPriorityList: expected an array, got {_kind(answer)}")
    result: list[tuple[str, int]] = []
    for index, item in enumerate(answer):
        entry = _object(item, f"HostPriorityList[{index}]")
        host = _string(_get(entry, "Host"), f"HostPriorityList[{index}].Host")
        score = _get(entry, "Score")
        if score is None:
            score = 0
        if isinstance(score, bool) or not isinstance(score, int):
            raise WireError(f"HostPriorityList[{index}].Score: expected an integer")
        result.append((host, score))
    return result


def parse_preemption_result(answer: Any) -> dict[str, MetaVictims]:
    """ExtenderPreemptionResult: the nodes the extender keeps as candidates, each with the
    victims it names (always as MetaVictims, whichever form it was sent)."""
    what = "ExtenderPreemptionResult.NodeNameToMetaVictims"
    nodes = _get(_object(answer, "ExtenderPreemptionResult"), "NodeNameToMetaVictims")
    if nodes is None:
        return {}
    result: dict[str, MetaVictims] = {}
    for node, value in _object(nodes, what).items():
        entry = _object(value, f"{what}[{node!r}]")
        pods = _get(entry, "Pods")
        if pods is None:
            pods = []
        if not isinstance(pods, list):
            raise WireError(f"{what}[{node!r}].Pods: expected an array, got {_kind(pods)}")
        uids = tuple(
            _string(
                _get(_object(pod, f"{what}[{node!r}].Pods[{i}]"), "UID"),
                f"{what}[{node!r}].Pods[{i}].UID",
            )
            for i, pod in enumerate(pods)
        )
        violations = _get(entry, "NumPDBViolations")
        if violations is None:
            violations = 0
        if isinstance(violations, bool) or not isinstance(violations, int):
            raise WireError(f"{what}[{node!r}].NumPDBViolations: expected an integer")
        result[str(node)] = MetaVictims(uids, violations)
    return result


def parse_binding_result(answer: Any) -> str:
    """ExtenderBindingResult: its Error, empty when the binding was made."""
    return _string(_get(_object(answer, "ExtenderBindingResult"), "Error"), "Error")

"""`--feature-gates`, `--emulated-version` and `--min-compatibility-version`, as kube-scheduler
v1.36 parses them, checked against what this scheduler implements.

kube-pyscheduler implements v1.36's default behaviour, so a gate set to its v1.36 default is
accepted (it changes nothing, as upstream), and a gate set the other way fails start-up naming
the gate: silently scheduling as if it were off would be worse. A name kube-scheduler does not
know fails as upstream fails it.

The gates in `HONOURED` are honoured either way: ComponentFlagz and ComponentStatusz serve or
withhold `/flagz` and `/statusz`; OpportunisticBatching lets a pod like the one before it take
the next node of that pod's ranking unscored (`runtime/batching.py`), or, off, scores every pod;
DRADeviceTaintRules, on, has DynamicResources watch `resource.k8s.io/v1beta2` DeviceTaintRules
and treat each selected device as carrying the rule's taint (`plugins/dynamic_resources/
taint_rules.py`); TaintTolerationComparisonOperators, on, lets a toleration with operator Lt or
Gt tolerate a taint whose value, read as an integer, is less or greater than its own, in
TaintToleration and in PodTopologySpread's nodeTaintsPolicy (`objects/taints.py`); off, such a
toleration tolerates nothing, as upstream; StorageCapacityScoring, on, has VolumeBinding score
nodes by how full their storage of each class would be with the pod's volumes (`VolumeBindingArgs.
shape`, defaulted under the gate, refused without it; `plugins/volume_binding/scoring.py`);
VolumeLimitScaling, on, keeps a pod off a node whose
CSINode lacks a driver of its volumes when that driver's CSIDriver sets
`preventPodSchedulingIfMissing` (`plugins/node_volume_limits`).

The gates in `EITHER_WAY` choose nothing about scheduling, only how the client talks to the API
server, and this scheduler does it one way whatever they say, so both settings are accepted:
WatchListClient picks whether client-go's informers take their first list as one watch stream
or page by page; kube-pyscheduler's informers always page, because on a real API server the
stream cost more of the scheduler's CPU and no start-up time (`docs/architecture.md`,
"Start-up").
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from scheduler.app.go_text import GO_BOOLS
from scheduler.config.feature_gates import FeatureGates
from scheduler.config.feature_gates import known_gates
from scheduler.framework.errors import ConfigError
from scheduler.observability.component_metrics import KUBERNETES_RELEASE

# The minor release gates and version flags are checked against: that of the release we follow.
FOLLOWED_RELEASE = KUBERNETES_RELEASE.removeprefix("v").rpartition(".")[0]
_COMPONENT = "kube"
# How far back --min-compatibility-version may reach: kube's three minor releases.
_COMPATIBILITY_SPAN = 3


EITHER_WAY = frozenset({"WatchListClient"})

# Gates this scheduler honours both ways.
HONOURED = frozenset(
    {
        "ComponentFlagz",
        "ComponentStatusz",
        "DRADeviceTaintRules",
        "OpportunisticBatching",
        "StorageCapacityScoring",
        "TaintTolerationComparisonOperators",
        "VolumeLimitScaling",
    }
)


# Kinds an API server serves only while a gate is on. A scenario holding one under the gate at
# its default (off) would be simulated as if the object were not there; it is refused instead.
GATED_KINDS = {"DeviceTaintRule": "DRADeviceTaintRules"}


def check_gated_kinds(objects: Iterable[Mapping[str, Any]], features: FeatureGates) -> None:
    """Refuse the first object of a kind whose gate is off, naming the object and the flag."""
    for obj in objects:
        kind = str(obj.get("kind") or "")
        gate = GATED_KINDS.get(kind)
        if gate is not None and not features.enabled(gate):
            name = (obj.get("metadata") or {}).get("name") or ""
            raise ConfigError(
                f'{kind} "{name}": served and read only with --feature-gates={gate}=true '
                f"(off by default in kube-scheduler {FOLLOWED_RELEASE})"
            )


def parse_feature_gates(values: list[str]) -> dict[str, bool]:
    """`[component:]Name=bool` pairs, comma-separated, the flag repeatable; only the `kube`
    component exists for kube-scheduler."""
    gates: dict[str, bool] = {}
    for item in _items(values):
        key, sep, setting = item.partition("=")
        component, colon, name = key.strip().rpartition(":")
        if not colon:
            component, name = _COMPONENT, key.strip()
        if not sep or not name:
            raise ConfigError(f"--feature-gates: missing bool value for {item!r}")
        if component != _COMPONENT:
            raise ConfigError(f"--feature-gates: unknown component {component!r} in {item!r}")
        enabled = GO_BOOLS.get(setting.strip())
        if enabled is None:
            raise ConfigError(f"--feature-gates: invalid value of {name}={setting}")
        gates[name] = enabled
    return gates


def checked_feature_gates(values: list[str] | None) -> dict[str, bool]:
    """The gates a repeatable `--feature-gates` flag sets, each checked as start-up checks it."""
    gates = parse_feature_gates(values or [])
    check_feature_gates(gates)
    return gates


def check_feature_gates(gates: dict[str, bool]) -> None:
    if not gates:
        return
    known = known_gates()
    for name, enabled in sorted(gates.items()):
        gate = known.get(name)
        if gate is None:
            raise ConfigError(f"--feature-gates: unrecognized feature gate: {name}")
        if gate.locked and enabled != gate.default:
            raise ConfigError(
                f"--feature-gates: cannot set feature gate {name} to {str(enabled).lower()}, "
                f"feature is locked to {str(gate.default).lower()}"
            )
        if enabled != gate.default and name not in EITHER_WAY | HONOURED:
            raise ConfigError(
                f"--feature-gates: {name}={str(enabled).lower()} cannot apply: kube-pyscheduler "
                f"implements kube-scheduler {FOLLOWED_RELEASE} with every gate at its default "
                f"({name}={str(gate.default).lower()})"
            )


def feature_gate_warnings(gates: dict[str, bool]) -> list[str]:
    """What upstream warns of when a GA or deprecated gate is set: it is going away, and
    the flag with it."""
    known = known_gates()
    return [
        f"setting {'GA' if known[name].stage == 'GA' else 'deprecated'} feature gate "
        f"{name}={str(enabled).lower()}. It will be removed in a future release."
        for name, enabled in sorted(gates.items())
        if known[name].stage in ("GA", "DEPRECATED")
    ]


def feature_states(gates: dict[str, bool]) -> list[tuple[str, str, bool]]:
    """Every known gate as kubernetes_feature_enabled reports it: name, stage label and
    whether it is on."""
    return [
        (name, gate.stage_label, gates.get(name, gate.default))
        for name, gate in sorted(known_gates().items())
    ]


def check_emulated_version(values: list[str]) -> None:
    """`--emulated-version`: only the release we follow."""
    flag = "--emulated-version"
    for item, version in _kube_versions(flag, values):
        if version != FOLLOWED_RELEASE:
            raise ConfigError(
                f"{flag}: {item} cannot apply: kube-pyscheduler behaves as kube-scheduler "
                f"{FOLLOWED_RELEASE} only"
            )


def check_min_compatibility_version(values: list[str]) -> None:
    """`--min-compatibility-version`: any release upstream accepts with the emulated version
    (ours, the release we follow). It could only change the default of a gate whose spec names
    a minimum compatibility version, and no gate of v1.36 does, so it changes nothing."""
    flag = "--min-compatibility-version"
    major, minor = (int(part) for part in FOLLOWED_RELEASE.split("."))
    floor = f"{major}.{minor - _COMPATIBILITY_SPAN}"
    for item, version in _kube_versions(flag, values):
        parts = version.split(".")
        if len(parts) == 3 and parts[2] != "0":
            raise ConfigError(f"{flag}: patch version not allowed, got: {item}")
        given = tuple(int(part) if part.isdigit() else -1 for part in parts)
        lowest, highest = (major, minor - _COMPATIBILITY_SPAN), (major, minor)
        if len(given) not in (2, 3) or not lowest <= given[:2] <= highest:
            raise ConfigError(
                f"{flag}: minCompatibilityVersion version {version} is not between "
                f"[{floor}, {FOLLOWED_RELEASE}]"
            )


def _kube_versions(flag: str, values: list[str]) -> Iterator[tuple[str, str]]:
    """Each item of a version flag with its version, `v` dropped; only the `kube` component
    exists for kube-scheduler."""
    for item in _items(values):
        component, colon, version = item.rpartition("=")
        if not colon:
            component, version = _COMPONENT, item
        if component.strip() != _COMPONENT:
            raise ConfigError(f"{flag}: unknown component {component!r} in {item!r}")
        yield item, version.strip().removeprefix("v")


def _items(values: list[str]) -> Iterator[str]:
    """The comma-separated items of a repeatable flag's values, in order, blanks trimmed and
    empty items skipped."""
    for value in values:
        for part in value.split(","):
            item = part.strip()
            if item:
                yield item

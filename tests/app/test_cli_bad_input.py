"""Each kind of bad input, through the command line: one clear error naming the file and
position or the field, exit 2, within a CPU-time budget and bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.runtime.discovery import PluginRegistry
from tests.app.bad_input import EXIT_BAD_INPUT
from tests.app.bad_input import assert_clean_ending
from tests.app.bad_input import run_cli
from tests.app.bad_input import use_registry
from tests.app.bad_input import warm_up

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
NODE = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '%s', memory: 8Gi, pods: '10'}}\n"
)
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '%s'}}}]}\n"
)


def _with_tolerations(tolerations: str) -> bytes:
    pod = (POD % "1").replace("spec: {", f"spec: {{tolerations: {tolerations}, ")
    return (NODE % "4" + "---\n" + pod).encode()


LAUGHS = "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}' if i else 'lol'] * 10)}]\n" for i in range(10)
)

LAUGHS_INLINE = LAUGHS.rstrip("\n").replace("\n", ", ")


def _args(plugin: str, args: str) -> str:
    return f"profiles:\n- pluginConfig:\n  - name: {plugin}\n    args: {args}\n"


@pytest.fixture(scope="module", autouse=True)
def _registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_registry(monkeypatch, PluginRegistry.discover())
        warm_up(tmp_path_factory.mktemp("warm-up"))
        yield


def _run(tmp_path: Path, command: str, data: bytes) -> tuple[str, str]:
    path = tmp_path / "input.yaml"
    path.write_bytes(data)
    argv = [command, str(path)]
    if command == "simulate":
        argv += ["--no-progress", "--output", "json"]
    outcome = run_cli(argv)
    assert_clean_ending(outcome, str(path))
    assert outcome.code == EXIT_BAD_INPUT, outcome
    return outcome.stderr, str(path)


CONFIGS = {
    "invalid-utf8": (
        (HEADER + "profiles:\n- schedulerName: caf").encode() + b"\xe9\n",
        "input.yaml:4:21: not valid UTF-8 (byte 0xe9)",
    ),
    "alias-bomb": ((HEADER + LAUGHS).encode(), "aliases expand to more than 100000 nodes"),
    "alias-bomb-in-args": (
        (HEADER + _args("NodeAffinity", "{addedAffinity: {" + LAUGHS_INLINE + "}}")).encode(),
        "aliases expand to more than 100000 nodes",
    ),
    "alias-cycle": ((HEADER + "profiles: &p [*p]\n").encode(), "input.yaml:3:15:"),
    "nesting-2000": (
        (HEADER + "profiles: " + "[" * 2000 + "]" * 2000 + "\n").encode(),
        "nested deeper than 100 levels",
    ),
    "json-nesting-2000": (
        b'{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
        b' "profiles": ' + b"[" * 2000 + b"]" * 2000 + b"}",
        "nested deeper than 100 levels",
    ),
    "integer-of-5000-digits": (
        # Past int64 and float64 both, upstream's YAML library leaves it a string.
        (HEADER + "parallelism: " + "9" * 5000 + "\n").encode(),
        "parallelism: Input should be a valid integer",
    ),
    "parallelism-beyond-int32": (
        (HEADER + f"parallelism: {2**31}\n").encode(),
        "parallelism: Input should be less than or equal to 2147483647",
    ),
    "qps-1e300": (
        (HEADER + "clientConnection: {qps: 1.0e+300}\n").encode(),
        "clientConnection.qps: Input should be less than or equal to",
    ),
    "duration-beyond-go": (
        (HEADER + "leaderElection: {leaseDuration: 9999999999h}\n").encode(),
        'leaderElection.leaseDuration: time: invalid duration "9999999999h"',
    ),
    "hard-pod-affinity-weight-true": (
        (HEADER + _args("InterPodAffinity", "{hardPodAffinityWeight: true}")).encode(),
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Input should be a valid integer",
    ),
    "quoted-int": (
        (HEADER + _args("InterPodAffinity", '{hardPodAffinityWeight: "5"}')).encode(),
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Input should be a valid integer",
    ),
    "yes-for-a-bool": (
        (
            HEADER + _args("InterPodAffinity", '{ignorePreferredTermsOfExistingPods: "yes"}')
        ).encode(),
        "args.ignorePreferredTermsOfExistingPods: Input should be a valid boolean",
    ),
    "byte-order-mark-inside-the-file": (
        (HEADER + "\ufeffpercentageOfNodesToScore: 0\n").encode(),
        'strict decoding error: unknown field "["\\ufeffpercentageOfNodesToScore"]"',
    ),
    "int32-bound": (
        (HEADER + _args("DefaultPreemption", f"{{minCandidateNodesAbsolute: {2**31}}}")).encode(),
        "args.minCandidateNodesAbsolute: Input should be less than or equal to 2147483647",
    ),
}


@pytest.mark.parametrize(("data", "expected"), CONFIGS.values(), ids=CONFIGS.keys())
def test_bad_configurations(data: bytes, expected: str, tmp_path: Path) -> None:
    stderr, _ = _run(tmp_path, "validate-config", data)
    assert expected in stderr, stderr


SCENARIOS = {
    "invalid-utf8": ((NODE % "4").encode() + b"\xff\n", "input.yaml:5:1: not valid UTF-8"),
    "alias-bomb": (
        (NODE % "4" + "---\n" + LAUGHS).encode(),
        "aliases expand to more than 100000 nodes",
    ),
    "nesting-2000": (
        (NODE % "4").encode() + b"---\n" + b"[" * 2000 + b"]" * 2000 + b"\n",
        "input.yaml:6:101: nested deeper than 100 levels",
    ),
    "node-cpu-5Ei": (
        (NODE % "5Ei").encode(),
        "document 0: Node n1: status.allocatable.cpu: quantity '5Ei' is "
        "5764607523034234880000 millicores, more than an int64 holds",
    ),
    "node-cpu-1e300": (
        (NODE % "1e300").encode(),
        "document 0: Node n1: status.allocatable.cpu: quantity '1e300' is too large",
    ),
    "node-cpu-1e999999999": (
        (NODE % "1e999999999").encode(),
        "document 0: Node n1: status.allocatable.cpu: quantity '1e999999999' is too large",
    ),
    "pod-cpu-5Ei": (
        (NODE % "4" + "---\n" + POD % "5Ei").encode(),
        "document 1: Pod default/p1: container 'c' resources.requests.cpu: quantity '5Ei'",
    ),
    "pod-cpu-1e300": (
        (NODE % "4" + "---\n" + POD % "1e300").encode(),
        "document 1: Pod default/p1: container 'c' resources.requests.cpu: quantity '1e300'",
    ),
    "pod-priority-beyond-int32": (
        (
            NODE % "4" + "---\n" + (POD % "1").replace("spec: {", f"spec: {{priority: {2**31}, ")
        ).encode(),
        "document 1: Pod default/p1: spec.priority: 2147483648 does not fit in an int32",
    ),
    "spread-constraint-of-the-wrong-type": (
        (
            NODE % "4"
            + "---\n"
            + (POD % "1").replace("spec: {", "spec: {topologySpreadConstraints: [true], ")
        ).encode(),
        "document 1: Pod default/p1: spec.topologySpreadConstraints[0]: must be an object",
    ),
    "affinity-of-the-wrong-type": (
        (NODE % "4" + "---\n" + (POD % "1").replace("spec: {", "spec: {affinity: true, ")).encode(),
        "document 1: Pod default/p1: spec.affinity: must be an object",
    ),
    "pod-spec-not-an-object": (
        (NODE % "4" + "---\n" + (POD % "1").replace("spec: {", "spec: false\nx: {")).encode(),
        "document 1: Pod p1: spec: must be an object",
    ),
    "toleration-operator-unknown": (
        _with_tolerations("[{key: k, operator: Bogus}]"),
        "document 1: Pod default/p1: spec.tolerations[0].operator: Unsupported value: "
        '"Bogus": supported values: "Equal", "Exists"',
    ),
    "toleration-exists-with-a-value": (
        _with_tolerations("[{key: k, operator: Exists, value: v}]"),
        'document 1: Pod default/p1: spec.tolerations[0].operator: Invalid value: "v": '
        "value must be empty when `operator` is 'Exists'",
    ),
    "toleration-without-a-key-not-exists": (
        _with_tolerations("[{operator: Equal, value: v}]"),
        'document 1: Pod default/p1: spec.tolerations[0].operator: Invalid value: "Equal": '
        "operator must be Exists when `key` is empty",
    ),
    "toleration-seconds-without-no-execute": (
        _with_tolerations("[{key: k, effect: NoSchedule, tolerationSeconds: 5}]"),
        'document 1: Pod default/p1: spec.tolerations[0].effect: Invalid value: "NoSchedule": '
        "effect must be 'NoExecute' when `tolerationSeconds` is set",
    ),
    "toleration-effect-unknown": (
        _with_tolerations("[{key: k, effect: NoRun}]"),
        'document 1: Pod default/p1: spec.tolerations[0].effect: Unsupported value: "NoRun": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ),
    "deployment-toleration-operator-unknown": (
        (
            NODE % "4" + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
            "spec: {replicas: 1, selector: {matchLabels: {a: b}}, template: {metadata: "
            "{labels: {a: b}}, spec: {tolerations: [{key: k, operator: In}], "
            "containers: [{name: c, image: x}]}}}\n"
        ).encode(),
        "document 1: Deployment default/web: spec.template.spec.tolerations[0].operator: "
        'Unsupported value: "In"',
    ),
    "node-status-not-an-object": (
        (NODE % "4").replace("status:", "status: []\nx:").encode(),
        "document 0: Node n1: status: must be an object",
    ),
    "unknown-kind": (
        (NODE % "4").replace("kind: Node", "kind: Nodes").encode(),
        "document 0: cannot load Nodes n1 (apiVersion v1): unknown kind",
    ),
}


@pytest.mark.parametrize(("data", "expected"), SCENARIOS.values(), ids=SCENARIOS.keys())
def test_bad_scenarios(data: bytes, expected: str, tmp_path: Path) -> None:
    stderr, path = _run(tmp_path, "simulate", data)
    assert expected in stderr, stderr
    assert stderr.startswith(f"error: {path}"), stderr

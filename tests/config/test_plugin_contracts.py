"""Plugins are checked against the extension points they are enabled at, before anything runs.

Includes the conformance test: every registered plugin (in-tree, the example package, the test
plugins) keeps the contract at every extension point it implements.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from scheduler.app.cli import main
from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.contract import contract_problems
from scheduler.framework.contract import extension_problems
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeHandle
from tests.fault_plugin import BREAKER_SPEC
from tests.fault_plugin import SPEC as FAULTY_SPEC

EXAMPLE_SRC = Path(__file__).resolve().parents[2] / "examples" / "demo-plugin" / "src"


class ScoreWithoutExtensions:
    name = "ScoreWithoutExtensions"

    def __init__(self, args: None, handle: object) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, Status()


class FilterWithTheWrongSignature:
    name = "FilterWithTheWrongSignature"

    def __init__(self, args: None, handle: object) -> None:
        pass

    def filter(self, pod: Pod) -> Status:
        return Status()


class SynchronousPreBind:
    name = "SynchronousPreBind"

    def __init__(self, args: None, handle: object) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


class NormalizerWithoutNormalize:
    name = "NormalizerWithoutNormalize"

    def __init__(self, args: None, handle: object) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, Status()

    def score_extensions(self) -> object:
        return object()


NO_EXTENSIONS = PluginSpec("ScoreWithoutExtensions", ScoreWithoutExtensions)
WRONG_SIGNATURE = PluginSpec("FilterWithTheWrongSignature", FilterWithTheWrongSignature)
SYNC_PRE_BIND = PluginSpec("SynchronousPreBind", SynchronousPreBind)


def _validate(tmp_path: Path, spec_attr: str, field: str, name: str) -> int:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: s\n"
        f"  plugins: {{{field}: {{enabled: [{{name: {name}}}]}}}}\n"
    )
    return main(["validate-config", str(config), "--plugin", f"{__name__}:{spec_attr}"])


@pytest.mark.parametrize(
    ("spec_attr", "field", "name", "expected"),
    [
        (
            "NO_EXTENSIONS",
            "score",
            "ScoreWithoutExtensions",
            "is enabled at Score but has no score_extensions() method",
        ),
        (
            "WRONG_SIGNATURE",
            "filter",
            "FilterWithTheWrongSignature",
            "has filter(self, pod: ",
        ),
        ("SYNC_PRE_BIND", "preBind", "SynchronousPreBind", "must define pre_bind with async def"),
    ],
)
def test_validate_config_names_the_plugin_and_the_method(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    spec_attr: str,
    field: str,
    name: str,
    expected: str,
) -> None:
    assert _validate(tmp_path, spec_attr, field, name) == 2
    err = capsys.readouterr().err
    assert f"profiles[0].plugins.{field}: " in err
    assert f'plugin "{name}" from a plugin registered in code or with --plugin' in err
    assert expected in err


def test_the_wrong_signature_message_says_how_the_scheduler_calls_it() -> None:
    [problem] = contract_problems(FilterWithTheWrongSignature, "Filter")
    assert problem == (
        "is enabled at Filter but has filter(self, pod: 'Pod') -> 'Status', "
        "but the scheduler calls filter(state, pod, node_info)"
    )


def test_an_extension_object_without_its_method_is_refused() -> None:
    plugin = NormalizerWithoutNormalize(None, None)
    assert extension_problems(plugin, "Score") == [
        "returns from score_extensions() an object that has no "
        "normalize_score(state, pod, table, rows, scores) method"
    ]


def _every_registered_plugin() -> list[PluginSpec]:
    registry = PluginRegistry.discover()
    specs = [registry[name] for name in registry]
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(EXAMPLE_SRC))
        demo = importlib.import_module("kube_pyscheduler_demo")
    return [*specs, demo.SPEC, FAULTY_SPEC, BREAKER_SPEC]


@pytest.mark.parametrize("spec", _every_registered_plugin(), ids=lambda spec: spec.name)
def test_every_registered_plugin_keeps_the_contract(spec: PluginSpec) -> None:
    for point in spec.extension_points:
        assert contract_problems(spec.plugin_class, point) == [], point
    plugin = spec.create(spec.default_args(), FakeHandle())
    assert plugin.name == spec.name
    for point in spec.extension_points:
        assert extension_problems(plugin, point) == [], point

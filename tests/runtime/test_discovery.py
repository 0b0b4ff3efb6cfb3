"""Plugin discovery through entry points: lazy loading, and failures that name the package."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.framework.errors import PluginLoadError
from scheduler.runtime.discovery import PluginRegistry
from scheduler.runtime.discovery import load_reference

GROUP = "kube_pyscheduler.plugins"


def _distribution(site: Path, name: str, entries: dict[str, str], modules: dict[str, str]) -> None:
    """An installed distribution as pip leaves it: a dist-info with entry points, and code."""
    info = site / f"{name.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}\n")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.startswith("fake_plugin_")]:
            del sys.modules[module]


GOOD = """
from scheduler.framework import PluginSpec, Status

class Good:
    name = "FakeGood"
    def __init__(self, args, handle):
        pass
    def filter(self, state, pod, node_info):
        return Status()

SPEC = PluginSpec(name="FakeGood", plugin_class=Good)
"""


def test_a_broken_plugin_names_its_distribution_only_when_used(site: Path) -> None:
    _distribution(
        site,
        "acme-scheduling",
        {"FakeGood": "fake_plugin_good:SPEC", "FakeBroken": "fake_plugin_broken:SPEC"},
        {"fake_plugin_good": GOOD, "fake_plugin_broken": "raise ImportError('no gpu library')\n"},
    )
    registry = PluginRegistry.discover()
    # Listed without importing anything: a broken plugin nobody uses costs nothing.
    assert "FakeBroken" in registry and "FakeGood" in registry
    assert "fake_plugin_broken" not in sys.modules
    assert registry["FakeGood"].extension_points == ["Filter"]
    with pytest.raises(PluginLoadError) as failure:
        registry["FakeBroken"]
    message = str(failure.value)
    assert "acme-scheduling 1.2.3" in message
    assert "no gpu library" in message


def test_an_entry_point_must_point_at_a_matching_spec(site: Path) -> None:
    _distribution(
        site,
        "acme-misnamed",
        {"Renamed": "fake_plugin_good:SPEC", "NotASpec": "fake_plugin_good:Good"},
        {"fake_plugin_good": GOOD},
    )
    registry = PluginRegistry.discover()
    with pytest.raises(PluginLoadError, match=r"registered as 'Renamed'.*named 'FakeGood'"):
        registry["Renamed"]
    with pytest.raises(PluginLoadError, match="does not point at a PluginSpec"):
        registry["NotASpec"]


def test_autoload_off_keeps_only_explicit_plugins(site: Path) -> None:
    _distribution(
        site, "acme-good", {"FakeGood": "fake_plugin_good:SPEC"}, {"fake_plugin_good": GOOD}
    )
    registry = PluginRegistry.discover(["fake_plugin_good:SPEC"], autoload=False)
    assert list(registry) == ["FakeGood"]
    assert "NodeResourcesFit" not in registry


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("no_colon", "expected the form module:ATTRIBUTE"),
        ("fake_plugin_missing:SPEC", "ModuleNotFoundError"),
        ("fake_plugin_good:NOPE", "AttributeError"),
    ],
)
def test_bad_plugin_references(site: Path, reference: str, expected: str) -> None:
    (site / "fake_plugin_good.py").write_text(GOOD)
    with pytest.raises(PluginLoadError, match=expected):
        load_reference(reference)

"""Public test kit: builders, a fake clock and small fixtures for plugin authors and our tests."""

from scheduler.testing.builders import NodeBuilder
from scheduler.testing.builders import PodBuilder
from scheduler.testing.builders import make_node
from scheduler.testing.builders import make_pod
from scheduler.testing.fake_clock import FakeClock
from scheduler.testing.plugin_harness import FakeHandle
from scheduler.testing.plugin_harness import build_table

__all__ = [
    "FakeClock",
    "FakeHandle",
    "NodeBuilder",
    "PodBuilder",
    "build_table",
    "make_node",
    "make_pod",
]

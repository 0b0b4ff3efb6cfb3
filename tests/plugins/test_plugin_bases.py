"""NoArgsPlugin and HandleOnlyPlugin: the constructor the scheduler calls, inherited."""

from __future__ import annotations

from plugins.helpers.plugin_bases import HandleOnlyPlugin
from plugins.helpers.plugin_bases import NoArgsPlugin
from scheduler.framework import PluginSpec
from scheduler.testing import FakeHandle


class Quiet(NoArgsPlugin):
    name = "Quiet"


class Reader(HandleOnlyPlugin):
    name = "Reader"

    def handle(self) -> object:
        return self._handle


def test_no_args_plugin_is_built_from_none_and_a_handle() -> None:
    plugin = PluginSpec(name="Quiet", plugin_class=Quiet).create(None, FakeHandle())
    assert isinstance(plugin, Quiet)
    assert vars(plugin) == {}


def test_handle_only_plugin_keeps_the_handle() -> None:
    handle = FakeHandle()
    plugin = PluginSpec(name="Reader", plugin_class=Reader).create(None, handle)
    assert isinstance(plugin, Reader)
    assert plugin.handle() is handle

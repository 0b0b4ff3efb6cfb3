"""Bases for plugins that need little of what they are constructed with.

The scheduler constructs every plugin as `plugin_class(args, handle)`. A plugin without args
(its spec has no args model, so `args` is always None) that reads nothing through the handle,
or only the handle, inherits its constructor from here instead of restating it.
"""

from __future__ import annotations

from scheduler.framework import Handle
from scheduler.framework import PluginArgs


class NoArgsPlugin:
    """A plugin with no args that needs nothing from the scheduler."""

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle


class HandleOnlyPlugin:
    """A plugin with no args that works through the scheduler's handle, kept as `_handle`."""

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle

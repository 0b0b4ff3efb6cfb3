"""Plugin discovery: find entry points, load the ones a profile names, validate, register.

Entry points in the group `kube_pyscheduler.plugins` are listed eagerly (cheap, sorted by name
for determinism) but imported only when asked for, so a broken plugin that no profile uses
cannot stop the scheduler. A plugin that is used and fails to load names its distribution.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from importlib.metadata import EntryPoint
from importlib.metadata import entry_points

from scheduler.framework.errors import PluginLoadError
from scheduler.framework.spec import PluginSpec

ENTRY_POINT_GROUP = "kube_pyscheduler.plugins"


def _distribution(entry: EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def _origin(name: str, entry: EntryPoint) -> str:
    # Only for messages: naming the distribution reads its metadata from disk, which start-up
    # would otherwise pay for every plugin it loads.
    return f"plugin {name!r} from {_distribution(entry)}"


def _check_spec(spec: object, origin: Callable[[], str], expected_name: str | None) -> PluginSpec:
    """`spec` if it is a usable PluginSpec; `origin` names where it came from, in the error."""
    if not isinstance(spec, PluginSpec):
        raise PluginLoadError(
            f"{origin()} does not point at a PluginSpec (got {type(spec).__name__})"
        )
    if expected_name is not None and spec.name != expected_name:
        raise PluginLoadError(
            f"{origin()} is registered as {expected_name!r} but its PluginSpec is named "
            f"{spec.name!r}"
        )
    if not spec.extension_points:
        raise PluginLoadError(f"{origin()}: plugin {spec.name!r} implements no extension point")
    return spec


def load_reference(reference: str) -> PluginSpec:
    """Load a `module:ATTRIBUTE` reference given on the command line (--plugin)."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise PluginLoadError(f"--plugin {reference!r}: expected the form module:ATTRIBUTE")
    try:
        module = importlib.import_module(module_name)
        spec = getattr(module, attribute)
    except Exception as exc:
        raise PluginLoadError(f"--plugin {reference!r}: {type(exc).__name__}: {exc}") from exc
    return _check_spec(spec, lambda: f"--plugin {reference!r}", None)


class PluginRegistry(Mapping[str, PluginSpec]):
    """Plugin name -> PluginSpec, loading each entry point on first access."""

    def __init__(
        self,
        entries: Mapping[str, EntryPoint] | None = None,
        specs: Sequence[PluginSpec] = (),
    ) -> None:
        self._entries = dict(sorted((entries or {}).items()))
        self._loaded: dict[str, PluginSpec] = {}
        for spec in specs:
            self._loaded[spec.name] = spec

    @classmethod
    def discover(cls, extra: Sequence[str] = (), *, autoload: bool = True) -> PluginRegistry:
        """Installed entry points (unless autoload is off) plus `--plugin` references."""
        entries: dict[str, EntryPoint] = {}
        if autoload:
            for entry in entry_points(group=ENTRY_POINT_GROUP):
                if entry.name in entries:
                    raise PluginLoadError(
                        f"plugin {entry.name!r} is registered twice: by "
                        f"{_distribution(entries[entry.name])} and by {_distribution(entry)}"
                    )
                entries[entry.name] = entry
        return cls(entries, [load_reference(ref) for ref in extra])

    def add(self, spec: PluginSpec) -> None:
        """Register a plugin given in code (tests, embedding); it must not shadow another."""
        if spec.name in self:
            raise PluginLoadError(f"plugin {spec.name!r} is already registered")
        self._loaded[_check_spec(spec, lambda: f"plugin {spec.name!r}", spec.name).name] = spec

    def __getitem__(self, name: str) -> PluginSpec:
        spec = self._loaded.get(name)
        if spec is not None:
            return spec
        entry = self._entries.get(name)
        if entry is None:
            raise KeyError(name)
        try:
            loaded = entry.load()
        except Exception as exc:
            raise PluginLoadError(
                f"{_origin(name, entry)} failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        spec = _check_spec(loaded, lambda: _origin(name, entry), name)
        self._loaded[name] = spec
        return spec

    def origin(self, name: str) -> str:
        """Where plugin `name` comes from, for messages: its distribution, or "code"."""
        entry = self._entries.get(name)
        if entry is not None:
            return f"distribution {_distribution(entry)}"
        return "a plugin registered in code or with --plugin"

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._entries, *self._loaded}))

    def __len__(self) -> int:
        return len({*self._entries, *self._loaded})

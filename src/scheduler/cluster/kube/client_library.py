"""The parts of kubernetes_asyncio the adapter uses, imported without the rest of it.

`import kubernetes_asyncio.<anything>` runs the package's `__init__`, which imports every
generated API and model class: about a second of a daemon's start-up on a busy two-core
machine, spent on classes the adapter never builds (it sends and reads raw JSON). What the
adapter needs (the Configuration, the ApiClient with its aiohttp pool, the kubeconfig and
in-cluster loaders) only needs its own modules. So the three package modules on the way to them
are entered in `sys.modules` without running their `__init__`; each completes itself (runs it)
the first time something asks it for a name that is not one of its submodules, so code that
reads `kubernetes_asyncio.client.V1Pod` later still gets it. When kubernetes_asyncio is already
imported (tests that use its models), nothing is deferred.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

_DEFERRED_PACKAGES = (
    "kubernetes_asyncio",
    "kubernetes_asyncio.client",
    "kubernetes_asyncio.client.models",
)


def _defer(name: str) -> None:
    """Put package `name` in `sys.modules` unexecuted, to complete itself on first need."""
    if name in sys.modules:
        return
    parent, _, leaf = name.rpartition(".")
    search_path = sys.modules[parent].__path__ if parent else None
    spec = importlib.machinery.PathFinder.find_spec(name, search_path)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError(f"cannot find the package {name}", name=name)
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    locations = list(spec.submodule_search_locations)

    def complete(attribute: str) -> Any:
        # A submodule is the import system's to load: answering "no such attribute" makes
        # `from package import submodule` import it, without running the package's __init__.
        if importlib.machinery.PathFinder.find_spec(f"{name}.{attribute}", locations):
            raise AttributeError(attribute)
        if module.__dict__.pop("__getattr__", None) is None:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        loader.exec_module(module)
        try:
            return module.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    module.__getattr__ = complete  # type: ignore[method-assign]
    sys.modules[name] = module
    if parent:
        setattr(sys.modules[parent], leaf, module)


def _defer_packages() -> None:
    if _DEFERRED_PACKAGES[0] in sys.modules:
        return
    for name in _DEFERRED_PACKAGES:
        _defer(name)


_defer_packages()

# The imports below must follow the deferral: they are what it exists for.
from kubernetes_asyncio.client.api_client import ApiClient  # noqa: E402
from kubernetes_asyncio.client.configuration import Configuration  # noqa: E402


def _expose_to_loaders(package: ModuleType) -> None:
    # The loaders import these two names from the package itself; set, they do not make it
    # complete (which would import every model).
    for value in (ApiClient, Configuration):
        if value.__name__ not in package.__dict__:
            setattr(package, value.__name__, value)


_expose_to_loaders(sys.modules["kubernetes_asyncio.client"])

from kubernetes_asyncio.config import ConfigException  # noqa: E402
from kubernetes_asyncio.config import load_incluster_config  # noqa: E402
from kubernetes_asyncio.config import load_kube_config  # noqa: E402

__all__ = [
    "ApiClient",
    "ConfigException",
    "Configuration",
    "load_incluster_config",
    "load_kube_config",
]

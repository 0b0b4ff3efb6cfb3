"""YAML text read by upstream's rules (`yaml_rules`) with libyaml's parser where PyYAML was
built with it, the pure-Python one otherwise. At every start the daemon reads its kubeconfig,
the feature-gate table and its own effective configuration; the C parser does that about ten
times faster. (Configuration files go through `documents`, whose loader also bounds nesting
and aliases.)"""

from __future__ import annotations

from typing import Any

import yaml

from scheduler.config.yaml_rules import GoConstructor
from scheduler.config.yaml_rules import GoResolver


class _Loader(GoConstructor, GoResolver, yaml.SafeLoader):
    pass


_FAST_LOADER: Any = _Loader
if hasattr(yaml, "CSafeLoader"):

    class _CLoader(GoConstructor, GoResolver, yaml.CSafeLoader):
        pass

    _FAST_LOADER = _CLoader


def safe_load(text: str) -> Any:
    """`yaml.safe_load` by upstream's rules, faster; errors are PyYAML's own, marks included."""
    try:
        return yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        if _FAST_LOADER is _Loader:
            raise
        # libyaml marks some errors where it gave up (the end of the text for an unclosed
        # bracket); the pure-Python loader marks where the problem is. Only bad input pays.
        return yaml.load(text, Loader=_Loader)

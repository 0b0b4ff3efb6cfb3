"""YAML text read with libyaml's safe loader where PyYAML was built with it, the pure-Python one
otherwise. At every start the daemon reads its kubeconfig, the feature-gate table and its own
effective configuration; the C loader does that about ten times faster. (Configuration files
go through `documents`, whose loader also bounds nesting and aliases.)"""

from __future__ import annotations

from typing import Any

import yaml

_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """`yaml.safe_load`, faster; errors are `yaml.safe_load`'s own, marks included."""
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError:
        if _SAFE_LOADER is yaml.SafeLoader:
            raise
        # libyaml marks some errors where it gave up (the end of the text for an unclosed
        # bracket); the pure-Python loader marks where the problem is. Only bad input pays.
        return yaml.safe_load(text)

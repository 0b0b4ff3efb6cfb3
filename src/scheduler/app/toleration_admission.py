"""The API server's checks on a pod's tolerations, for pods no API server has seen.

The scheduler reads a toleration it does not understand as one that tolerates nothing, as
kube-scheduler does: the API server has already refused anything malformed. A scenario's pods
skip the API server, so `simulate` and `explain --scenario` make its checks themselves;
otherwise a misspelt operator would quietly tolerate nothing and the pod be placed as if the
toleration were absent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scheduler.framework.errors import ConfigError

# Lt and Gt are the API's only behind TaintTolerationComparisonOperators; the scheduler reads
# them as that gate says, so they are let through here. An unknown operator is told only of
# the two the API always takes, as the API server tells it.
OPERATORS = ("Equal", "Exists", "Lt", "Gt")
ALWAYS_SUPPORTED = ("Equal", "Exists")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _unsupported(path: str, value: str, supported: tuple[str, ...]) -> ConfigError:
    choices = ", ".join(json.dumps(choice) for choice in supported)
    return ConfigError(
        f"{path}: Unsupported value: {json.dumps(value)}: supported values: {choices}"
    )


def _invalid(path: str, value: Any, detail: str) -> ConfigError:
    return ConfigError(f"{path}: Invalid value: {json.dumps(value)}: {detail}")


def check_tolerations(spec: Mapping[str, Any], path: str) -> None:
    """Raise a ConfigError naming the first toleration field the API server would refuse;
    `path` is the pod spec's own ("spec", "spec.template.spec")."""
    for index, toleration in enumerate(spec.get("tolerations") or ()):
        where = f"{path}.tolerations[{index}]"
        if not isinstance(toleration, Mapping):
            raise ConfigError(f"{where}: must be an object")
        operator = str(toleration.get("operator") or "")
        effect = str(toleration.get("effect") or "")
        if not toleration.get("key") and operator != "Exists":
            raise _invalid(
                f"{where}.operator",
                operator,
                'operator must be Exists when `key` is empty, which means "match all values and'
                ' all keys"',
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            raise _invalid(
                f"{where}.effect",
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        if operator and operator not in OPERATORS:
            raise _unsupported(f"{where}.operator", operator, ALWAYS_SUPPORTED)
        if operator == "Exists" and toleration.get("value"):
            raise _invalid(
                f"{where}.operator",
                str(toleration["value"]),
                "value must be empty when `operator` is 'Exists'",
            )
        if effect and effect not in EFFECTS:
            raise _unsupported(f"{where}.effect", effect, EFFECTS)

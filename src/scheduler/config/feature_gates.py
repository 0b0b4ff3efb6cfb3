"""The feature gates kube-scheduler v1.36 knows, each with its stage and default, and the gates
in force for one scheduler: those defaults with `--feature-gates` over them. How the flag is
parsed, and which settings this scheduler accepts, is the app's business (`app.feature_gates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from functools import cache
from importlib import resources

from scheduler.config.yaml_text import safe_load


@dataclass(frozen=True, slots=True)
class Gate:
    stage: str  # ALPHA, BETA, GA or DEPRECATED
    default: bool
    # Refuses any value but its default (most GA gates).
    locked: bool = False

    @property
    def stage_label(self) -> str:
        """The stage as kubernetes_feature_enabled labels it: none for GA."""
        return "" if self.stage == "GA" else self.stage


@cache
def known_gates() -> dict[str, Gate]:
    text = resources.files("scheduler.config.data").joinpath("feature_gates_v1_36.yaml")
    data = safe_load(text.read_text())
    return {
        name: Gate(str(v["stage"]), bool(v["default"]), bool(v.get("locked", False)))
        for name, v in data["gates"].items()
    }


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates one scheduler runs with. `settings` are those `--feature-gates` set (already
    checked); every other gate is at its v1.36 default."""

    settings: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, name: str) -> bool:
        """Whether gate `name` (one kube-scheduler v1.36 knows) is on."""
        return self.settings.get(name, known_gates()[name].default)

"""What VolumeBinding carries through a cycle, from PreFilter to PreBind."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from plugins.volume_binding.binder import PodVolumes
from plugins.volume_binding.claims import PodVolumeClaims

STATE_KEY = "VolumeBinding"


@dataclass(slots=True)
class StateData:
    """Shared, not copied, when the cycle state is cloned: Filter fills it per node and
    Reserve, PreBind and Unreserve read the chosen node's entry."""

    claims: PodVolumeClaims
    volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

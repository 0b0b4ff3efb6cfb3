"""The API resources DynamicResources reads, and the fixed names of the resource.k8s.io/v1 API
it relies on."""

from __future__ import annotations

from typing import Final

RESOURCE_CLAIMS: Final = "resourceclaims"
RESOURCE_CLAIM_TEMPLATES: Final = "resourceclaimtemplates"
RESOURCE_SLICES: Final = "resourceslices"
DEVICE_CLASSES: Final = "deviceclasses"
# resource.k8s.io/v1beta2, watched only with the DRADeviceTaintRules feature gate on.
DEVICE_TAINT_RULES: Final = "devicetaintrules"

# The finalizer that keeps an allocated claim until its devices are released.
CLAIM_FINALIZER: Final = "resource.kubernetes.io/delete-protection"
# The longest firstAvailable list; Score gives (this - index) for the alternative chosen.
FIRST_AVAILABLE_MAX_SIZE: Final = 8

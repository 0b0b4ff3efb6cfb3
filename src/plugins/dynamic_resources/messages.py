"""The texts DynamicResources reports, worded as kube-scheduler v1.36 words them so pod
conditions, Events and `explain` read the same."""

from __future__ import annotations

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE_ON_NODE = "resourceclaim not available on the node"
# Why a pool is not given from ("resource pool <driver>/<pool> is ...").
POOL_BEING_UPDATED = "currently being updated"
POOL_INVALID = "currently invalid"
# No allocation on the node, which sees a pool whose slices contradict each other.
INVALID_POOLS = "invalid resource pools were encountered"
ALLOCATION_NOT_FOUND = "claim allocation not found for node"
# PostFilter outcomes.
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"
STILL_NOT_SCHEDULABLE = "still not schedulable"
# The pod's extended resources: a claim an earlier attempt created stands in the way (PostFilter
# deletes it), or the pod asks for one that neither the node nor any DeviceClass provides.
STALE_EXTENDED_CLAIM = "cannot schedule extended resource claim"
EXTENDED_CLAIM_DELETED = "deletion of ResourceClaim completed"
CANNOT_FIT_RESOURCE = "cannot fit resource"
# The cycle state's error for a key never written (PreFilter did not get to this plugin).
STATE_NOT_FOUND = "not found"


def claim_not_created(namespace: str, pod: str) -> str:
    return f'pod "{namespace}/{pod}": ResourceClaim not created yet'


def unsupported_pod_claim(namespace: str, pod: str, entry: str) -> str:
    return (
        f'pod "{namespace}/{pod}", spec.resourceClaim "{entry}": '
        "none of the supported fields are set"
    )


def claim_not_found(namespace: str, name: str) -> str:
    """Upstream looks claims up in its assume cache, whose miss reads like this."""
    return f'could not find ResourceClaim "{namespace}/{name}"'


def claim_being_deleted(name: str) -> str:
    return f'resourceclaim "{name}" is being deleted'


def not_owner(claim_namespace: str, claim: str, namespace: str, pod: str) -> str:
    return (
        f"ResourceClaim {claim_namespace}/{claim} was not created for Pod "
        f"{namespace}/{pod} (Pod is not owner)"
    )


def pending_allocation(namespace: str, claim: str) -> str:
    return f"resource claim {namespace}/{claim} is in the process of being allocated"


def class_missing(request: str, device_class: str) -> str:
    return f"request {request}: device class {device_class} does not exist"


def unsupported_request(request: str) -> str:
    return f"request {request}: unsupported request type"


def unknown_request_type(namespace: str, claim: str, request: str) -> str:
    return f"resource claim {namespace}/{claim}, request {request}: unknown request type"


def extended_claim_not_created(namespace: str, error: str) -> str:
    # Upstream names the claim before the server named it: "<namespace>/".
    return f"create claim for extended resources {namespace}/: {error}"


def extended_status_not_written(namespace: str, pod: str, error: str) -> str:
    return f"update pod {namespace}/{pod} ExtendedResourceClaimStatus: {error}"


def no_request_mappings(namespace: str, pod: str) -> str:
    return (
        f"nil or empty request mappings, no update of pod {namespace}/{pod} "
        "ExtendedResourceClaimStatus"
    )


def filter_timed_out(node: str) -> str:
    return f"node {node}: timed out trying to allocate devices"

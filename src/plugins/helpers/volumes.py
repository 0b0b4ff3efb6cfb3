"""Reading pods' volumes and the storage objects behind them (PVC, PV, StorageClass) as the
volume plugins need them. Objects are the raw API dicts the listers hold; nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.framework.events import QueueingHint
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import builds_requirement
from scheduler.objects.pod import Pod
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import int_value
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import annotations_of
from scheduler.objects.raw import spec_of
from scheduler.objects.volume_annotations import ANN_BIND_COMPLETED

# Resources the volume plugins read through Handle.lister (plural API names).
PVCS = "persistentvolumeclaims"
PVS = "persistentvolumes"
STORAGE_CLASSES = "storageclasses"
CSI_NODES = "csinodes"
CSI_DRIVERS = "csidrivers"
CSI_STORAGE_CAPACITIES = "csistoragecapacities"
VOLUME_ATTACHMENTS = "volumeattachments"

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"


@dataclass(frozen=True, slots=True)
class ClaimUse:
    """One pod volume backed by a PVC: a named claim or a generic ephemeral volume's claim."""

    claim_name: str
    ephemeral: bool


def pod_volumes(pod: Pod) -> Sequence[RawObject]:
    volumes: Sequence[RawObject] = (pod.raw.get("spec") or {}).get("volumes") or ()
    return volumes


def pod_claims(pod: Pod) -> tuple[ClaimUse, ...]:
    """The PVCs the pod's volumes use, in volume order (a claim may appear twice)."""
    uses: list[ClaimUse] = []
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if source is not None:
            uses.append(ClaimUse(str(source.get("claimName") or ""), ephemeral=False))
        elif volume.get("ephemeral") is not None:
            # The ephemeral volume controller names the claim <pod name>-<volume name>.
            uses.append(ClaimUse(f"{pod.name}-{volume.get('name', '')}", ephemeral=True))
    return tuple(uses)


def claim_not_found(name: str) -> str:
    """The API's NotFound text for a PVC, which upstream reports verbatim."""
    return f'persistentvolumeclaim "{name}" not found'


def ephemeral_not_yet_created(name: str) -> str:
    return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'


def ephemeral_owner_error(pod: Pod, pvc: RawObject) -> str | None:
    """Why a generic ephemeral volume's PVC cannot be used by `pod`, or None if it can: the
    claim must be in the pod's namespace and controlled by the pod."""
    meta = pvc.get("metadata") or {}
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    if namespace == pod.namespace:
        for owner in meta.get("ownerReferences") or ():
            if owner.get("controller") and owner.get("uid") == pod.uid:
                return None
    return (
        f"PVC {namespace}/{meta.get('name', '')} was not created for pod "
        f"{pod.namespace}/{pod.name} (pod is not owner)"
    )


def name_of(obj: RawObject) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: RawObject) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def labels_of(obj: RawObject) -> Mapping[str, str]:
    labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return labels


def resource_version(obj: RawObject) -> int:
    """The object's resourceVersion as a number (0 when absent), for newer-than checks."""
    raw = (obj.get("metadata") or {}).get("resourceVersion") or 0
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def is_wait_for_first_consumer(storage_class: RawObject) -> bool:
    """An unset binding mode is Immediate, which is what the API server defaults it to."""
    return storage_class.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def is_fully_bound(pvc: RawObject) -> bool:
    """Bound to a volume and the binding confirmed by the PV controller."""
    return bool(spec_of(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(pvc)


def storage_bytes(value: Any) -> int | None:
    """A storage quantity in bytes; None if it is absent or not a quantity."""
    if value is None:
        return None
    try:
        return int_value(value)
    except (QuantityError, ValueError, TypeError):
        return None


def requested_storage(pvc: RawObject) -> int | None:
    """The claim's storage request in bytes, None if it asks for none."""
    requests = (spec_of(pvc).get("resources") or {}).get("requests") or {}
    return storage_bytes(requests.get("storage"))


def volume_capacity(pv: RawObject) -> int:
    return storage_bytes((spec_of(pv).get("capacity") or {}).get("storage")) or 0


def access_modes(obj: RawObject) -> frozenset[str]:
    return frozenset(str(m) for m in spec_of(obj).get("accessModes") or ())


def volume_mode(obj: RawObject) -> str:
    return str(spec_of(obj).get("volumeMode") or "Filesystem")


def pv_node_affinity_matches(pv: RawObject, node_labels: Mapping[str, str]) -> bool:
    """Whether the node's labels satisfy the PV's required node affinity: some term matches.

    Upstream (CheckNodeAffinity) matches the terms against a node made of the labels alone, one
    term at a time. A term that does not parse (a value that is no label value, a Gt bound that
    is no integer, a matchFields operator other than In and NotIn, ...) matches nothing, and the
    other terms are still tried. A nameless node has no fields, so matchFields that parse rule
    no node out: the term is decided by its matchExpressions.
    """
    required = (spec_of(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    return any(_term_matches(t, node_labels) for t in required.get("nodeSelectorTerms") or ())


def _term_matches(term: RawObject, node_labels: Mapping[str, str]) -> bool:
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False  # an empty term selects nothing
    if not all(_field_requirement_parses(f) for f in fields):
        return False
    return all(_requirement_holds(e, str(e.get("operator")), node_labels) for e in expressions)


def _field_requirement_parses(raw: RawObject) -> bool:
    # Upstream's field selectors: In or NotIn with exactly one value, the key unchecked.
    return raw.get("operator") in ("In", "NotIn") and len(raw.get("values") or ()) == 1


def _requirement_holds(raw: RawObject, operator: str, node_labels: Mapping[str, str]) -> bool:
    """Whether the labels satisfy the requirement `raw` describes with `operator`; one that
    labels.NewRequirement refuses holds for no labels."""
    key = str(raw.get("key") or "")
    values = [str(value) for value in raw.get("values") or ()]
    if not builds_requirement(key, operator, values):
        return False
    return Requirement(key, operator, frozenset(values)).matches(node_labels)


def topology_terms_match(terms: Sequence[RawObject], node_labels: Mapping[str, str]) -> bool:
    """StorageClass.allowedTopologies: no terms allow every node; otherwise some term must have
    every one of its label expressions (`key In values`) satisfied by the node's labels. An
    empty term selects nothing, and so does one with an expression upstream cannot turn into a
    requirement (a value that is no label value, no values): such terms pass API validation.
    """
    if not terms:
        return True
    for term in terms:
        expressions = term.get("matchLabelExpressions") or ()
        if expressions and all(_requirement_holds(e, "In", node_labels) for e in expressions):
            return True
    return False


def object_change(old: object, new: object, kind: str) -> tuple[RawObject | None, RawObject]:
    """(old object or None for an Add, new object) of an event about a raw API object."""
    if not isinstance(new, Mapping):
        raise TypeError(f"expected the new object of a {kind} event, got {type(new).__name__}")
    if old is not None and not isinstance(old, Mapping):
        raise TypeError(f"expected the old object of a {kind} event, got {type(old).__name__}")
    return old, new


def added_or_changed(
    old: object, new: object, kind: str, aspect: Callable[[RawObject], object]
) -> QueueingHint:
    """Queue the pod for a new object, or for one whose `aspect` (what the plugin reads of
    it) changed."""
    before, after = object_change(old, new, kind)
    if before is None or aspect(before) != aspect(after):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def claim_event_hint(pod: Pod, old: object, new: object, *, ephemeral: bool) -> QueueingHint:
    """Queue the pod when a PersistentVolumeClaim event is about a claim its volumes name; the
    claims of its generic ephemeral volumes count too when `ephemeral` is set."""
    _, claim = object_change(old, new, "PersistentVolumeClaim")
    if (namespace_of(claim) or DEFAULT_NAMESPACE) != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    name = name_of(claim)
    for use in pod_claims(pod):
        if use.claim_name == name and (ephemeral or not use.ephemeral):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP

"""The scheduler's side of volume binding: which PVs or provisioning a node would need
(Filter), assuming the choice (Reserve) and taking it back (Unreserve)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import is_fully_bound
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import pod_claims
from plugins.helpers.volumes import pv_node_affinity_matches
from plugins.helpers.volumes import requested_storage
from plugins.volume_binding.assume_cache import AssumeCache
from plugins.volume_binding.assume_cache import AssumeError
from plugins.volume_binding.assume_cache import ObjectKey
from plugins.volume_binding.assume_cache import key_of
from plugins.volume_binding.claims import PodVolumeClaims
from plugins.volume_binding.claims import classify_claims
from plugins.volume_binding.matching import find_matching_volume
from plugins.volume_binding.matching import is_bound_to_claim
from plugins.volume_binding.migration import csi_node_of
from plugins.volume_binding.migration import pv_seen_from
from plugins.volume_binding.provisioning import check_provisioning
from scheduler.framework import Handle
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import annotations_of
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of
from scheduler.objects.volume_annotations import ANN_BOUND_BY_CONTROLLER
from scheduler.objects.volume_annotations import ANN_SELECTED_NODE

REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


@dataclass(slots=True)
class StaticBinding:
    """A pre-provisioned PV chosen for an unbound claim."""

    pvc: RawObject
    pv: RawObject


@dataclass(slots=True)
class PodVolumes:
    """What one node needs for the pod's unbound claims: PVs to bind and claims to provision."""

    static_bindings: list[StaticBinding] = field(default_factory=list)
    provisions: list[RawObject] = field(default_factory=list)
    # The CSIStorageCapacity that admitted each claim to provision, by claim key, where its
    # driver publishes capacity (storage capacity scoring reads it).
    capacities: dict[ObjectKey, RawObject] = field(default_factory=dict)
    # PVs whose claimRef PreBind wrote: their assumption outlives an Unreserve until the
    # informer shows the write, as upstream's does (its binding then holds the newer PV).
    written_pvs: set[ObjectKey] = field(default_factory=set)


def bind_volume_to_claim(pv: RawObject, pvc: RawObject) -> tuple[RawObject, bool]:
    """A copy of `pv` whose claimRef names `pvc`, and whether anything had to change."""
    new = copy.deepcopy(dict(pv))
    dirty = False
    ref = spec_of(pv).get("claimRef")
    pvc_meta = pvc.get("metadata") or {}
    if (
        ref is None
        or ref.get("name") != name_of(pvc)
        or (ref.get("namespace") or "") != namespace_of(pvc)
        or (ref.get("uid") or "") != (pvc_meta.get("uid") or "")
    ):
        new.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": namespace_of(pvc),
            "name": name_of(pvc),
            "uid": pvc_meta.get("uid") or "",
            "resourceVersion": pvc_meta.get("resourceVersion") or "",
        }
        dirty = True
    if not is_bound_to_claim(pv, pvc) and ANN_BOUND_BY_CONTROLLER not in annotations_of(pv):
        new.setdefault("metadata", {}).setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = (
            "yes"
        )
        dirty = True
    return new, dirty


class VolumeBinder:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self.pv_cache = AssumeCache(lambda: handle.lister(PVS), PVS)
        self.pvc_cache = AssumeCache(lambda: handle.lister(PVCS), PVCS)

    # ---- PreFilter ------------------------------------------------------------------

    def pod_volume_claims(self, pod: Pod) -> PodVolumeClaims | str:
        return classify_claims(pod, self._handle, self.pvc_cache, self.pv_cache)

    # ---- Filter -----------------------------------------------------------------------

    def find_pod_volumes(
        self, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, tuple[str, ...]]:
        """The node's PodVolumes and the reasons it cannot host the pod's claims (none if it
        can). Raises ProvisioningError when a claim's class is missing, MigrationError when a
        bound in-tree PV cannot be translated for a node migrated to CSI."""
        volumes = PodVolumes()
        reasons: list[str] = []
        pv_found, affinity_ok = self._check_bound(claims.bound, node)
        if not affinity_ok:
            reasons.append(REASON_NODE_CONFLICT)
        unbound_ok, enough_space = self._unbound(claims, node, volumes)
        if not unbound_ok:
            reasons.append(REASON_BIND_CONFLICT)
        if not enough_space:
            reasons.append(REASON_NOT_ENOUGH_SPACE)
        if not pv_found:
            reasons.append(REASON_PV_NOT_EXIST)
        return volumes, tuple(reasons)

    def _check_bound(self, bound: Sequence[RawObject], node: Node) -> tuple[bool, bool]:
        """(every bound PV exists, the node satisfies their node affinity); stops at the
        first problem. An in-tree PV is judged as the node sees it, translated to CSI when
        the node migrated its plugin."""
        if not bound:
            return True, True
        csi_node = csi_node_of(self._handle, node.name)
        for pvc in bound:
            pv = self.pv_cache.get(("", str(spec_of(pvc).get("volumeName"))))
            if pv is None:
                return False, True
            if not pv_node_affinity_matches(pv_seen_from(pv, csi_node), node.labels):
                return True, False
        return True, True

    def _unbound(
        self, claims: PodVolumeClaims, node: Node, volumes: PodVolumes
    ) -> tuple[bool, bool]:
        """(unbound claims can be satisfied, there is storage for the ones to provision),
        filling `volumes` with the PVs to bind and the claims to provision."""
        if not claims.delayed:
            return True, True
        to_match: list[RawObject] = []
        to_provision: list[RawObject] = []
        for pvc in claims.delayed:
            selected = annotations_of(pvc).get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    # Provisioning already started for another node.
                    return False, True
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        satisfied = True
        if to_match:
            chosen: dict[str, RawObject] = {}
            # Smallest requests first, so each takes the smallest PV that fits.
            for pvc in sorted(to_match, key=lambda c: requested_storage(c) or 0):
                pvs = claims.volumes_by_class.get(storage_class_of(pvc), ())
                pv = find_matching_volume(pvc, pvs, node.labels, chosen)
                if pv is None:
                    satisfied = False
                    to_provision.append(pvc)
                    continue
                chosen[name_of(pv)] = pv
                volumes.static_bindings.append(StaticBinding(pvc, pv))
        if to_provision:
            check = check_provisioning(self._handle, to_provision, node.labels)
            volumes.provisions.extend(check.claims)
            volumes.capacities.update(check.capacities)
            return check.satisfied, check.sufficient_storage
        return satisfied, True

    # ---- Reserve / Unreserve --------------------------------------------------------

    def all_bound(self, pod: Pod) -> bool:
        for use in pod_claims(pod):
            pvc = self.pvc_cache.get((pod.namespace, use.claim_name))
            if pvc is None or not is_fully_bound(pvc):
                return False
        return True

    def assume(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Assume the node's bindings and provisioning; True if every claim is bound already.

        Rewrites `volumes` with the assumed objects PreBind writes. Raises AssumeError (after
        undoing what it assumed) if an object changed in between.
        """
        if self.all_bound(pod):
            return True
        bindings: list[StaticBinding] = []
        provisions: list[RawObject] = []
        try:
            for binding in volumes.static_bindings:
                pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
                if dirty:
                    self.pv_cache.assume(pv)
                bindings.append(StaticBinding(binding.pvc, pv))
            for pvc in volumes.provisions:
                annotated = copy.deepcopy(dict(pvc))
                meta = annotated.setdefault("metadata", {})
                meta.setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
                self.pvc_cache.assume(annotated)
                provisions.append(annotated)
        except AssumeError:
            self.revert(PodVolumes(bindings, provisions))
            raise
        volumes.static_bindings = bindings
        volumes.provisions = provisions
        return False

    def revert(self, volumes: PodVolumes) -> None:
        for binding in volumes.static_bindings:
            key = key_of(binding.pv)
            if key not in volumes.written_pvs:
                self.pv_cache.restore(key)
        for pvc in volumes.provisions:
            self.pvc_cache.restore(key_of(pvc))

"""PreBind: write the assumed bindings to the API, then wait for the PV controller.

A chosen PV gets its claimRef (the PV controller then binds the claim); a claim to provision
gets the selected-node annotation (the provisioner then creates a PV for that node). Each write
carries the resourceVersion the choice was made on, so a concurrent change fails it instead of
being overwritten. Completion is checked on the API objects the informers deliver, once a
second, until every claim is bound or the bind timeout runs out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import is_fully_bound
from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import pv_node_affinity_matches
from plugins.helpers.volumes import resource_version
from plugins.volume_binding.assume_cache import key_of
from plugins.volume_binding.binder import PodVolumes
from plugins.volume_binding.binder import VolumeBinder
from plugins.volume_binding.migration import MigrationError
from plugins.volume_binding.migration import csi_node_of
from plugins.volume_binding.migration import pv_seen_from
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import annotations_of
from scheduler.objects.raw import spec_of
from scheduler.objects.volume_annotations import ANN_BOUND_BY_CONTROLLER
from scheduler.objects.volume_annotations import ANN_SELECTED_NODE

# The scheduler's own informer: always there, whatever plugins watch.
PODS = "pods"

POLL_INTERVAL_SECONDS = 1.0


class BindingError(Exception):
    """Binding cannot complete; the attempt fails and the pod is retried."""


def _pv_patch(pv: RawObject) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(resource_version(pv))}
    if ANN_BOUND_BY_CONTROLLER in annotations_of(pv):
        meta["annotations"] = {ANN_BOUND_BY_CONTROLLER: annotations_of(pv)[ANN_BOUND_BY_CONTROLLER]}
    return {"metadata": meta, "spec": {"claimRef": dict(spec_of(pv)["claimRef"])}}


def _pvc_patch(pvc: RawObject, node_name: str) -> dict[str, Any]:
    return {
        "metadata": {
            "resourceVersion": str(resource_version(pvc)),
            "annotations": {ANN_SELECTED_NODE: node_name},
        }
    }


# (resource, namespace, name) -> the resourceVersion a write was made over: until the informer
# shows a newer version, the write has not been seen and completion cannot be judged.
Written = dict[tuple[str, str, str], int]


def _same_claim_ref(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("name", "namespace", "uid"))


def _pv_write_needed(api: RawObject | None, assumed: RawObject) -> bool:
    if api is None:
        return True
    wanted_annotation = annotations_of(assumed).get(ANN_BOUND_BY_CONTROLLER)
    return not _same_claim_ref(spec_of(api).get("claimRef"), spec_of(assumed).get("claimRef")) or (
        wanted_annotation is not None
        and annotations_of(api).get(ANN_BOUND_BY_CONTROLLER) != wanted_annotation
    )


async def write_bindings(
    handle: Handle, binder: VolumeBinder, volumes: PodVolumes, node_name: str
) -> Written:
    """Make the API writes (skipping those the API already reflects); on failure, forget the
    assumptions not yet written and re-raise."""
    bindings, provisions = volumes.static_bindings, volumes.provisions
    written: Written = {}
    done_bindings = done_provisions = 0
    try:
        for binding in bindings:
            name = name_of(binding.pv)
            if _pv_write_needed(handle.lister(PVS).get("", name), binding.pv):
                await handle.api.patch_object(PVS, "", name, _pv_patch(binding.pv))
                written[(PVS, "", name)] = resource_version(binding.pv)
                volumes.written_pvs.add(key_of(binding.pv))
            done_bindings += 1
        for pvc in provisions:
            namespace, name = namespace_of(pvc) or DEFAULT_NAMESPACE, name_of(pvc)
            api = handle.lister(PVCS).get(namespace, name)
            if api is None or annotations_of(api).get(ANN_SELECTED_NODE) != node_name:
                await handle.api.patch_object(PVCS, namespace, name, _pvc_patch(pvc, node_name))
                written[(PVCS, namespace, name)] = resource_version(pvc)
            done_provisions += 1
    except APIError:
        binder.revert(PodVolumes(bindings[done_bindings:], provisions[done_provisions:]))
        raise
    return written


def _not_seen_yet(written: Written, resource: str, obj: RawObject) -> bool:
    base = written.get((resource, namespace_of(obj), name_of(obj)))
    return base is not None and resource_version(obj) <= base


def bindings_complete(
    handle: Handle,
    volumes: PodVolumes,
    written: Written,
    node_name: str,
    node_labels: Mapping[str, str],
) -> bool:
    """True once every claim the pod's PreBind worked on is bound; BindingError if binding
    went wrong (claimRef reset, provisioning given up, a PV the node cannot use)."""
    pvs, pvcs = handle.lister(PVS), handle.lister(PVCS)
    csi_node = csi_node_of(handle, node_name)
    for binding in volumes.static_bindings:
        pv_name = name_of(binding.pv)
        pv = pvs.get("", pv_name)
        if pv is None:
            raise BindingError(f'failed to check binding: {PVS} "{pv_name}" not found')
        pvc_namespace = namespace_of(binding.pvc) or DEFAULT_NAMESPACE
        pvc_name = name_of(binding.pvc)
        pvc = pvcs.get(pvc_namespace, pvc_name)
        if pvc is None:
            raise BindingError(
                f'failed to check binding: {PVCS} "{pvc_namespace}/{pvc_name}" not found'
            )
        if _not_seen_yet(written, PVS, pv):
            return False
        _check_affinity(pv, csi_node, node_name, node_labels, "failed to translate pv to csi: ")
        claim_ref = spec_of(pv).get("claimRef")
        if claim_ref is None or not claim_ref.get("uid"):
            raise BindingError(f'ClaimRef got reset for pv "{pv_name}"')
        if not is_fully_bound(pvc):
            return False
    for claim in volumes.provisions:
        pvc_namespace = namespace_of(claim) or DEFAULT_NAMESPACE
        pvc_name = name_of(claim)
        pvc = pvcs.get(pvc_namespace, pvc_name)
        if pvc is None:
            raise BindingError(
                f'failed to check provisioning pvc: {PVCS} "{pvc_namespace}/{pvc_name}" not found'
            )
        if _not_seen_yet(written, PVCS, pvc):
            return False
        annotations = annotations_of(pvc)
        if not annotations:
            raise BindingError(f'selectedNode annotation reset for PVC "{pvc_name}"')
        if annotations.get(ANN_SELECTED_NODE) != node_name:
            # A provisioner that gives up removes the annotation so the pod is rescheduled.
            raise BindingError(f'provisioning failed for PVC "{pvc_name}"')
        volume_name = str(spec_of(pvc).get("volumeName") or "")
        if volume_name:
            pv = pvs.get("", volume_name)
            if pv is None:
                return False  # not delivered yet
            _check_affinity(pv, csi_node, node_name, node_labels, "")
        if not is_fully_bound(pvc):
            return False
    return True


def _check_affinity(
    pv: RawObject,
    csi_node: RawObject | None,
    node_name: str,
    node_labels: Mapping[str, str],
    translation_context: str,
) -> None:
    """BindingError unless the node can use the PV, judged as the node sees it (translated to
    CSI where it migrated the PV's plugin). Upstream words a failed translation of a chosen PV
    with a `translation_context`, that of a provisioned claim's PV bare."""
    try:
        seen = pv_seen_from(pv, csi_node)
    except MigrationError as exc:
        raise BindingError(f"{translation_context}{exc}") from exc
    if not pv_node_affinity_matches(seen, node_labels):
        raise BindingError(
            f'pv "{name_of(pv)}" node affinity doesn\'t match node "{node_name}": '
            "no matching NodeSelectorTerms"
        )


async def wait_for_bindings(
    handle: Handle,
    pod: Pod,
    volumes: PodVolumes,
    written: Written,
    node_name: str,
    bind_timeout: float,
) -> None:
    """Poll until the bindings complete; BindingError on a failure, when time runs out, or when
    the pod is deleted (there is nothing left to bind the volumes for)."""
    clock = handle.clock
    deadline = clock.now() + bind_timeout
    while True:
        remaining = deadline - clock.now()
        if remaining <= 0:
            raise BindingError("binding volumes: context deadline exceeded")
        await clock.sleep(min(POLL_INTERVAL_SECONDS, remaining))
        info = handle.node_info(node_name)
        if info is None or info.node is None:
            raise BindingError(
                f'binding volumes: failed to get node "{node_name}": node "{node_name}" not found'
            )
        if handle.lister(PODS).get(pod.namespace, pod.name) is None:
            raise BindingError(
                f'binding volumes: pod does not exist any more: pod "{pod.name}" not found'
            )
        try:
            if bindings_complete(handle, volumes, written, node_name, info.node.labels):
                return
        except BindingError as exc:
            raise BindingError(f"binding volumes: {exc}") from exc

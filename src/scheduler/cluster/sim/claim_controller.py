"""A small ResourceClaim controller for the in-memory cluster, doing what kube-controller-
manager's resourceclaim controller and garbage collector do for scheduling scenarios:

- a pod that names a ResourceClaimTemplate gets a claim made from it (owned by the pod, named
  `<pod>-<entry>-<suffix>`), recorded in the pod's `status.resourceClaimStatuses`;
- when a pod is gone (or has finished) it is taken out of its claims' `status.reservedFor`; a
  claim reserved for nobody is deallocated, and deleted if it was made for that pod.

`sync` is one finite pass over everything; `run` then follows pod and template changes and
handles only the pods they concern, so a large scenario does not pay a full pass per change.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.cluster.sim.cluster import SimCluster
from scheduler.framework.errors import APIError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import metadata_of

PODS = "pods"
CLAIMS = "resourceclaims"
TEMPLATES = "resourceclaimtemplates"
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def _live(pod: RawObject) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _claim_names(pod: RawObject) -> set[str]:
    """The claims a pod uses: named ones and those generated for it."""
    names = {
        str(e["resourceClaimName"])
        for e in (pod.get("spec") or {}).get("resourceClaims") or ()
        if e.get("resourceClaimName")
    }
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
        if status.get("resourceClaimName"):
            names.add(str(status["resourceClaimName"]))
    return names


class ResourceClaimController:
    """Makes claims from templates and releases claims of gone pods; start `run()`."""

    def __init__(self, sim: SimCluster) -> None:
        self._sim = sim

    async def run(self) -> None:
        await asyncio.gather(self._follow_pods(), self._follow_templates())

    async def _follow_pods(self) -> None:
        async for event in self._sim.watch(PODS, resource_version=str(self._sim.revision)):
            await self.pod_changed(event.type, event.object)

    async def pod_changed(self, event_type: str, pod: RawObject) -> None:
        """A new or changed pod may need claims; a gone or finished one releases its own."""
        if event_type == "DELETED" or not _live(pod):
            await self._release_pod(pod)
        elif event_type in ("ADDED", "MODIFIED"):
            await self._create_claims(pod)

    async def _follow_templates(self) -> None:
        async for event in self._sim.watch(TEMPLATES, resource_version=str(self._sim.revision)):
            if event.type == "ADDED":
                for pod in self._sim.objects(PODS):
                    if _live(pod):
                        await self._create_claims(pod)

    async def sync(self) -> int:
        """One pass over every pod and claim; returns how many writes it made."""
        writes = 0
        pods = {str(metadata_of(p).get("uid")): p for p in self._sim.objects(PODS) if _live(p)}
        for pod in pods.values():
            writes += await self._create_claims(pod)
        for claim in self._sim.objects(CLAIMS):
            writes += await self._release(claim, set(pods))
        return writes

    async def _create_claims(self, pod: RawObject) -> int:
        meta = metadata_of(pod)
        namespace, name = str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta.get("name"))
        statuses = list((pod.get("status") or {}).get("resourceClaimStatuses") or ())
        done = {s.get("name") for s in statuses}
        writes = 0
        for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
            template_name = entry.get("resourceClaimTemplateName")
            if not template_name or entry.get("name") in done:
                continue
            try:
                template = await self._sim.get(TEMPLATES, namespace, str(template_name))
            except APIError:
                continue  # the pod waits, as with the real controller
            template_spec = template.get("spec") or {}
            claim = await self._sim.create(
                CLAIMS,
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {
                        "namespace": namespace,
                        "generateName": f"{name}-{entry.get('name')}-",
                        "annotations": {POD_CLAIM_NAME: str(entry.get("name"))},
                        "labels": dict((template_spec.get("metadata") or {}).get("labels") or {}),
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "name": name,
                                "uid": meta.get("uid"),
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "spec": dict(template_spec.get("spec") or {}),
                },
            )
            statuses.append(
                {"name": entry.get("name"), "resourceClaimName": metadata_of(claim)["name"]}
            )
            writes += 1
        if writes:
            await self._sim.patch_pod_status(namespace, name, {"resourceClaimStatuses": statuses})
        return writes

    async def _release_pod(self, pod: RawObject) -> None:
        namespace = str(metadata_of(pod).get("namespace") or DEFAULT_NAMESPACE)
        live = {str(metadata_of(p).get("uid")) for p in self._sim.objects(PODS) if _live(p)}
        for name in _claim_names(pod):
            try:
                claim = await self._sim.get(CLAIMS, namespace, name)
            except APIError:
                continue
            await self._release(claim, live)

    async def _release(self, claim: RawObject, live_pods: set[str]) -> int:
        meta = metadata_of(claim)
        namespace, name = str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta.get("name"))
        status = claim.get("status") or {}
        reserved = list(status.get("reservedFor") or ())
        kept = [r for r in reserved if r.get("uid") in live_pods]
        owners = [o for o in meta.get("ownerReferences") or () if o.get("controller")]
        owner_gone = bool(owners) and all(o.get("uid") not in live_pods for o in owners)
        if owner_gone and not kept:
            await self._sim.delete(CLAIMS, namespace, name)
            return 1
        if len(kept) == len(reserved) and (kept or status.get("allocation") is None):
            return 0
        patch: dict[str, Any] = {"status": {"reservedFor": kept or None}}
        if not kept:
            patch["status"]["allocation"] = None
            patch["metadata"] = {"finalizers": None}
        await self._sim.patch_object(CLAIMS, namespace, name, patch)
        return 1

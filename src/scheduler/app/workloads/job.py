"""Jobs: as many pods at once as parallelism allows and completions still need.

A NonIndexed Job's pods are `<job>-<suffix>`; an Indexed Job's pod for index i is
`<job>-<i>-<suffix>` with hostname `<job>-<i>` and the completion index as annotation and
label. Every pod carries the job-name and controller-uid labels the API server adds to a Job's
template, and the finalizer the controller tracks them with.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from scheduler.app.workloads.naming import GeneratedNames
from scheduler.app.workloads.owners import Owner
from scheduler.app.workloads.owners import stamp_pod

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
_MODES = ("NonIndexed", "Indexed")


def job_pods(
    owner: Owner, mine: Sequence[dict[str, Any]], names: GeneratedNames
) -> list[dict[str, Any]]:
    """The pods the Job controller starts in its first sync, beside `mine`, those it has."""
    mode = str(owner.spec.get("completionMode") or "NonIndexed")
    if mode not in _MODES:
        raise owner.error(
            "spec.completionMode", f"unsupported value {mode!r}: expected one of {_MODES}"
        )
    parallelism = owner.count("parallelism", 1)
    completions = owner.spec.get("completions")
    if mode == "Indexed" and completions is None:
        raise owner.error("spec.completions", "Required value when completionMode is Indexed")
    wanted = parallelism if completions is None else min(parallelism, owner.count("completions", 1))
    if owner.spec.get("suspend"):
        wanted = 0
    template = _labelled_template(owner)
    if mode == "NonIndexed":
        return [
            _tracked(stamp_pod(owner, template, names.generate(f"{owner.name}-")))
            for _ in range(wanted - len(mine))
        ]
    held = {str((p["metadata"].get("annotations") or {}).get(COMPLETION_INDEX)) for p in mine}
    pods: list[dict[str, Any]] = []
    for index in (i for i in range(owner.count("completions", 1)) if str(i) not in held):
        if len(pods) + len(mine) >= wanted:
            break
        pod = _tracked(
            stamp_pod(
                owner,
                template,
                names.generate(f"{owner.name}-{index}-"),
                labels={COMPLETION_INDEX: str(index)},
                annotations={COMPLETION_INDEX: str(index)},
            )
        )
        pod["spec"]["hostname"] = f"{owner.name}-{index}"
        pods.append(pod)
    return pods


def _labelled_template(owner: Owner) -> dict[str, Any]:
    template = copy.deepcopy(dict(owner.template()))
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    labels.update(
        {
            CONTROLLER_UID_LABEL: owner.uid,
            JOB_NAME_LABEL: owner.name,
            LEGACY_CONTROLLER_UID_LABEL: owner.uid,
            LEGACY_JOB_NAME_LABEL: owner.name,
        }
    )
    return template


def _tracked(pod: dict[str, Any]) -> dict[str, Any]:
    """`pod` with the finalizer the Job controller counts its pods by."""
    finalizers = pod["metadata"].setdefault("finalizers", [])
    if TRACKING_FINALIZER not in finalizers:
        finalizers.append(TRACKING_FINALIZER)
    return pod

"""A workload's pod template read the way its pods will be, when the scenario is loaded.

The simulation's controllers copy the template into every pod they create. A field the
scheduler cannot read would otherwise be found only in those pods, after the run, far from the
object that holds it; read here, it is reported naming the workload and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.app.toleration_admission import check_tolerations
from scheduler.app.workloads.expand import CONTROLLED
from scheduler.framework.errors import ConfigError
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE


def check_pod_template(obj: Mapping[str, Any]) -> None:
    """Raise a ConfigError naming the workload and the field if its template cannot be read."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    if (group, str(obj.get("kind") or "")) not in CONTROLLED:
        return
    meta = obj.get("metadata") or {}
    where = f"{obj.get('kind')} {meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"
    template = (obj.get("spec") or {}).get("template")
    if template is None:
        return
    if not isinstance(template, Mapping):
        raise ConfigError(f"{where}: spec.template: must be an object")
    spec = template.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: spec.template.spec: must be an object")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": str(meta.get("name")), "namespace": meta.get("namespace")},
        "spec": spec or {},
    }
    try:
        Pod.from_dict(pod)
    except InvalidObjectError as exc:
        # The cause names the field within the pod ("spec.affinity: ..."), without the name
        # of a pod that does not exist.
        detail = str(exc.__cause__ or exc)
        raise ConfigError(f"{where}: spec.template.{detail}") from exc
    try:
        check_tolerations(spec or {}, "spec.template.spec")
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from exc

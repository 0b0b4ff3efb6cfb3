"""`--version`: our release and the kube-scheduler release whose behaviour we follow."""

from __future__ import annotations

import json

from scheduler.observability.component_metrics import KUBERNETES_RELEASE
from scheduler.observability.component_metrics import own_version


def version_text(form: str) -> str:
    """`true`: two lines as kube-scheduler prints one; `raw`: the same as JSON."""
    if form == "raw":
        return json.dumps({"kubePyscheduler": own_version(), "kubernetes": KUBERNETES_RELEASE})
    return f"kube-pyscheduler v{own_version()}\nKubernetes {KUBERNETES_RELEASE}"

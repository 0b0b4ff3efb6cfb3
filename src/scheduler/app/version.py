"""`--version`: our release and the kube-scheduler release whose behaviour we follow."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version

KUBERNETES_VERSION = "v1.36.3"


def own_version() -> str:
    try:
        return version("kube-pyscheduler")
    except PackageNotFoundError:
        return "0.0.0"


def version_text(form: str) -> str:
    """`true`: two lines as kube-scheduler prints one; `raw`: the same as JSON."""
    if form == "raw":
        return json.dumps({"kubePyscheduler": own_version(), "kubernetes": KUBERNETES_VERSION})
    return f"kube-pyscheduler v{own_version()}\nKubernetes {KUBERNETES_VERSION}"

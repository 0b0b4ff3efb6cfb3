"""Applying manifest files to the test apiserver, as `kubectl apply --server-side` does.

Where an object goes is asked of the server's discovery documents, not of a table: a kind the
server does not serve (a custom resource without its CRD) is reported as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.e2e.api_client import ApiClient
from tests.e2e.api_client import ApiResponse

FIELD_MANAGER = "kube-pyscheduler-e2e"
APPLY_PATCH = "application/apply-patch+yaml"

Manifest = dict[str, Any]


class KindNotServedError(LookupError):
    """The server's discovery does not list the manifest's apiVersion and kind."""


def read_manifests(path: Path) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def object_path(admin: ApiClient, manifest: Manifest) -> str:
    """The URL path of the object `manifest` describes."""
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    group_path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    discovery = admin.get(group_path)
    if discovery.status == 404:
        raise KindNotServedError(f"{api_version} is not served")
    assert discovery.status == 200, discovery
    for resource in discovery.body["resources"]:
        if resource["kind"] == kind and "/" not in resource["name"]:
            plural, namespaced = resource["name"], resource["namespaced"]
            break
    else:
        raise KindNotServedError(f"{api_version} serves no {kind}")
    name = manifest["metadata"]["name"]
    if namespaced:
        namespace = manifest["metadata"].get("namespace") or "default"
        return f"{group_path}/namespaces/{namespace}/{plural}/{name}"
    return f"{group_path}/{plural}/{name}"


def apply(admin: ApiClient, manifest: Manifest, *, dry_run: bool = False) -> ApiResponse:
    """Server-side apply: creates the object or updates it, so applying twice is harmless.
    With `dry_run` the server validates and admits it (defaulting, admission, validation,
    field ownership) without storing anything."""
    query = f"fieldManager={FIELD_MANAGER}&force=true" + ("&dryRun=All" if dry_run else "")
    return admin.request(
        "PATCH", f"{object_path(admin, manifest)}?{query}", manifest, content_type=APPLY_PATCH
    )

"""Reading the manifests of deploy/: object files, keyed by (kind, name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DIR = REPO_ROOT / "deploy"
MONITORING_DIR = DEPLOY_DIR / "monitoring"
KUSTOMIZATION = "kustomization.yaml"

Manifest = dict[str, Any]
Manifests = dict[tuple[str, str], Manifest]


def object_files(directory: Path) -> list[Path]:
    """The object manifests directly in `directory` (its kustomization excluded)."""
    return sorted(p for p in directory.glob("*.yaml") if p.name != KUSTOMIZATION)


def read_objects(directory: Path) -> Manifests:
    objects: Manifests = {}
    for path in object_files(directory):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            key = (document["kind"], document["metadata"]["name"])
            if key in objects:
                raise ValueError(f"{path.name}: {key} is defined twice")
            objects[key] = document
    return objects

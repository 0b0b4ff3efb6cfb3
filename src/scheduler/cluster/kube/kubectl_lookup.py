"""Where kubectl finds a kubeconfig when none is named.

For the commands an operator runs from a workstation (`explain`): the files `$KUBECONFIG`
lists, else `~/.kube/config`. The daemon keeps kube-scheduler's rule instead (a named file,
or the service account of the pod it runs in), so a stray file in a home directory never
decides which cluster a scheduler binds pods in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scheduler.framework.errors import ConfigError

KUBECONFIG_ENV = "$KUBECONFIG"
HOME_KUBECONFIG = "~/.kube/config"


def kubectl_kubeconfig(environ: Mapping[str, str], home: Path) -> tuple[str, str] | None:
    """The kubeconfig kubectl would read, and its name for errors; None if there is none.

    As kubectl: a `$KUBECONFIG` that is set wins over `~/.kube/config`, and the files it lists
    that do not exist are passed over. Several are returned joined by the path separator, to
    be merged as kubectl merges them (see `check_kubeconfig`)."""
    listed = environ.get("KUBECONFIG", "")
    if listed:
        paths = [str(Path(p).expanduser()) for p in listed.split(os.pathsep) if p]
        existing = [p for p in paths if Path(p).exists()]
        if not existing:
            raise ConfigError(f"{KUBECONFIG_ENV}: none of the files it lists exists ({listed})")
        return os.pathsep.join(existing), KUBECONFIG_ENV
    default = home / ".kube" / "config"
    return (str(default), HOME_KUBECONFIG) if default.exists() else None

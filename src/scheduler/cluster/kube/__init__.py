"""The cluster port over a real kube-apiserver; the only package that imports kubernetes_asyncio.

`connect(...)` builds a `KubeClusterClient` from a kubeconfig, `--master` or the in-cluster
service account. Objects travel as raw JSON dicts on every path (no client models).
"""

from scheduler.cluster.kube.client import KubeClusterClient
from scheduler.cluster.kube.config import DaemonClients
from scheduler.cluster.kube.config import connect
from scheduler.cluster.kube.config import connect_daemon
from scheduler.cluster.kube.config import default_user_agent
from scheduler.cluster.kube.config import load_configuration
from scheduler.cluster.kube.config import new_client
from scheduler.cluster.kube.rate_limit import TokenBucket
from scheduler.cluster.kube.resources import ApiResource
from scheduler.cluster.kube.resources import ResourceTable

__all__ = [
    "ApiResource",
    "DaemonClients",
    "KubeClusterClient",
    "ResourceTable",
    "TokenBucket",
    "connect",
    "connect_daemon",
    "default_user_agent",
    "load_configuration",
    "new_client",
]

"""`kube-pyscheduler explain POD`: why a pod is pending, node by node and plugin by plugin, and
the nearest changes to the pod that would let it schedule. Read-only by construction."""

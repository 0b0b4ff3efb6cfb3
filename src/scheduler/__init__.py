"""kube-pyscheduler: a Kubernetes Scheduler Framework implementation in Python."""

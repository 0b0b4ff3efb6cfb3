"""In-tree plugins, each registered through the kube_pyscheduler.plugins entry-point group."""

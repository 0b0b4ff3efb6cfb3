"""Pure helpers over Kubernetes objects: quantities, selectors, affinity, taints, pods and nodes.

Everything here is stdlib-only and side-effect free, so the framework, plugins and adapters can
share one reading of the API types.
"""

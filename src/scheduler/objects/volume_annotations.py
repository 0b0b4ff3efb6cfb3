"""Annotations through which the PV controller and the scheduler hand a claim's binding over to
each other; what sets one on a side must spell it as the other side reads it."""

from __future__ import annotations

# The node a WaitForFirstConsumer claim is to be provisioned for, set by the scheduler.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
# The controller has finished binding a claim to its volume.
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
# The binding was made by a controller (or the scheduler), not written by a user.
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
# The provisioner name of classes whose volumes are created by hand, never provisioned.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

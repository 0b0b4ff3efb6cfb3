"""DefaultBinder: binds the pod by creating its Binding through the cluster API."""

from __future__ import annotations

from plugins.helpers.plugin_bases import HandleOnlyPlugin
from scheduler.framework import SUCCESS
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.errors import APIError
from scheduler.framework.errors import error_text


class DefaultBinder(HandleOnlyPlugin):
    name = "DefaultBinder"

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            await self._handle.api.bind(pod, node_name)
        except APIError as error:
            # The API's answer (e.g. 409 already bound, 404 pod gone) fails the binding cycle,
            # in the server's words, as upstream's FailedScheduling Event gives them.
            return Status.from_error(error_text(error))
        return SUCCESS

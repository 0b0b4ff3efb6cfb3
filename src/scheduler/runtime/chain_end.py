"""How a run of plugins at one extension point of the reserve and binding half ends.

Reserve, Permit, PreBind and Bind stop at the first plugin that does not succeed. The loops stay
with their points (PreBind and Bind await their plugins, Reserve and Permit do not); what they
share is the end: the failing plugin's status made the attempt's failure in upstream's terms,
and the point's duration recorded with the code it ended with (Unreserve and PostBind, which
never stop, record theirs the same way).
"""

from __future__ import annotations

from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Status
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile


def stopped_at(profile: Profile, point: str, plugin: str, status: Status, started: float) -> Status:
    """The point's result when `plugin` answered `status` (neither success nor a Skip the point
    allows): a rejection named after the plugin, anything else an Error in upstream's words."""
    failure = invoke.plugin_failure(point, plugin, status)
    profile.observe(point, failure, started)
    return failure


def ended(profile: Profile, point: str, started: float, status: Status = SUCCESS) -> Status:
    """The point's result when no plugin stopped it: `status` (success unless given)."""
    profile.observe(point, status, started)
    return status

"""Label values upstream uses, so callers and dashboards spell them the same way.

A label that only carries a name the measured code already owns is spelled there: sub-queues
in `scheduler.backend.queue.observer`, queue-move events in `scheduler.framework.events`,
extension points in `scheduler.runtime`, which times them, cache entry kinds in `Cache.sizes`.
"""

from __future__ import annotations

from typing import Final

# scheduler_schedule_attempts_total / scheduler_scheduling_attempt_duration_seconds {result}
SCHEDULED: Final = "scheduled"
UNSCHEDULABLE: Final = "unschedulable"
ERROR: Final = "error"

# scheduler_queueing_hint_execution_duration_seconds {hint}
HINT_QUEUE: Final = "Queue"
HINT_QUEUE_SKIP: Final = "QueueSkip"
HINT_ERROR: Final = "Error"

# scheduler_goroutines {operation}
OPERATION_BINDING: Final = "binding"
OPERATION_PRIORITIZING_EXTENDER: Final = "prioritizing_extender"

# scheduler_preemption_goroutines_execution_total / async API calls {result}
SUCCESS: Final = "success"
# (errors use ERROR above)

# scheduler_pod_scheduling_sli_duration_seconds {attempts}: 15 and more share one label.
MAX_ATTEMPTS_LABEL: Final = 15


def attempts_label(attempts: int) -> str:
    """The `attempts` label upstream uses: "1" .. "14", then "15+" for every higher count."""
    if attempts >= MAX_ATTEMPTS_LABEL:
        return f"{MAX_ATTEMPTS_LABEL}+"
    return str(attempts)

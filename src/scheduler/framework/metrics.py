"""Where plugins put their own metric families so that the scheduler's /metrics serves them.

A plugin module creates its families once, at import, on `PLUGIN_METRICS` (one plugin class may
be built many times, once per profile, and a family name can be registered only once); every
`SchedulerMetrics` collects from it. Label the series by profile to tell instances apart.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

PLUGIN_METRICS = CollectorRegistry(auto_describe=True)

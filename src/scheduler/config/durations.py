"""Go-style durations for KubeSchedulerConfiguration; they live in the framework so plugin
args can use the same type (see `scheduler.framework.durations`)."""

from scheduler.framework.durations import Duration
from scheduler.framework.durations import format_duration
from scheduler.framework.durations import parse_duration

__all__ = ["Duration", "format_duration", "parse_duration"]

"""The /metrics body: Prometheus text format, shaped like kube-scheduler's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

CONTENT_TYPE: Final = CONTENT_TYPE_PLAIN_0_0_4
"""The media type of `render_text`'s output."""


def render_text(source: Collector) -> bytes:
    """Every family `source` collects, in text format 0.0.4, as the Go client writes it.

    Two details of prometheus_client's output differ from what kube-scheduler serves, and
    both would break queries written against upstream:
    - each counter and histogram gains a `<name>_created` series; the Go client has none;
    - whole-number bucket bounds read `le="1.0"`, where Go writes `le="1"`, and before
      Prometheus 3 normalised them, `le` was compared as a string.
    Both are fixed here, on a copy, rather than through prometheus_client's process-wide
    switches, so no other registry in the process changes how it renders.
    """
    return generate_latest(_UpstreamShaped(source))


class _UpstreamShaped:
    """A collector view of another collector with the two differences above removed."""

    __slots__ = ("_source",)

    def __init__(self, source: Collector) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        for family in self._source.collect():
            created = family.name + "_created"
            # A copy, because a collector may hand out families it keeps.
            shaped = Metric(family.name, family.documentation, family.type, family.unit)
            shaped.samples = [_go_le(s) for s in family.samples if s.name != created]
            yield shaped


def _go_le(sample: Sample) -> Sample:
    le = sample.labels.get("le")
    if le is None or not le.endswith(".0"):
        return sample
    # prometheus_client writes bounds with repr(), which ends whole numbers in ".0" (large
    # ones use exponent notation, as Go does); Go's shortest formatting drops it.
    return sample._replace(labels={**sample.labels, "le": le[:-2]})

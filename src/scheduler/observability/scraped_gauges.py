"""Gauges whose values are read from callbacks when Prometheus scrapes.

Queue lengths and cache sizes change on every event; pushing each change into a gauge would
cost the hot path a lock per event. Instead the owner registers a cheap callback that reports
its current counts, and this collector asks for them only when /metrics is read.

Callbacks run on whatever thread serves the scrape, so they must only read (len() of a few
containers is the intended use). A failing callback is logged and its family is exposed
without samples: one broken source must not take the whole endpoint down.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence

from prometheus_client.core import CounterMetricFamily
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from scheduler.framework.log import get_logger
from scheduler.observability.catalog import Kind
from scheduler.observability.catalog import MetricSpec

LabelledValues = Iterable[tuple[Sequence[str], float]]
"""(label values in the family's label order, value) pairs."""

GaugeSource = Callable[[], LabelledValues]

_log = get_logger(__name__)


class ScrapedGauges(Collector):
    """A prometheus_client collector for the families marked `scraped` in the catalog."""

    def __init__(self, specs: Iterable[MetricSpec]) -> None:
        self._specs: dict[str, MetricSpec] = {}
        for spec in specs:
            # Counters too, when their owner keeps the count (plugins report theirs this way).
            if spec.kind not in (Kind.GAUGE, Kind.COUNTER) or not spec.scraped:
                raise ValueError(f"{spec.name} is not a scrape-time gauge or counter")
            self._specs[spec.name] = spec
        self._sources: dict[str, GaugeSource] = {}

    def set_source(self, name: str, source: GaugeSource | None) -> None:
        """Read `name` from `source` from now on; None exposes the family without samples."""
        if name not in self._specs:
            raise KeyError(f"{name} is not a scrape-time gauge of this collector")
        if source is None:
            self._sources.pop(name, None)
        else:
            self._sources[name] = source

    def describe(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        # Lets the registry check for name clashes without calling any source.
        for spec in self._specs.values():
            yield _family(spec)

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        for name, spec in self._specs.items():
            family = _family(spec)
            source = self._sources.get(name)
            if source is not None:
                try:
                    for label_values, value in source():
                        family.add_metric(label_values, value)
                except Exception:
                    _log.exception("metrics source failed", metric=name)
                    family = _family(spec)
            yield family


def _family(spec: MetricSpec) -> GaugeMetricFamily | CounterMetricFamily:
    if spec.kind is Kind.COUNTER:
        return CounterMetricFamily(spec.name, spec.help, labels=spec.labels)
    return GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)

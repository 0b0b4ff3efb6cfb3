"""Values from Prometheus, refreshed in the background, read by Score without any IO.

A `PrometheusSource` owns a set of named PromQL queries. A task started through
`Handle.start_background` evaluates them every `intervalSeconds`, each attempt bounded by
`timeoutSeconds` and retried `retries` times, and merges each answer into a per-node store:
a node's value is replaced when an answer carries it and kept (ageing) when one does not, so a
single failed refresh changes nothing. Scoring reads the store synchronously; a value older than
`maxStalenessSeconds` is not used at all. When no value of any query is fresh the source is
stale: plugins then score every node neutrally, the stale gauge reads 1 and one log line says so
(and another when data returns). The source keeps its own counts; the plugin owning it reports
them through `metric_samples` (the framework's `MetricsReporter`) when /metrics is scraped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp
import numpy as np
import numpy.typing as npt

from plugins.helpers.prometheus.query import QueryError
from plugins.helpers.prometheus.query import instant_query
from plugins.helpers.prometheus.settings import PrometheusSourceArgs
from plugins.helpers.table_memo import TableMemo
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import NodeTable
from scheduler.framework import Rows
from scheduler.framework import get_logger

_log = get_logger(__name__)

Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

# Waits between attempts of one query: short, doubling, never past the refresh interval.
_FIRST_BACKOFF_SECONDS = 0.25

# What a node without a value aligns to: no value, never observed.
_MISSING = (float("nan"), float("-inf"))


@dataclass(frozen=True, slots=True)
class RowValues:
    """One query's values aligned with a node table's rows: NaN where a node has none."""

    values: Floats
    observed_at: Floats


class PrometheusSource:
    """Named PromQL queries kept fresh for one plugin instance."""

    def __init__(
        self,
        settings: PrometheusSourceArgs,
        queries: Mapping[str, str],
        handle: Handle,
        plugin: str,
    ) -> None:
        self.settings = settings
        self.queries = dict(queries)
        self._handle = handle
        self._clock = handle.clock
        self._plugin = plugin
        self._labels = (handle.profile_name, plugin)
        # query name -> node -> (value, clock time of the answer that carried it)
        self._store: dict[str, dict[str, tuple[float, float]]] = {q: {} for q in self.queries}
        self._newest: float | None = None
        self._version = 0
        self._stale_reported: bool | None = None  # None: not checked yet
        self._rows_memo: TableMemo[RowValues] = TableMemo()
        self._stale = True
        self._queries: Counter[str] = Counter()  # by result: success, error
        self._neutral_scores = 0

    # -- the background side --------------------------------------------------------------

    def start(self) -> None:
        """Begin refreshing; the scheduler owns the task and cancels it at shutdown."""
        self._handle.start_background(f"{self._plugin}-prometheus", self.run)

    async def run(self) -> None:
        async with aiohttp.ClientSession() as session:
            while True:
                await self.refresh(session)
                await self._clock.sleep(self.settings.interval_seconds)

    async def refresh(self, session: aiohttp.ClientSession) -> None:
        """Evaluate every query once (with retries) and merge what came back."""
        for name, promql in self.queries.items():
            answer = await self._query_with_retries(session, promql)
            if answer is not None:
                self.merge(name, answer, self._clock.now())
        self.check_staleness()

    async def _query_with_retries(
        self, session: aiohttp.ClientSession, promql: str
    ) -> dict[str, float] | None:
        settings = self.settings
        backoff = _FIRST_BACKOFF_SECONDS
        for attempt in range(settings.retries + 1):
            try:
                answer = await instant_query(
                    session, settings.address, promql, settings.timeout_seconds, settings.node_label
                )
            except QueryError as exc:
                self._queries["error"] += 1
                if attempt == settings.retries:
                    _log.warning(
                        "Prometheus query failed; keeping older values",
                        plugin=self._plugin,
                        profile=self._handle.profile_name,
                        attempts=attempt + 1,
                        err=str(exc),
                    )
                    return None
                await self._clock.sleep(min(backoff, settings.interval_seconds))
                backoff *= 2
            else:
                self._queries["success"] += 1
                return answer
        return None

    def merge(self, query: str, answer: Mapping[str, float], now: float) -> None:
        """Take in one successful answer observed at `now`; forget values too old to use."""
        store = self._store[query]
        for node, value in answer.items():
            store[node] = (value, now)
        oldest_usable = now - self.settings.max_staleness_seconds
        for node in [n for n, (_, at) in store.items() if at < oldest_usable]:
            del store[node]
        if answer:
            # An empty answer (Prometheus up, the series gone) is no fresh data.
            self._newest = now
        self._version += 1

    # -- the scoring side (never awaits) ------------------------------------------------------

    def _age(self) -> float:
        return -1.0 if self._newest is None else self._clock.now() - self._newest

    def check_staleness(self) -> bool:
        """True if nothing is fresh; reports each change between fresh and stale once."""
        age = self._age()
        stale = age < 0 or age > self.settings.max_staleness_seconds
        previous = self._stale_reported
        if stale != previous:
            self._stale_reported = stale
            self._stale = stale
            fields = {"plugin": self._plugin, "profile": self._handle.profile_name}
            if stale:
                _log.warning(
                    "No Prometheus data fresher than maxStalenessSeconds; scoring every node "
                    "neutrally until it returns",
                    maxStalenessSeconds=self.settings.max_staleness_seconds,
                    **fields,
                )
            elif previous is not None:
                _log.info("Fresh Prometheus data again", **fields)
        return stale

    def note_neutral(self) -> None:
        self._neutral_scores += 1

    def metric_samples(self) -> MetricSamples:
        """This source's series of the `kube_pyscheduler_plugin_*` families."""
        labels = self._labels
        return {
            "kube_pyscheduler_plugin_prometheus_data_age_seconds": [(labels, self._age())],
            "kube_pyscheduler_plugin_prometheus_stale": [(labels, 1.0 if self._stale else 0.0)],
            "kube_pyscheduler_plugin_prometheus_queries_total": [
                ((*labels, result), float(count)) for result, count in self._queries.items()
            ],
            "kube_pyscheduler_plugin_neutral_scores_total": [(labels, float(self._neutral_scores))],
        }

    def value(self, query: str, node: str, now: float) -> tuple[float, float] | None:
        """The node's fresh value of `query` and when it was fetched, or None."""
        found = self._store[query].get(node)
        if found is None or now - found[1] > self.settings.max_staleness_seconds:
            return None
        return found

    def row_values(
        self, query: str, table: NodeTable, rows: Rows, now: float
    ) -> tuple[Floats, Floats]:
        """`value` for each of `rows`: the values (NaN where none is fresh) and when each was
        fetched (-inf where there is none)."""
        aligned = self._aligned(query, table)
        values = table.gather(aligned.values, rows)
        observed = table.gather(aligned.observed_at, rows)
        fresh: Mask = (now - observed) <= self.settings.max_staleness_seconds
        result: Floats = np.where(fresh, values, np.nan)
        return result, observed

    def _aligned(self, query: str, table: NodeTable) -> RowValues:
        def aligned() -> RowValues:
            store = self._store[query]
            names = [table.node_infos[row].name for row in range(table.size)]
            # Built from lists in one go: per-row numpy assignment costs ten times more.
            found = [store.get(name, _MISSING) for name in names]
            values = np.fromiter((f[0] for f in found), dtype=np.float64, count=len(found))
            observed = np.fromiter((f[1] for f in found), dtype=np.float64, count=len(found))
            return RowValues(values, observed)

        # Rebuilt only when an answer arrived or the table's nodes changed.
        validity = (self._version, table.label_version, table.size)
        return self._rows_memo.get(table, query, validity, aligned)

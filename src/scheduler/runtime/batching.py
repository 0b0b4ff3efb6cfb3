"""Opportunistic batching: a pod like the one before it may take the next node of that pod's
ranking without being scored (kube-scheduler's OpportunisticBatching, beta and on in v1.36).

Pods alike (equal signatures, `Signer`) get the same Filter and Score answers on a node in the
same state. When such pods come one straight after another and each one fills the node it gets
(one pod per node: GPU jobs, daemons of a kind), the ranking the first one was scored against
still holds for the second, minus the node the first one took; the other nodes did not change.
So each profile keeps the ranking of its last attempt, and the next pod is offered the next
node of it as a hint when all of these hold, each for a reason:

- the pod was popped in the very next cycle (a pod in between, of any profile, may have changed
  any node);
- its signature equals the kept one (another kind of pod ranks nodes otherwise);
- the ranking is younger than `MAX_BATCH_AGE` (the cluster changes under an old one);
- the node the previous pod got no longer passes Filter for this pod. Were there still room,
  that node might still be the best, and only scoring could tell.

The hint is filtered like a nominated node and, if it passes, it is the attempt's node; if it
does not, the attempt searches and scores every node as usual and its ranking is kept instead.
Every hint asked for, and every ranking dropped with its reason, is counted under upstream's
metric names and labels, so that its dashboards read the same.

The ranking is put in order only when a hint is first taken from it: most rankings are dropped
unused (the next pod fits where the previous one went), and sorting thousands of nodes for
nothing would cost more than batching saves.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from random import Random

import numpy as np

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.plugins import Plugin
from scheduler.framework.plugins import PodSignature
from scheduler.framework.plugins import Rows
from scheduler.framework.plugins import Scores
from scheduler.framework.plugins import SignPlugin
from scheduler.objects.pod import Pod
from scheduler.observability import V_DEBUG
from scheduler.observability import V_PLUGIN
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.runtime import invoke
from scheduler.runtime.metrics_port import RuntimeMetrics
from scheduler.runtime.node_filter import FilterChain

_log = get_logger("batching")

# kube-scheduler logs each hint given at -v=3, the rest at -v=4 and signing at -v=5.
V_HINT = 3

# Seconds a ranking may be reused for, from the attempt that scored it.
MAX_BATCH_AGE = 0.5

# The fragment every signature has: pods of different profiles are never alike.
SCHEDULER_NAME_FRAGMENT = "schedulerName"


class HintResult(StrEnum):
    """What asking for a hint came to (`scheduler_batch_attempts_total`'s `result`)."""

    NO_HINT = "no_hint"
    HINT_USED = "hint_used"
    HINT_NOT_USED = "hint_not_used"


class Flush(StrEnum):
    """Why a kept ranking was dropped (`scheduler_batch_cache_flushed_total`'s `reason`)."""

    POD_SKIPPED = "pod_skipped"
    POD_INCOMPATIBLE = "pod_incompatible"
    EXPIRED = "expired"
    NODE_MISSING = "node_missing"
    NODE_NOT_FULL = "node_not_full"
    EMPTY_LIST = "empty_list"
    POD_NOT_BATCHABLE = "pod_not_batchable"


class Signer:
    """Signs pods for one profile: the merged fragments of its PreFilter, Filter, PreScore and
    Score plugins, or None when one of them cannot sign the pod. A profile with a plugin that
    has no `sign_pod`, or a scheduler with extenders (whose answers no plugin can vouch for),
    signs no pod at all."""

    def __init__(
        self,
        profile: str,
        plugins: Sequence[Plugin],
        metrics: RuntimeMetrics,
        *,
        extenders: bool,
    ) -> None:
        self._profile = profile
        self._metrics = metrics
        unique = list({plugin.name: plugin for plugin in plugins}.values())
        self._signers = [p for p in unique if isinstance(p, SignPlugin)]
        unsigned = sorted(p.name for p in unique if not isinstance(p, SignPlugin))
        self.enabled = not extenders and not unsigned
        if extenders:
            _log.info(
                "Disabling signatures for profile because it has extenders configured",
                profile=profile,
            )
        elif unsigned:
            _log.info(
                "Disabling signatures for profile because plugins do not support it",
                profile=profile,
                plugins=unsigned,
            )

    def sign(self, state: CycleState, pod: Pod) -> PodSignature | None:
        """The pod's signature, or None as soon as one plugin cannot sign it.

        The plugin that refused last is asked first: one refusal settles the answer, and the
        plugin that refuses one pod usually refuses the next (PodTopologySpread under system
        defaults refuses every pod, so the default profile asks it alone). The order changes
        nothing else: fragments are merged, and one name has one value whoever gives it.
        """
        if not self.enabled:
            return None
        started = time.perf_counter()
        signature: dict[str, object] = {SCHEDULER_NAME_FRAGMENT: pod.scheduler_name}
        for position, plugin in enumerate(self._signers):
            plugin_started = time.perf_counter()
            fragments = invoke.sign(plugin.name, plugin.sign_pod, pod)
            if state.record_plugin_metrics:
                status = "Success" if fragments is not None else "Unschedulable"
                seconds = time.perf_counter() - plugin_started
                self._metrics.plugin_execution_duration(plugin.name, "Sign", status, seconds)
            if fragments is None:
                log_v(
                    _log,
                    V_PLUGIN,
                    "SignPod can't sign pod due to plugin",
                    pod=pod.key,
                    plugin=plugin.name,
                )
                if position:
                    self._signers.insert(0, self._signers.pop(position))
                signature = {}
                break
            signature.update(fragments)
        # Upstream labels every Sign observation Success, whatever the plugins said.
        self._metrics.extension_point_duration(
            "Sign", "Success", self._profile, time.perf_counter() - started
        )
        return signature or None


@dataclass(slots=True)
class _Ranking:
    """The nodes one attempt scored other than the one it chose, and their totals; `names` is
    the node table's list of names when kept (rows index it: a later removal may move rows)."""

    signature: PodSignature
    names: list[str]
    rows: Rows
    totals: Scores
    created: float
    # Positions in `rows`, best first; made when the first hint is taken.
    order: list[int] | None = None

    def pop(self, rng: Random) -> str:
        """The best node not yet offered; ties in random order, as upstream breaks them."""
        if self.order is None:
            ties = np.random.default_rng(rng.getrandbits(64)).random(len(self.rows))
            self.order = np.lexsort((ties, -self.totals)).tolist()[::-1]
        position = self.order.pop()
        return self.names[int(self.rows[position])]

    def __len__(self) -> int:
        return len(self.rows) if self.order is None else len(self.order)


@dataclass(frozen=True, slots=True)
class _LastCycle:
    cycle: int
    chosen: str


class OpportunisticBatch:
    """One profile's batching: it signs the pods, keeps the ranking of the last attempt, and
    offers its nodes as hints. `enabled` is the OpportunisticBatching feature gate; when it is
    off the cycle calls none of this."""

    def __init__(
        self,
        profile: str,
        chain: FilterChain,
        signer: Signer,
        handle: Handle,
        metrics: RuntimeMetrics,
        *,
        enabled: bool,
    ) -> None:
        """`handle` gives the live node table, the clock and the profile's random generator."""
        self.enabled = enabled
        self._profile = profile
        self._chain = chain
        self._signer = signer
        self._handle = handle
        self._metrics = metrics
        self._ranking: _Ranking | None = None
        self._last: _LastCycle | None = None
        # Pods placed on a hinted node, for tests and `explain`.
        self.batched_pods = 0

    def sign(self, state: CycleState, pod: Pod) -> PodSignature | None:
        """What makes `pod` alike to others in this profile; None if nothing may be reused."""
        return self._signer.sign(state, pod)

    def node_hint(
        self, state: CycleState, pod: Pod, signature: PodSignature | None, cycle: int
    ) -> str:
        """The node to try first for `pod` (after its PreFilter), or "" for none."""
        started = time.perf_counter()
        hint = ""
        if self._usable(signature, cycle) and self._last_node_full(state, pod, cycle):
            assert self._ranking is not None
            hint = self._ranking.pop(self._handle.rng)
            log_v(
                _log,
                V_HINT,
                "OpportunisticBatch provided node hint",
                profile=self._profile,
                pod=pod.key,
                cycle=cycle,
                hint=hint,
                remaining_nodes=len(self._ranking),
            )
        else:
            self._metrics.batch_attempt(self._profile, HintResult.NO_HINT)
        self._metrics.node_hint_duration(bool(hint), self._profile, time.perf_counter() - started)
        return hint

    def store(
        self,
        signature: PodSignature | None,
        hinted: str,
        chosen: str,
        cycle: int,
        scored: tuple[Rows, Scores, int] | None = None,
    ) -> None:
        """Remember the attempt of `cycle`, which chose `chosen`; `scored` is the rows scored,
        their totals and the chosen row when the attempt scored nodes (None when one node was
        feasible, or the hint or a nominated node was taken unscored)."""
        started = time.perf_counter()
        try:
            self._store(signature, hinted, chosen, cycle, scored)
        finally:
            self._metrics.store_schedule_results_duration(
                self._profile, time.perf_counter() - started
            )

    def _store(
        self,
        signature: PodSignature | None,
        hinted: str,
        chosen: str,
        cycle: int,
        scored: tuple[Rows, Scores, int] | None,
    ) -> None:
        self._last = _LastCycle(cycle, chosen)
        if hinted and hinted == chosen:
            # The ranking holds on: the next alike pod takes the node after this one.
            self._metrics.batch_attempt(self._profile, HintResult.HINT_USED)
            self.batched_pods += 1
            return
        if hinted:
            self._metrics.batch_attempt(self._profile, HintResult.HINT_NOT_USED)
            log_v(
                _log,
                V_DEBUG,
                "OpportunisticBatch hint not used",
                profile=self._profile,
                cycle=cycle,
                hint=hinted,
                chosen=chosen,
            )
        # Scored rows are distinct, so the chosen one had company if there were two or more.
        if scored is None or len(scored[0]) < 2:
            self._flush(Flush.EMPTY_LIST, cycle)
            return
        if signature is None:
            self._flush(Flush.POD_NOT_BATCHABLE, cycle)
            return
        rows, totals, chosen_row = scored
        others = rows != chosen_row
        names = self._handle.node_table.names.copy()
        now = self._handle.clock.now()
        self._ranking = _Ranking(signature, names, rows[others], totals[others], now)

    def _usable(self, signature: PodSignature | None, cycle: int) -> bool:
        """Whether a ranking is kept that this pod, popped in `cycle`, may draw from."""
        ranking, last = self._ranking, self._last
        if ranking is None or not len(ranking) or last is None:
            return False
        if cycle != last.cycle + 1:
            return self._flush(Flush.POD_SKIPPED, cycle)
        if signature is None or signature != ranking.signature:
            return self._flush(Flush.POD_INCOMPATIBLE, cycle)
        if self._handle.clock.now() > ranking.created + MAX_BATCH_AGE:
            return self._flush(Flush.EXPIRED, cycle)
        return True

    def _last_node_full(self, state: CycleState, pod: Pod, cycle: int) -> bool:
        """Whether the node the previous pod got now rejects this one: were there room, it
        might still be this pod's best node, and only scoring could tell."""
        assert self._last is not None
        table = self._handle.node_table
        row = table.row_of(self._last.chosen)
        if row is None:
            return self._flush(Flush.NODE_MISSING, cycle)
        if not self._chain.run_on_node(state, pod, table.node_infos[row]).is_rejected:
            return self._flush(Flush.NODE_NOT_FULL, cycle)
        return True

    def _flush(self, reason: Flush, cycle: int) -> bool:
        """Drop the kept ranking for `reason`; False, for `_usable` to return."""
        self._ranking = None
        self._metrics.batch_cache_flushed(self._profile, reason)
        log_v(
            _log,
            V_DEBUG,
            "OpportunisticBatch found unusable state",
            profile=self._profile,
            cycle=cycle,
            reason=str(reason),
        )
        return False

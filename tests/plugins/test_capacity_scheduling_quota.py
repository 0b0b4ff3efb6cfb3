"""CapacityScheduling's quota rules: which resources each check compares, ephemeral-storage
counted, PreFilter's texts, and what status.used says."""

from __future__ import annotations

from typing import Any

from plugins.capacity_scheduling import CapacityScheduling
from plugins.capacity_scheduling.quota import parse_quota
from plugins.capacity_scheduling.status import decimal_quantity
from plugins.capacity_scheduling.status import used_status
from plugins.capacity_scheduling.usage import QuotaUsage
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

GPU = "example.com/gpu"


def quota(namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"{namespace}-quota", "namespace": namespace},
        "spec": spec,
    }


def pre_filter(quotas: list[dict[str, Any]], pod: Pod, running: list[Pod] = []) -> Status:  # noqa: B006
    node = make_node("n0").capacity(cpu="64", memory="256Gi", pods="110").obj()
    handle = FakeHandle(build_table([node], running), listers={"elasticquotas": quotas})
    _, status = CapacityScheduling(None, handle).pre_filter(CycleState(), pod, handle.table)
    return status


def test_ephemeral_storage_is_capped_by_max() -> None:
    spec = {"min": {"cpu": "4", "ephemeral-storage": "1Gi"}, "max": {"ephemeral-storage": "1Gi"}}
    pod = make_pod("p", "a").req(cpu="1", **{"ephemeral-storage": "2Gi"}).obj()
    status = pre_filter([quota("a", spec)], pod)
    assert status.message() == (
        "Pod a/p is rejected in PreFilter because ElasticQuota a is more than Max"
    )


def test_ephemeral_storage_borrows_only_unused_min_like_every_other_resource() -> None:
    """No quota lends ephemeral-storage, so a pod asking for it cannot borrow any."""
    pod = make_pod("p", "a").req(cpu="1", **{"ephemeral-storage": "1Gi"}).obj()
    status = pre_filter([quota("a", {"min": {"cpu": "4"}})], pod)
    assert status.message() == (
        "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"
    )
    covered = quota("a", {"min": {"cpu": "4", "ephemeral-storage": "1Gi"}})
    assert pre_filter([covered], pod).is_success


def test_max_compares_cpu_memory_and_storage_always_and_extended_resources_requested() -> None:
    """A max lowered below what a namespace holds of an extended resource does not shut out
    pods that do not ask for it; below what it holds of cpu it does, even for a pod asking for
    no cpu."""
    eq = parse_quota(quota("a", {"max": {"cpu": "4", GPU: "1"}}))
    assert not eq.over_max({GPU: 2, "cpu": 1000}, {"cpu": 1000})
    assert eq.over_max({GPU: 2, "cpu": 1000}, {GPU: 1})
    assert eq.over_max({"cpu": 5000}, {})
    # Where max does not name a resource it is not capped.
    assert not eq.over_max({"cpu": 1000}, {"memory": 10**12})


def test_a_namespace_borrowing_one_resource_is_within_its_min_for_another() -> None:
    """Beyond its GPU min, within its cpu min: a cpu request of it reclaims lent cpu."""
    eq = parse_quota(quota("a", {"min": {"cpu": "4", GPU: "1"}}))
    used = {"cpu": 1000, GPU: 2}
    assert not eq.over_min(used, {"cpu": 1000})
    assert eq.over_min(used, {GPU: 1})
    # Use alone compares everything it holds; a pod asking for nothing compares only the three.
    assert eq.over_min(used)
    assert not eq.over_min(used, {})


def test_the_sum_of_mins_compares_everything_the_quotas_use() -> None:
    """cpu, memory and ephemeral-storage, and every extended resource the pod or any quota
    uses: the aggregate use is compared whole, as scheduler-plugins compares it."""
    eq = parse_quota(quota("a", {"min": {"cpu": "4", GPU: "1"}}))
    beyond = QuotaUsage({"a": eq}, {"a": {"cpu": 1000, GPU: 2}})
    assert beyond.over_total_min({"cpu": 1000})
    assert beyond.over_total_min({})
    within = QuotaUsage({"a": eq}, {"a": {"cpu": 1000, GPU: 1}})
    assert not within.over_total_min({"cpu": 1000})
    assert within.over_total_min({GPU: 1})
    assert within.over_total_min({"cpu": 4000})


def test_a_resource_used_beyond_all_mins_shuts_out_pods_that_do_not_ask_for_it() -> None:
    quotas = [
        quota("a", {"min": {"cpu": "4"}}),
        quota("b", {"min": {"cpu": "4", GPU: "1"}}),
    ]
    gpus = make_pod("trainer", "b").req(cpu="1", **{GPU: "3"}).node("n0").obj()
    pod = make_pod("p", "a").req(cpu="1").obj()
    assert pre_filter(quotas, pod, [gpus]).message() == (
        "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"
    )
    assert pre_filter(quotas, pod).is_success


def test_status_used_names_every_resource_of_min_and_max_in_decimal_quantities() -> None:
    eq = parse_quota(quota("a", {"min": {"cpu": "4", "pods": "10"}, "max": {"memory": "8Gi"}}))
    assert used_status(eq, {"cpu": 2000, "ephemeral-storage": 3 * 10**9}) == {
        "cpu": "2",
        "ephemeral-storage": "3G",
        "memory": "0",
        "pods": "0",
    }


def test_decimal_quantities_keep_the_largest_whole_suffix() -> None:
    assert decimal_quantity(0, milli=True) == "0"
    assert decimal_quantity(1500, milli=True) == "1500m"
    assert decimal_quantity(3_000_000, milli=True) == "3k"
    assert decimal_quantity(2**31) == "2147483648"
    assert decimal_quantity(5 * 10**18) == "5E"
    assert decimal_quantity(1_500_000) == "1500k"

"""`/metrics/slis`: the last outcome and the count of every health check run."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from scheduler.observability.health_slis import HealthCheckSLIs


def _samples(slis: HealthCheckSLIs) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(slis.render().decode())
        for sample in family.samples
    }


def test_the_gauge_keeps_the_last_outcome_and_the_counter_every_one() -> None:
    slis = HealthCheckSLIs()
    slis.observe("readyz", "sched-handler-sync", False)
    slis.observe("readyz", "sched-handler-sync", True)
    slis.observe("readyz", "sched-handler-sync", True)
    slis.observe("livez", "ping", True)

    samples = _samples(slis)
    sync = (("name", "sched-handler-sync"), ("type", "readyz"))
    assert samples[("kubernetes_healthcheck", sync)] == 1
    counts = {
        labels: value
        for (name, labels), value in samples.items()
        if name == "kubernetes_healthchecks_total"
    }
    assert counts == {
        (("name", "sched-handler-sync"), ("status", "error"), ("type", "readyz")): 1,
        (("name", "sched-handler-sync"), ("status", "success"), ("type", "readyz")): 2,
        (("name", "ping"), ("status", "success"), ("type", "livez")): 1,
    }
    assert samples[("kubernetes_healthcheck", (("name", "ping"), ("type", "livez")))] == 1


def test_a_failure_after_success_sets_the_gauge_to_zero() -> None:
    slis = HealthCheckSLIs()
    slis.observe("healthz", "leaderElection", True)
    slis.observe("healthz", "leaderElection", False)
    labels = (("name", "leaderElection"), ("type", "healthz"))
    assert _samples(slis)[("kubernetes_healthcheck", labels)] == 0


def test_both_families_are_stable_and_have_no_created_series() -> None:
    slis = HealthCheckSLIs()
    slis.observe("healthz", "ping", True)
    text = slis.render().decode()
    assert "# HELP kubernetes_healthcheck [STABLE] " in text
    assert "# TYPE kubernetes_healthchecks_total counter" in text
    assert "_created" not in text

"""Health answers in the API server's format, and the scheduler's named checks."""

from __future__ import annotations

import pytest

from scheduler.app.health_checks import handler_sync_check
from scheduler.app.health_checks import leader_election_check
from scheduler.app.health_checks import scheduler_checks
from scheduler.app.health_checks import shutdown_check
from scheduler.app.healthz import Answer
from scheduler.app.healthz import HealthCheck
from scheduler.app.healthz import check_answer
from scheduler.app.healthz import endpoint_answer
from scheduler.app.healthz import run_check
from scheduler.cluster.sim import SimCluster
from scheduler.core.leader_election import WATCHDOG_GRACE
from scheduler.core.leader_election import LeaderElector
from scheduler.testing import FakeClock


def broken() -> bool:
    raise RuntimeError("informer gone")


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        pytest.param(lambda: True, None, id="true-passes"),
        pytest.param(lambda: False, "check failed", id="false-fails"),
        pytest.param(lambda: "not yet", "not yet", id="string-is-the-reason"),
        pytest.param(lambda: "", "check failed", id="empty-string-fails"),
        pytest.param(broken, "RuntimeError: informer gone", id="raising-fails"),
    ],
)
def test_run_check(check: HealthCheck, reason: str | None) -> None:
    assert run_check(check) == reason


CHECKS: dict[str, HealthCheck] = {"a": lambda: True, "b": lambda: "down", "c": lambda: True}


@pytest.mark.parametrize(
    ("checks", "verbose", "exclude", "answer"),
    [
        pytest.param({"a": CHECKS["a"]}, False, (), Answer(200, "ok"), id="quiet-pass"),
        pytest.param(
            {"a": CHECKS["a"]},
            True,
            (),
            Answer(200, "[+]a ok\nhealthz check passed\n"),
            id="verbose-pass",
        ),
        pytest.param(
            CHECKS,
            False,
            (),
            Answer(500, "[+]a ok\n[-]b failed: reason withheld\n[+]c ok\nhealthz check failed\n"),
            id="failure-always-verbose",
        ),
        pytest.param(CHECKS, False, ("b",), Answer(200, "ok"), id="excluded"),
        pytest.param(
            CHECKS,
            True,
            ("b", "zz", "b"),
            Answer(
                200,
                "[+]a ok\n[+]b excluded: ok\n[+]c ok\n"
                'warn: some health checks cannot be excluded: no matches for "zz"\n'
                "healthz check passed\n",
            ),
            id="unknown-exclusion-warns",
        ),
        pytest.param(
            {"a": CHECKS["a"]},
            False,
            ("zz", "m", 'q"t', "zz", "aa"),
            Answer(200, "ok"),
            id="unknown-exclusions-do-not-fail",
        ),
        pytest.param(
            {"a": CHECKS["a"]},
            True,
            ("zz", "m", 'q"t', "zz", "aa"),
            Answer(
                200,
                "[+]a ok\n"
                "warn: some health checks cannot be excluded: no matches for "
                '"aa","m","q\\"t","zz"\n'
                "healthz check passed\n",
            ),
            id="unknown-exclusions-sorted-once-go-quoted",
        ),
    ],
)
def test_endpoint_answer(
    checks: dict[str, HealthCheck], verbose: bool, exclude: tuple[str, ...], answer: Answer
) -> None:
    assert endpoint_answer("healthz", checks, verbose=verbose, exclude=exclude) == answer


def test_a_single_check_shows_its_reason() -> None:
    # Upstream writes the "ok" bare (no nosniff) and the failure through http.Error.
    assert check_answer(CHECKS["a"]) == Answer(200, "ok", nosniff=False)
    assert check_answer(CHECKS["b"]) == Answer(500, "internal server error: down\n")


def test_healthz_runs_the_watchdog_alone_or_ping_as_upstream() -> None:
    def watchdog() -> bool:
        return True

    healthz, readiness = scheduler_checks(
        handlers_synced=lambda: True, shutting_down=lambda: False, leader_election=watchdog
    )
    assert healthz == {"leaderElection": watchdog}
    assert list(readiness) == ["leaderElection", "shutdown", "sched-handler-sync"]
    healthz, readiness = scheduler_checks(handlers_synced=lambda: True, shutting_down=lambda: False)
    assert list(healthz) == ["ping"]
    assert list(readiness) == ["shutdown", "sched-handler-sync"]


@pytest.mark.parametrize(
    ("flag", "outcome"), [(False, "handlers are not fully synchronized"), (True, True)]
)
def test_handler_sync_check(flag: bool, outcome: bool | str) -> None:
    assert handler_sync_check(lambda: flag)() == outcome


@pytest.mark.parametrize(("flag", "outcome"), [(True, "process is shutting down"), (False, True)])
def test_shutdown_check(flag: bool, outcome: bool | str) -> None:
    assert shutdown_check(lambda: flag)() == outcome


async def test_leader_election_check_fails_for_a_leader_long_overdue() -> None:
    clock = FakeClock()
    elector = LeaderElector(
        SimCluster(clock),
        namespace="kube-system",
        name="kube-scheduler",
        identity="a",
        clock=clock,
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
    )
    assert await elector.try_acquire_or_renew()
    # The check reads its own clock; the elector's timers stand still, as in a stalled loop.
    later = FakeClock(start=clock.now())
    check = leader_election_check(elector, later)
    assert check() is True
    later.advance(15 + WATCHDOG_GRACE + 1)
    assert check() == "failed election to renew leadership on lease kube-scheduler"


def test_each_check_run_is_observed_and_an_excluded_one_is_not() -> None:
    seen: list[tuple[str, str, bool]] = []
    checks: dict[str, HealthCheck] = {
        "ping": lambda: True,
        "shutdown": lambda: "shutting down",
        "sync": lambda: True,
    }
    endpoint_answer(
        "readyz", checks, exclude=["sync"], observe=lambda *outcome: seen.append(outcome)
    )
    assert seen == [("readyz", "ping", True), ("readyz", "shutdown", False)]

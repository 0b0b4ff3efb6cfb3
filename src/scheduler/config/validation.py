"""Checks on the configuration's own fields (plugins are checked in `plugin_validation`)."""

from __future__ import annotations

from scheduler.config.durations import format_duration
from scheduler.config.field_errors import ROOT
from scheduler.config.field_errors import FieldError
from scheduler.config.field_errors import FieldPath
from scheduler.config.field_errors import duplicate
from scheduler.config.field_errors import invalid
from scheduler.config.field_errors import required
from scheduler.config.models import ClientConnectionConfiguration
from scheduler.config.models import Extender
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import LeaderElectionConfiguration
from scheduler.objects.names import qualified_name_problems
from scheduler.objects.resources import is_extended_resource

RESOURCE_LOCK = "leases"
_REQUESTS_PREFIX = "requests."


def validate_configuration(config: KubeSchedulerConfiguration) -> list[FieldError]:
    """Problems in the top-level fields and in each profile's name and percentage."""
    # Upstream's order: the connection, then leader election, then the rest.
    problems = _client_connection(ROOT.child("clientConnection"), config.client_connection)
    problems += _leader_election(ROOT.child("leaderElection"), config.leader_election)
    if config.parallelism <= 0:
        problems.append(
            invalid(
                ROOT.child("parallelism"),
                config.parallelism,
                "should be an integer value greater than zero",
            )
        )
    problems += _percentage(
        ROOT.child("percentageOfNodesToScore"), config.percentage_of_nodes_to_score
    )
    if config.pod_initial_backoff_seconds <= 0:
        problems.append(
            invalid(
                ROOT.child("podInitialBackoffSeconds"),
                config.pod_initial_backoff_seconds,
                "must be greater than 0",
            )
        )
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        problems.append(
            invalid(
                ROOT.child("podMaxBackoffSeconds"),
                config.pod_max_backoff_seconds,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    problems += _profiles(config)
    problems += _extenders(ROOT.child("extenders"), config.extenders)
    return problems


def _percentage(path: FieldPath, value: int | None) -> list[FieldError]:
    if value is None or 0 <= value <= 100:
        return []
    return [invalid(path, value, "not in valid range [0-100]")]


def _leader_election(path: FieldPath, config: LeaderElectionConfiguration) -> list[FieldError]:
    """component-base's checks, then kube-scheduler's own on the lock kind."""
    if not config.leader_elect:
        return []
    problems: list[FieldError] = []
    for field, value in (
        ("leaseDuration", config.lease_duration),
        ("renewDeadline", config.renew_deadline),
        ("retryPeriod", config.retry_period),
    ):
        if value <= 0:
            problems.append(
                invalid(path.child(field), format_duration(value), "must be greater than zero")
            )
    if config.lease_duration <= config.renew_deadline:
        # Upstream reports the renew deadline as the offending value.
        problems.append(
            invalid(
                path.child("leaseDuration"),
                format_duration(config.renew_deadline),
                "must be greater than `RenewDeadline`",
            )
        )
    # Defaulting fills these in; only a value set after it (by a flag, say) leaves one empty.
    for field, name in (
        ("resourceLock", config.resource_lock),
        ("resourceNamespace", config.resource_namespace),
        ("resourceName", config.resource_name),
    ):
        if not name:
            problems.append(required(path.child(field)))
    if config.resource_lock != RESOURCE_LOCK:
        problems.append(
            invalid(
                path.child("resourceLock"),
                config.resource_lock,
                f'resourceLock value must be "{RESOURCE_LOCK}"',
            )
        )
    return problems


def _client_connection(path: FieldPath, config: ClientConnectionConfiguration) -> list[FieldError]:
    if config.burst < 0:
        return [invalid(path.child("burst"), config.burst, "must be non-negative")]
    return []


def _profiles(config: KubeSchedulerConfiguration) -> list[FieldError]:
    path = ROOT.child("profiles")
    if not config.profiles:
        return [required(path, "at least one profile is required")]
    problems: list[FieldError] = []
    seen: set[str] = set()
    for index, profile in enumerate(config.profiles):
        name_path = path.index(index).child("schedulerName")
        if not profile.scheduler_name:
            problems.append(required(name_path))
        elif profile.scheduler_name in seen:
            problems.append(duplicate(name_path, profile.scheduler_name))
        else:
            seen.add(profile.scheduler_name)
        problems += _percentage(
            path.index(index).child("percentageOfNodesToScore"),
            profile.percentage_of_nodes_to_score,
        )
    return problems


def _extenders(path: FieldPath, extenders: list[Extender]) -> list[FieldError]:
    problems: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for index, extender in enumerate(extenders):
        extender_path = path.index(index)
        if extender.prioritize_verb and extender.weight <= 0:
            problems.append(
                invalid(
                    extender_path.child("weight"),
                    extender.weight,
                    "must have a positive weight applied to it",
                )
            )
        if extender.bind_verb:
            binders += 1
        for position, resource in enumerate(extender.managed_resources):
            name_path = extender_path.child("managedResources").index(position).child("name")
            problems += _extended_resource_name(name_path, resource.name)
            if resource.name in managed:
                problems.append(
                    invalid(name_path, resource.name, "duplicate extender managed resource name")
                )
            managed.add(resource.name)
    if binders > 1:
        problems.append(
            invalid(
                path,
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return problems


def _extended_resource_name(path: FieldPath, name: str) -> list[FieldError]:
    reasons = qualified_name_problems(name)
    if reasons:
        return [invalid(path, name, reason) for reason in reasons]
    is_extended = (
        is_extended_resource(name)
        and "kubernetes.io/" not in name
        and not name.startswith(_REQUESTS_PREFIX)
        and not qualified_name_problems(_REQUESTS_PREFIX + name)
    )
    if not is_extended:
        return [invalid(path, name, "is an invalid extended resource name")]
    return []

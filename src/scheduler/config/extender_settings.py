"""What configured extenders change in the effective configuration, as kube-scheduler applies
it when it builds them: a zero `httpTimeout` becomes the 5 s default, and the resources an
extender manages with `ignoredByScheduler` replace NodeResourcesFit's `ignoredResources` in
every profile (so the extender alone decides about them)."""

from __future__ import annotations

import dataclasses

from scheduler.config.effective import EffectiveProfile
from scheduler.config.field_errors import ROOT
from scheduler.config.field_errors import FieldError
from scheduler.config.field_errors import invalid
from scheduler.config.models import DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import KubeSchedulerProfile
from scheduler.config.models import PluginConfig
from scheduler.config.plugin_args import args_document

NODE_RESOURCES_FIT = "NodeResourcesFit"


def apply_extender_settings(
    config: KubeSchedulerConfiguration,
    profiles: list[KubeSchedulerProfile],
    effective: list[EffectiveProfile],
) -> tuple[KubeSchedulerConfiguration, list[FieldError]]:
    """`config` with defaulted extenders; `profiles` and `effective` are updated in place."""
    extenders = [
        e
        if e.http_timeout
        else e.model_copy(update={"http_timeout": DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS})
        for e in config.extenders
    ]
    ignored = tuple(
        r.name for e in config.extenders for r in e.managed_resources if r.ignored_by_scheduler
    )
    problems: list[FieldError] = []
    if ignored:
        for index, profile in enumerate(profiles):
            args = effective[index].plugin_args.get(NODE_RESOURCES_FIT)
            if args is None or not hasattr(args, "ignored_resources"):
                path = ROOT.child("profiles").index(index).child("pluginConfig")
                problems.append(
                    invalid(
                        path,
                        NODE_RESOURCES_FIT,
                        "can't find NodeResourcesFitArgs in plugin config; extenders "
                        "ignore resources through it",
                    )
                )
                continue
            document = args.model_dump(mode="json", by_alias=True)
            document["ignoredResources"] = list(ignored)
            args = type(args).from_document(document)
            plugin_args = {**effective[index].plugin_args, NODE_RESOURCES_FIT: args}
            effective[index] = dataclasses.replace(effective[index], plugin_args=plugin_args)
            entries = [
                PluginConfig(name=e.name, args=args_document(e.name, args))
                if e.name == NODE_RESOURCES_FIT
                else e
                for e in profile.plugin_config
            ]
            profiles[index] = profile.model_copy(update={"plugin_config": entries})
    return config.model_copy(update={"extenders": extenders}), problems

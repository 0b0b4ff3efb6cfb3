"""DynamicResourcesArgs: upstream's defaults, Go durations, errors with field paths; the
cluster events the plugin registers."""

from __future__ import annotations

import pydantic
import pytest

from plugins.dynamic_resources import DynamicResources
from plugins.dynamic_resources import DynamicResourcesArgs
from scheduler.framework import ActionType
from scheduler.framework import EventResource
from scheduler.testing import FakeHandle


def test_defaults_are_upstreams() -> None:
    args = DynamicResourcesArgs()
    assert (args.filter_timeout, args.binding_timeout) == (10.0, 600.0)
    assert args.model_dump(by_alias=True, mode="json") == {
        "filterTimeout": "10s",
        "bindingTimeout": "10m0s",
    }


def test_durations_are_go_strings() -> None:
    args = DynamicResourcesArgs.model_validate({"filterTimeout": "250ms", "bindingTimeout": "2m"})
    assert (args.filter_timeout, args.binding_timeout) == (0.25, 120.0)
    assert DynamicResourcesArgs.model_validate({"filterTimeout": "0s"}).filter_timeout == 0


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (
            {"filterTimeout": "-1s"},
            "filterTimeout",
            'Invalid value: "-1s": must be zero or positive',
        ),
        (
            {"bindingTimeout": "500ms"},
            "bindingTimeout",
            'Invalid value: "500ms": must be at least 1 second',
        ),
        ({"filterTimeout": 10}, "filterTimeout", "must be a duration string"),
        ({"filtertimeout": "1s"}, "filtertimeout", "Extra inputs are not permitted"),
    ],
)
def test_bad_args_name_their_field(raw: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        DynamicResourcesArgs.model_validate(raw)
    [error] = caught.value.errors()
    assert error["loc"][0] == field
    assert message in error["msg"]


def test_registered_events() -> None:
    plugin = DynamicResources(None, FakeHandle())
    registered = {
        (e.event.resource, e.event.action, e.hint is not None) for e in plugin.events_to_register()
    }
    add_or_update = ActionType.ADD | ActionType.UPDATE
    assert registered == {
        (
            EventResource.NODE,
            ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
            False,
        ),
        (EventResource.RESOURCE_CLAIM, add_or_update, True),
        (EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM, True),
        (EventResource.DEVICE_CLASS, add_or_update, False),
        (EventResource.RESOURCE_SLICE, add_or_update, False),
    }

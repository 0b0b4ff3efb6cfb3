"""The configuration's objects and the plugins' args decode by the same strict rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scheduler.config.models import ConfigModel
from scheduler.framework.args import ArgsModel
from scheduler.framework.strict_model import StrictModel


class Window(StrictModel):
    max_items: int = 1


def test_fields_are_camel_case_in_files_and_snake_case_in_python() -> None:
    assert Window.model_validate({"maxItems": 3}).max_items == 3
    assert Window(max_items=4).max_items == 4
    assert Window(max_items=4).model_dump(by_alias=True) == {"maxItems": 4}


def test_unknown_fields_are_rejected_naming_them() -> None:
    with pytest.raises(ValidationError, match="maxItem"):
        Window.model_validate({"maxItem": 3})


def test_values_are_not_coerced_between_types() -> None:
    with pytest.raises(ValidationError, match="maxItems"):
        Window.model_validate({"maxItems": "3"})


def test_a_built_model_does_not_change() -> None:
    window = Window()
    with pytest.raises(ValidationError, match="frozen"):
        window.max_items = 2  # type: ignore[misc]


@pytest.mark.parametrize("model", [ConfigModel, ArgsModel])
def test_configuration_and_args_share_the_rules(model: type[StrictModel]) -> None:
    assert issubclass(model, StrictModel)
    assert model.model_config == StrictModel.model_config


class Frame(StrictModel):
    inner_window: Window = Window()


def test_files_name_fields_in_camel_case_only() -> None:
    assert Frame.from_document({"innerWindow": {"maxItems": 3}}).inner_window.max_items == 3
    with pytest.raises(ValidationError, match="inner_window"):
        Frame.from_document({"inner_window": {}})
    with pytest.raises(ValidationError, match=r"innerWindow\.max_items"):
        Frame.from_document({"innerWindow": {"max_items": 3}})
    # Python code keeps building models by their field names.
    assert Frame.model_validate({"inner_window": {"max_items": 3}}).inner_window.max_items == 3

"""Reading fields of raw API objects: absent or null levels read as empty."""

from __future__ import annotations

from scheduler.objects.raw import BETA_STORAGE_CLASS
from scheduler.objects.raw import annotations_of
from scheduler.objects.raw import metadata_of
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of


def test_metadata_of_an_object() -> None:
    assert metadata_of({"metadata": {"name": "a", "namespace": "ns"}}) == {
        "name": "a",
        "namespace": "ns",
    }


def test_absent_or_null_levels_read_as_empty() -> None:
    assert metadata_of({"spec": {}}) == {}
    assert metadata_of({"metadata": None}) == {}
    assert spec_of({"spec": None}) == {}
    assert annotations_of({}) == {}
    assert annotations_of({"metadata": {"annotations": None}}) == {}


def test_the_beta_annotation_names_the_class_before_the_spec_field() -> None:
    claim = {
        "metadata": {"annotations": {BETA_STORAGE_CLASS: "old"}},
        "spec": {"storageClassName": "new"},
    }
    assert storage_class_of(claim) == "old"
    assert storage_class_of({"spec": {"storageClassName": "new"}}) == "new"
    assert storage_class_of({"spec": {"storageClassName": None}}) == ""
    # An empty annotation still decides: it asks for no class at all.
    assert storage_class_of({"metadata": {"annotations": {BETA_STORAGE_CLASS: ""}}}) == ""

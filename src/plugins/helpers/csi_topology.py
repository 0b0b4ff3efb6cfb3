"""The zone topology of an in-tree PV as CSI migration rewrites it (csi-translation-lib v0.36.3,
translateTopologyFromInTreeToCSI).

A node migrated to a CSI driver is labelled by the driver with the driver's own zone key, and
may carry no Kubernetes zone label at all; the translated PV's node affinity therefore names the
driver's key instead:

- the PV's zone key is the GA one when its affinity, or else its labels, use it, the beta one when
  they use that, and the GA one when neither names a zone (getTopologyLabel);
- affinity expressions on that key that have values are moved to the CSI key, in every term;
- otherwise the PV's label of that key (zones joined by "__") adds `<CSI key> In <zones>` to every
  term (zones trimmed, without blanks or repeats, sorted), in a term of its own if there is none;
- when the zone key is the beta one, affinity expressions on the beta region key move to the GA
  region key, so that nodes with GA labels only still match.

Region labels of the PV never become affinity; the rewrite cannot fail.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

from plugins.helpers.volumes import labels_of
from scheduler.objects.node import BETA_REGION_LABEL
from scheduler.objects.node import BETA_ZONE_LABEL
from scheduler.objects.node import REGION_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import spec_of

_MULTI_ZONE_DELIMITER = "__"

# (zone key, its region key), in the order a PV's keys are recognised.
_KEY_PAIRS = ((ZONE_LABEL, REGION_LABEL), (BETA_ZONE_LABEL, BETA_REGION_LABEL))


def zone_affinity_for_csi(pv: RawObject, csi_zone_key: str) -> dict[str, Any] | None:
    """The PV's `spec.nodeAffinity` once its zone topology speaks `csi_zone_key`; None when the PV
    has no affinity and gets none. The PV itself is left untouched."""
    affinity: dict[str, Any] | None = copy.deepcopy(spec_of(pv).get("nodeAffinity"))
    zone_key, region_key = _topology_keys(pv, affinity)
    if _has_values(affinity, zone_key):
        _rename_key(affinity, zone_key, csi_zone_key)
    else:
        label = labels_of(pv).get(zone_key)
        if label is not None:
            affinity = _with_zones(affinity, csi_zone_key, label.split(_MULTI_ZONE_DELIMITER))
    if region_key == BETA_REGION_LABEL and _has_values(affinity, region_key):
        _rename_key(affinity, region_key, REGION_LABEL)
    return affinity


def _topology_keys(pv: RawObject, affinity: dict[str, Any] | None) -> tuple[str, str]:
    # The affinity's keys count before the PV's labels, GA before beta.
    named = {expression.get("key") for expression in _expressions(affinity)}
    for zone_key, region_key in _KEY_PAIRS:
        if zone_key in named:
            return zone_key, region_key
    labels = labels_of(pv)
    for zone_key, region_key in _KEY_PAIRS:
        if zone_key in labels:
            return zone_key, region_key
    return ZONE_LABEL, REGION_LABEL


def _terms(affinity: dict[str, Any] | None) -> list[dict[str, Any]]:
    required = (affinity or {}).get("required") or {}
    terms: list[dict[str, Any]] = required.get("nodeSelectorTerms") or []
    return terms


def _expressions(affinity: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    for term in _terms(affinity):
        yield from term.get("matchExpressions") or ()


def _has_values(affinity: dict[str, Any] | None, key: str) -> bool:
    # An expression on the key without values (Exists) does not count: only values move.
    return any(e.get("values") for e in _expressions(affinity) if e.get("key") == key)


def _rename_key(affinity: dict[str, Any] | None, old: str, new: str) -> None:
    # Whatever the operator; an expression already on `new` is kept beside, not merged.
    for expression in _expressions(affinity):
        if expression.get("key") == old:
            expression["key"] = new


def _with_zones(
    affinity: dict[str, Any] | None, key: str, zones: Sequence[str]
) -> dict[str, Any] | None:
    wanted = sorted({zone.strip() for zone in zones if zone.strip()})
    if not wanted:
        # Upstream's addTopology refuses, and the refusal is ignored: the affinity stays.
        return affinity
    result = affinity if affinity is not None else {}
    required = result.get("required")
    if required is None:
        required = result["required"] = {}
    if not required.get("nodeSelectorTerms"):
        required["nodeSelectorTerms"] = [{}]
    for term in required["nodeSelectorTerms"]:
        expressions = term.get("matchExpressions") or []
        expressions.append({"key": key, "operator": "In", "values": list(wanted)})
        term["matchExpressions"] = expressions
    return result

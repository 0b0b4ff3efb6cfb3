"""Node selectors evaluated over every row of the node table at once.

Label expressions go through `NodeTable.match_selector` (memoized per label version); the
only field a node selector may name, metadata.name, is matched against the row names.
The per-node meaning is `scheduler.objects.node_selector`; these functions must agree with it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.framework import NodeTable
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import Requirement
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import NodeSelectorTerm

BoolArray = npt.NDArray[np.bool_]

_NAME_FIELD = "metadata.name"


def _rows_named(table: NodeTable, names: frozenset[str]) -> BoolArray:
    mask = np.zeros(table.size, dtype=np.bool_)
    for name in names:
        row = table.row_of(name)
        if row is not None:
            mask[row] = True
    return mask


def match_name_field(table: NodeTable, requirement: Requirement) -> BoolArray:
    """Rows whose node name satisfies one matchFields requirement."""
    operator = requirement.operator
    if operator == "In":
        return _rows_named(table, requirement.values)
    if operator == "NotIn":
        return ~_rows_named(table, requirement.values)
    if operator == "Exists":
        return np.ones(table.size, dtype=np.bool_)
    if operator == "DoesNotExist":
        return np.zeros(table.size, dtype=np.bool_)
    # Gt/Lt on a name is never valid upstream; evaluate it literally rather than guess.
    return np.fromiter(
        (requirement.matches({_NAME_FIELD: name}) for name in table.names),
        dtype=np.bool_,
        count=table.size,
    )


def match_term(table: NodeTable, term: NodeSelectorTerm) -> BoolArray:
    """Rows matching one NodeSelectorTerm (expressions AND fields); an empty term matches none.

    The result may be a memoized array owned by the table: callers must not modify it.
    """
    if not term.match_expressions and not term.match_fields:
        return np.zeros(table.size, dtype=np.bool_)
    if term.match_expressions:
        mask = table.match_selector(LabelSelector(term.match_expressions))
    else:
        mask = np.ones(table.size, dtype=np.bool_)
    for requirement in term.match_fields:
        mask = mask & match_name_field(table, requirement)
    return mask


def match_node_selector(table: NodeTable, selector: NodeSelector) -> BoolArray:
    """Rows matching any term of `selector` (a selector with no terms matches none)."""
    result = np.zeros(table.size, dtype=np.bool_)
    for term in selector.terms:
        result |= match_term(table, term)
    return result

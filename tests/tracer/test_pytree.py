"""Pytrees: flatten/unflatten round trips and hashable, structure-only treedefs."""
import collections

import numpy as np
import pytest

from ir import ArgumentError
from tracer.pytree import LEAF, flatten, num_leaves, unflatten

Pair = collections.namedtuple("Pair", "a b")
TREES = [
    1.0, None, (), [], {}, (1, 2), [1, [2, (3,)]], {"b": 1, "a": [2, None]},
    (None, {"x": (None,)}), Pair(1, [2, 3]), {"p": Pair(a={"z": 1}, b=None)},
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_round_trip_and_leaf_order(tree):
    leaves, td = flatten(tree)
    assert unflatten(td, leaves) == tree
    assert type(unflatten(td, leaves)) is type(tree)
    assert num_leaves(td) == len(leaves)
    hash(td)


def test_dict_leaves_come_in_sorted_key_order_and_none_is_not_a_leaf():
    leaves, td = flatten({"b": 2, "a": 1, "c": None})
    assert leaves == [1, 2]
    assert flatten(np.ones(2))[1] == LEAF


def test_treedefs_depend_on_structure_not_leaf_values():
    assert flatten((1, [2]))[1] == flatten((np.ones(3), ["x"]))[1]
    assert flatten((1, 2))[1] != flatten([1, 2])[1]
    assert flatten({"a": 1})[1] != flatten({"b": 1})[1]
    assert flatten(Pair(1, 2))[1] != flatten((1, 2))[1]
    assert flatten((1, None))[1] != flatten((1, 2))[1]


def test_mismatched_leaf_counts_and_unsortable_keys_are_errors():
    _, td = flatten((1, 2))
    with pytest.raises(ArgumentError, match="fewer leaves"):
        unflatten(td, [1])
    with pytest.raises(ArgumentError, match="more leaves"):
        unflatten(td, [1, 2, 3])
    with pytest.raises(ArgumentError, match="sortable keys"):
        flatten({1: 1, "a": 2})

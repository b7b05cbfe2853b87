"""Pytrees: nested tuples, lists, dicts (sorted keys) and None around array leaves.

A treedef is a hashable nested tuple, so it can be part of a jit cache key.
"""
LEAF = "*"


def flatten(tree):
    """Return (leaves, treedef)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves):
    t = type(x)
    if t is tuple or t is list:
        return (t.__name__, tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        keys = tuple(sorted(x))
        return ("dict", keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return None
    leaves.append(x)
    return LEAF


def unflatten(treedef, leaves):
    it = iter(leaves)
    out = _unflatten(treedef, it)
    return out


def _unflatten(td, it):
    if td == LEAF:
        return next(it)
    if td is None:
        return None
    if td[0] == "dict":
        return {k: _unflatten(c, it) for k, c in zip(td[1], td[2])}
    children = [_unflatten(c, it) for c in td[1]]
    return tuple(children) if td[0] == "tuple" else children


def num_leaves(treedef):
    if treedef == LEAF:
        return 1
    if treedef is None:
        return 0
    return sum(num_leaves(c) for c in treedef[-1])

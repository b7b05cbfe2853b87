"""Pytrees: nested tuples, lists, namedtuples, dicts (sorted keys) and None around leaves.

A treedef is a hashable nested tuple, so it can be part of a jit cache key.
"""
from ir.errors import ArgumentError

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
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise ArgumentError(f"pytree dicts need sortable keys (e.g. all str), got "
                                f"{list(x)}") from None
        return ("dict", keys, tuple(_flatten(x[k], leaves) for k in keys))
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return ("namedtuple", t, tuple(_flatten(c, leaves) for c in x))
    if x is None:
        return None
    leaves.append(x)
    return LEAF


def unflatten(treedef, leaves):
    """Rebuild the tree of `treedef` from exactly as many leaves as it has."""
    it = iter(leaves)
    out = _unflatten(treedef, it)
    if next(it, it) is not it:
        raise ArgumentError(f"unflatten: more leaves than the tree {treedef} has")
    return out


def _unflatten(td, it):
    if td == LEAF:
        try:
            return next(it)
        except StopIteration:
            raise ArgumentError("unflatten: fewer leaves than the tree has") from None
    if td is None:
        return None
    children = [_unflatten(c, it) for c in td[-1]]
    kind = td[0]
    if kind == "dict":
        return dict(zip(td[1], children))
    if kind == "namedtuple":
        return td[1](*children)
    return tuple(children) if kind == "tuple" else children


def num_leaves(treedef):
    if treedef == LEAF:
        return 1
    if treedef is None:
        return 0
    return sum(num_leaves(c) for c in treedef[-1])

"""Pytree utilities with `jax.tree_util`'s names and semantics.

    from tracer.tree_util import tree_map, register_dataclass
    tree_map(lambda p, g: p - 0.1 * g, params, grads)

Containers are tuples, lists, dicts, OrderedDicts, defaultdicts, NamedTuples, None (a node
with no children) and the types registered here; anything else is a leaf.
"""
from ir.errors import ArgumentError
from tracer.pytree import LEAF, flatten, num_leaves, register_dataclass, register_pytree_node
from tracer.pytree import unflatten

__all__ = ["tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure",
           "register_pytree_node", "register_pytree_node_class", "register_dataclass",
           "PyTreeDef"]


def register_pytree_node_class(cls):
    """Make class `cls` a pytree node through its own methods, as jax's decorator does:
    `x.tree_flatten()` returns (children, aux data), classmethod
    `cls.tree_unflatten(aux_data, children)` rebuilds it. Returns `cls`."""
    missing = [m for m in ("tree_flatten", "tree_unflatten") if not hasattr(cls, m)]
    if not isinstance(cls, type) or missing:
        raise ArgumentError(f"register_pytree_node_class: {cls!r} must be a class with "
                            f"tree_flatten and tree_unflatten methods (missing: {missing})")
    return register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)


class PyTreeDef:
    """The structure of a pytree: what tree_flatten returns besides the leaves."""
    __slots__ = ("_td",)

    def __init__(self, td):
        self._td = td

    @property
    def num_leaves(self):
        return num_leaves(self._td)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._td == other._td

    def __hash__(self):
        return hash(self._td)

    def __repr__(self):
        return f"PyTreeDef({_show(self._td)})"


def _show(td):
    if td == LEAF:
        return "*"
    if td is None:
        return "None"
    kids = [_show(c) for c in td[-1]]
    if td[0] == "dict":
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(td[1], kids)) + "}"
    if td[0] in ("namedtuple", "node"):
        return f"{td[1].__name__}({', '.join(kids)})"
    return ("(" if td[0] == "tuple" else "[") + ", ".join(kids) + (
        ",)" if td[0] == "tuple" and len(kids) == 1 else ")" if td[0] == "tuple" else "]")


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef), leaves in a deterministic order (dicts by sorted key)."""
    leaves, td = flatten(tree, is_leaf)
    return leaves, PyTreeDef(td)


def tree_unflatten(treedef, leaves):
    if not isinstance(treedef, PyTreeDef):
        raise ArgumentError(f"tree_unflatten: expected a PyTreeDef from tree_flatten or "
                            f"tree_structure, got {type(treedef).__name__}")
    return unflatten(treedef._td, list(leaves))


def tree_leaves(tree, is_leaf=None):
    return flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return PyTreeDef(flatten(tree, is_leaf)[1])


def tree_map(f, tree, *rest, is_leaf=None):
    """`f` applied leaf by leaf to `tree` and the trees in `rest`, which must have the
    same structure as `tree` (or have it as a prefix, as in JAX: a leaf of `tree` may
    stand for a whole subtree of a tree in `rest`)."""
    leaves, td = flatten(tree, is_leaf)
    others = [_prefix_leaves(td, r, i) for i, r in enumerate(rest, 1)]
    return unflatten(td, [f(x, *xs) for x, *xs in zip(leaves, *others)])


def _prefix_leaves(td, tree, which):
    """The subtrees of `tree` at the leaves of treedef `td`."""
    out = []

    def walk(t, x):
        if t == LEAF:
            out.append(x)
            return
        if t is None:
            if x is not None:
                raise ArgumentError(f"tree_map: tree {which} has {x!r} where the first tree "
                                    f"has None")
            return
        sub_leaves, sub = flatten(x, lambda y: y is not x)
        kind_ok = (sub != LEAF and sub is not None and sub[:-1] == t[:-1]
                   and len(sub_leaves) == len(t[-1]))
        if not kind_ok:
            raise ArgumentError(f"tree_map: tree {which} does not match the structure of "
                                f"the first tree: {_show(t)} vs {_show(sub)}")
        for c, y in zip(t[-1], sub_leaves):
            walk(c, y)
    walk(td, tree)
    return out

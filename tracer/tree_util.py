"""Pytree utilities with `jax.tree_util`'s names and semantics.

    from tracer.tree_util import tree_map, register_dataclass
    tree_map(lambda p, g: p - 0.1 * g, params, grads)

Containers are tuples, lists, dicts, OrderedDicts, defaultdicts, NamedTuples, None (a node
with no children) and the types registered here; anything else is a leaf.
"""
import functools

from ir.errors import ArgumentError, ArgumentValueError
from tracer.pytree import (LEAF, DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, flatten,
                           flatten_with_path, num_leaves, register_dataclass,
                           register_pytree_node, unflatten)

__all__ = ["tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure",
           "register_pytree_node", "register_pytree_node_class", "register_dataclass",
           "PyTreeDef", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "keystr", "SequenceKey", "DictKey", "GetAttrKey",
           "FlattenedIndexKey", "register_pytree_with_keys", "register_pytree_with_keys_class",
           "register_static", "tree_reduce", "tree_all", "tree_transpose", "all_leaves",
           "treedef_children", "treedef_is_leaf", "treedef_tuple", "Partial"]


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

    @property
    def num_nodes(self):
        return _num_nodes(self._td)

    def unflatten(self, leaves):
        return unflatten(self._td, list(leaves))

    def children(self):
        """The treedefs of the root's children, as JAX's."""
        return [] if self._td in (LEAF, None) else [PyTreeDef(c) for c in self._td[-1]]

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this structure's leaves (this is a prefix of its)."""
        return _prefix_leaves(self._td, tree, 1, "flatten_up_to")

    def __repr__(self):
        return f"PyTreeDef({_show(self._td)})"


def _num_nodes(td):
    return 1 if td in (LEAF, None) else 1 + sum(_num_nodes(c) for c in td[-1])


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


def structure_difference(want, got, n_want, n_got):
    """How one-level treedef `got` (with `n_got` children) differs from `want`, in JAX's
    words ("types", "numbers of pytree children", "pytree metadata"), or None."""
    if LEAF in (want, got) or None in (want, got) or want[0] != got[0]:
        return "types"
    if n_want != n_got:
        return "numbers of pytree children"
    return "pytree metadata" if want[:-1] != got[:-1] else None


def _prefix_leaves(td, tree, which, where="tree_map"):
    """The subtrees of `tree` at the leaves of treedef `td`; where they differ, JAX's
    ValueError naming the key path (also an ArgumentError, as tracer's other refusals)."""
    out = []

    def walk(t, x, path):
        if t == LEAF:
            out.append(x)
            return
        if t is None:
            if x is not None:
                raise ArgumentValueError(f"pytree structure error: {where}: tree {which} has "
                                         f"{x!r} at key path {keystr(path)!r} where the "
                                         f"first tree has None")
            return
        pairs, sub = flatten_with_path(x, lambda p, y: y is not x)
        what = structure_difference(t, sub, len(t[-1]), len(pairs))
        if what is not None:
            raise ArgumentValueError(
                f"pytree structure error: different {what} at key path\n    {where} tree "
                f"{which}{keystr(path)}\n{where}: tree {which} does not match the structure "
                f"of the first tree there: {_show(t)} vs {_show(sub)}")
        for c, (p, y) in zip(t[-1], pairs):
            walk(c, y, path + p)
    walk(td, tree, ())
    return out


# ---- key paths -------------------------------------------------------------------------

def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf)], treedef): a key path is a tuple of SequenceKey, DictKey,
    GetAttrKey (namedtuple and dataclass fields) and FlattenedIndexKey entries."""
    test = is_leaf if is_leaf is None or is_leaf_takes_path else (lambda _, x: is_leaf(x))
    pairs, td = flatten_with_path(tree, test)
    return pairs, PyTreeDef(td)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(path, leaf, *leaves of rest) per leaf of `tree` (a prefix of the trees in rest)."""
    pairs, td = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [_prefix_leaves(td._td, r, i, "tree_map_with_path") for i, r in enumerate(rest, 1)]
    return td.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def keystr(keys, *, simple=False, separator=""):
    """A key path as text: "['a'][0].w", or with simple=True and separator="/", "a/0/w"."""
    def simple_str(k):
        for field in ("idx", "key", "name"):
            if hasattr(k, field):
                return str(getattr(k, field))
        return str(k)
    return separator.join(map(simple_str if simple else str, keys))


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """As register_pytree_node, with `flatten_with_keys(x)` returning ([(key, child)],
    aux), so that key paths name the children with the keys given."""
    def plain(x):
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    return register_pytree_node(nodetype, flatten_func or plain, unflatten_func,
                                lambda x: [k for k, _ in flatten_with_keys(x)[0]])


def register_pytree_with_keys_class(cls):
    """A class with `tree_flatten_with_keys()` and classmethod `tree_unflatten`."""
    missing = [m for m in ("tree_flatten_with_keys", "tree_unflatten") if not hasattr(cls, m)]
    if not isinstance(cls, type) or missing:
        raise ArgumentError(f"register_pytree_with_keys_class: {cls!r} must be a class with "
                            f"tree_flatten_with_keys and tree_unflatten (missing: {missing})")
    return register_pytree_with_keys(cls, cls.tree_flatten_with_keys, cls.tree_unflatten,
                                     getattr(cls, "tree_flatten", None))


def register_static(cls):
    """Instances of `cls` become pytrees with no leaves: jit takes them as static (they are
    part of its cache key, so they must be hashable)."""
    return register_pytree_node(cls, lambda x: ((), x), lambda x, _: x, lambda x: [])


# ---- whole trees -----------------------------------------------------------------------

_NO_INITIALIZER = object()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    leaves = flatten(tree, is_leaf)[0]
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    return all(flatten(tree, is_leaf)[0])


def all_leaves(iterable, is_leaf=None):
    """True if every element of `iterable` is a leaf."""
    return all(flatten(x, is_leaf)[1] == LEAF for x in iterable)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """A tree of structure outer(inner) as one of structure inner(outer), as JAX's; with
    inner_treedef None, inferred from the first outer leaf."""
    leaves, td = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if td.num_leaves != n_in * n_out:
        raise ArgumentError(f"tree_transpose: the tree has {td.num_leaves} leaves, not "
                            f"{n_out} (outer {outer_treedef}) x {n_in} (inner {inner_treedef})")
    rows = [leaves[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    return treedef._td == LEAF or treedef._td is None


def treedef_tuple(treedefs):
    """The treedef of a tuple of trees of these structures."""
    return PyTreeDef(("tuple", tuple(t._td for t in treedefs)))


class Partial(functools.partial):
    """functools.partial that is a pytree: its bound arguments are leaves (traced under
    jit), its function is static, so `jit(lambda f, x: f(x))(Partial(tnp.add, 1), 2)`
    works as in JAX."""


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))

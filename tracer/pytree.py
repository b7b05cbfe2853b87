"""Pytrees: nested tuples, lists, namedtuples, dicts (sorted keys), OrderedDicts (their
own order), defaultdicts (sorted keys; the default_factory is structure), None, and
registered node types (`register_pytree_node`, `register_dataclass`) around leaves, as in
JAX. Subclasses of these (other than namedtuples) are leaves unless registered.

A treedef is a hashable nested tuple, so it can be part of a jit cache key: a registered
node's auxiliary data (what its flatten returns besides the children) must be hashable.
`tracer.tree_util` is the public face of this module.
"""
import collections
import dataclasses

from ir.errors import ArgumentError, ArgumentValueError
from lowering import forks

LEAF = "*"
_nodes = {}                 # type -> (flatten(x) -> (children, aux), unflatten(aux, children))
_keys = {}                  # type -> keys(x): a key entry per child of its flatten
_lock = forks.lock()


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A tuple's or list's child, in a key path (jax.tree_util's names and strings)."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: object

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """A child of a node registered without keys: its position in the flatten."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def register_pytree_node(nodetype, flatten_fn, unflatten_fn, keys=None):
    """Make `nodetype` a pytree node: `flatten_fn(x)` returns (children, aux) and
    `unflatten_fn(aux, children)` rebuilds x; aux must be hashable (it is part of cache
    keys). `keys(x)`, if given, names each child in key paths (else FlattenedIndexKey)."""
    if not isinstance(nodetype, type):
        raise ArgumentError(f"register_pytree_node: expected a type, got {nodetype!r}")
    if not (callable(flatten_fn) and callable(unflatten_fn)):
        raise ArgumentError("register_pytree_node: flatten and unflatten must be callable")
    with _lock:
        _nodes[nodetype] = (flatten_fn, unflatten_fn)
        _keys.pop(nodetype, None)
        if keys is not None:
            _keys[nodetype] = keys
    return nodetype


def register_dataclass(nodetype, data_fields=None, meta_fields=None):
    """Make dataclass `nodetype` a pytree: `data_fields` are children (arrays), and
    `meta_fields` static, hashable auxiliary data. By default a field is meta if declared
    with `dataclasses.field(metadata={"static": True})` and data otherwise (as in JAX)."""
    if not dataclasses.is_dataclass(nodetype):
        raise ArgumentError(f"register_dataclass: {nodetype!r} is not a dataclass")
    fields = [f for f in dataclasses.fields(nodetype) if f.init]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    names = [f.name for f in fields]
    meta = tuple(meta_fields or ())
    data = tuple(data_fields) if data_fields is not None else tuple(
        n for n in names if n not in meta)
    if sorted(data + meta) != sorted(names):
        raise ArgumentError(f"register_dataclass({nodetype.__name__}): data_fields {data} and "
                            f"meta_fields {meta} must together list every init field {names}")

    def flatten_fn(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten_fn(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))
    return register_pytree_node(nodetype, flatten_fn, unflatten_fn,
                                lambda x: [GetAttrKey(n) for n in data])


def is_pytree(x):
    """True if `x` is a container (not a leaf) of pytrees."""
    t = type(x)
    return (t in (tuple, list, dict) or x is None or t in _nodes
            or isinstance(x, tuple) and hasattr(t, "_fields"))


def flatten(tree, is_leaf=None):
    """Return (leaves, treedef)."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(x, leaves, is_leaf=None):
    t = type(x)
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    if t is tuple or t is list:
        return (t.__name__, tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is dict:
        keys = _sorted_keys(x)
        return ("dict", keys, tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    if x is None:
        return None
    node = _nodes.get(t)
    if node is not None:
        children, aux = _node_parts(node, x)
        return ("node", t, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return ("namedtuple", t, tuple(_flatten(c, leaves, is_leaf) for c in x))
    leaves.append(x)
    return LEAF


def _node_parts(node, x):
    """(children, aux) of registered node x; aux must be hashable."""
    children, aux = node[0](x)
    try:
        hash(aux)
    except TypeError:
        raise ArgumentError(f"pytree node {type(x).__name__}: its auxiliary data {aux!r} is "
                            f"not hashable (it is part of jit's cache key)") from None
    return children, aux


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError as e:      # JAX's words (its ValueError), then Python's and ours
        raise ArgumentValueError(f"Comparator raised exception while sorting pytree "
                                 f"dictionary keys ({e}): pytree dicts need sortable keys "
                                 f"(e.g. all str), got {list(d)}") from None


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, children: collections.OrderedDict(zip(keys, children)),
                     lambda d: [DictKey(k) for k in d])
register_pytree_node(collections.defaultdict, _flatten_defaultdict,
                     lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children)),
                     lambda d: [DictKey(k) for k in _sorted_keys(d)])


def flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], treedef), with `is_leaf(path, x)`. A walk of its own, as
    flatten's is, rather than paths kept by flatten, which jit runs on every call."""
    pairs = []
    return pairs, _flatten_paths(tree, (), pairs, is_leaf)


def _flatten_paths(x, path, pairs, is_leaf):
    t = type(x)
    if is_leaf is not None and is_leaf(path, x):
        pairs.append((path, x))
        return LEAF
    if t is tuple or t is list:
        return (t.__name__, tuple(_flatten_paths(c, path + (SequenceKey(i),), pairs, is_leaf)
                                  for i, c in enumerate(x)))
    if t is dict:
        keys = _sorted_keys(x)
        return ("dict", keys, tuple(_flatten_paths(x[k], path + (DictKey(k),), pairs, is_leaf)
                                    for k in keys))
    if x is None:
        return None
    if t in _nodes:
        children, aux = _node_parts(_nodes[t], x)
        keys = _keys[t](x) if t in _keys else map(FlattenedIndexKey, range(len(children)))
        return ("node", t, aux, tuple(_flatten_paths(c, path + (k,), pairs, is_leaf)
                                      for k, c in zip(keys, children)))
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return ("namedtuple", t, tuple(_flatten_paths(c, path + (GetAttrKey(f),), pairs,
                                                      is_leaf) for f, c in zip(t._fields, x)))
    pairs.append((path, x))
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
    if kind == "node":
        return _nodes[td[1]][1](td[2], children)
    return tuple(children) if kind == "tuple" else children


def leaf_paths(treedef, prefix=""):
    """Each leaf's path in the tree, as JAX's keystr writes it: "[0]", "['a']", ".x"."""
    if treedef == LEAF:
        return [prefix]
    if treedef is None:
        return []
    kind, children = treedef[0], treedef[-1]
    keys = ([f"[{k!r}]" for k in treedef[1]] if kind == "dict" else
            [f".{f}" for f in treedef[1]._fields] if kind == "namedtuple" else
            [f"[{i}]" for i in range(len(children))])
    return [p for k, c in zip(keys, children) for p in leaf_paths(c, prefix + k)]


def num_leaves(treedef):
    if treedef == LEAF:
        return 1
    if treedef is None:
        return 0
    return sum(num_leaves(c) for c in treedef[-1])

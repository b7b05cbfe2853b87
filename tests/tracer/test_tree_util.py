"""tracer.tree_util: JAX's pytree functions, registered node types and dataclasses."""
import collections
import dataclasses

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError
from tracer import tree_util as tu

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class Linear:
    w: object
    b: object
    name: str = dataclasses.field(default="linear", metadata={"static": True})


tu.register_dataclass(Linear)


class Box:
    """A user type registered by hand: one child and hashable aux data."""

    def __init__(self, value, tag):
        self.value, self.tag = value, tag


tu.register_pytree_node(Box, lambda b: ([b.value], b.tag), lambda tag, kids: Box(kids[0], tag))


def test_flatten_unflatten_structure_and_leaves():
    tree = {"x": (1, [2, None]), "p": Pair(3, 4), "lin": Linear(5, 6), "box": Box(7, "t")}
    leaves, td = tu.tree_flatten(tree)
    assert leaves == [7, 5, 6, Pair(3, 4).a, 4, 1, 2] and td.num_leaves == 7
    back = tu.tree_unflatten(td, leaves)
    assert back["lin"] == Linear(5, 6) and back["box"].tag == "t" and back["x"] == (1, [2, None])
    assert tu.tree_structure(tree) == td and tu.tree_leaves(tree) == leaves
    assert repr(tu.tree_structure({"a": (1,), "b": [2]})) == "PyTreeDef({'a': (*,), 'b': [*]})"


def test_tree_map_with_prefix_trees_and_is_leaf():
    assert tu.tree_map(lambda a, b: a + b, {"a": 1, "b": (2, 3)},
                       {"a": 10, "b": (20, 30)}) == {"a": 11, "b": (22, 33)}
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), ((5, 6), [7])) == ((1, (5, 6)), (2, [7]))
    assert tu.tree_map(len, [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple)) == [2, 1]
    with pytest.raises(ArgumentError, match="does not match"):
        tu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))


def test_structure_mismatch_is_jaxs_value_error_naming_the_key_path():
    """JAX raises ValueError ("pytree structure error") at the first key path where a
    tree in `rest` differs from the first: `except ValueError` in user code catches ours."""
    x = {"a": 1, "c": [1, 2], "d": 4}
    y = {"a": 1, "c": None, "d": {"d1": 4.1}}
    with pytest.raises(ValueError, match=r"different types at key path\n    tree_map tree 1\['c'\]"):
        tu.tree_map(lambda a, b: a, x, y, is_leaf=lambda v: v is None)
    with pytest.raises(ValueError, match=r"different numbers of pytree children .*\n.* tree 2\[1\]"):
        tu.tree_map(lambda a, b, c: a, [1, (2, 3)], [1, (2, 3)], [1, (2, 3, 4)])
    with pytest.raises(ValueError, match=r"pytree metadata .*\n    tree_map_with_path tree 1\['a'\]"):
        tu.tree_map_with_path(lambda p, a, b: a, {"a": {"u": 1}}, {"a": {"v": 1}})


def test_static_fields_are_static_and_aux_must_be_hashable():
    calls = []

    @tracer.jit
    def apply(layer, x):
        calls.append(layer.name)
        return x @ layer.w + layer.b
    w, b, x = np.ones((3, 2)), np.zeros(2), np.ones((4, 3))
    np.testing.assert_allclose(apply(Linear(w, b), x), x @ w + b)
    apply(Linear(w * 2, b), x)                      # same structure: no new trace
    apply(Linear(w, b, name="other"), x)            # new static field: traced again
    assert calls == ["linear", "other"]
    tu.register_pytree_node(Box, lambda b: ([b.value], [b.tag]), lambda t, k: Box(k[0], t[0]))
    try:
        with pytest.raises(ArgumentError, match="not hashable"):
            tu.tree_flatten(Box(1, "t"))
    finally:
        tu.register_pytree_node(Box, lambda b: ([b.value], b.tag),
                                lambda tag, kids: Box(kids[0], tag))


def test_grad_of_a_dataclass_and_namedtuple_returns_the_same_types():
    def loss(p, x):
        return tnp.sum((x @ p.w + p.b) ** 2)
    p, x = Linear(np.ones((3, 2)), np.zeros(2)), np.ones((4, 3))
    g = tracer.grad(loss)(p, x)
    assert isinstance(g, Linear) and g.name == "linear"
    np.testing.assert_allclose(g.w, 2 * x.T @ (x @ p.w + p.b))
    gp = tracer.jit(tracer.grad(lambda q: tnp.sum(q.a * q.b)))(Pair(np.ones(2), np.full(2, 3.)))
    assert isinstance(gp, Pair) and np.allclose(gp.a, 3)


def test_register_pytree_node_class_as_jax():
    register_pytree_node_class, tree_leaves = tu.register_pytree_node_class, tu.tree_leaves

    @register_pytree_node_class
    class Pair:
        def __init__(self, a, b, name="p"):
            self.a, self.b, self.name = a, b, name

        def tree_flatten(self):
            return (self.a, self.b), self.name

        @classmethod
        def tree_unflatten(cls, name, children):
            return cls(*children, name=name)

    p = Pair(np.float32(2.0), np.arange(3.0), "q")
    assert [np.asarray(x).tolist() for x in tree_leaves(p)] == [2.0, [0.0, 1.0, 2.0]]
    for f in (tracer.jit(lambda p: Pair(p.a * p.b, p.b + 1.0, p.name)),
              tracer.jit(lambda p: Pair(p.a * p.b, p.b + 1.0, p.name), backend="numpy")):
        out = f(p)
        assert isinstance(out, Pair) and out.name == "q"
        np.testing.assert_allclose(out.a, [0.0, 2.0, 4.0])
    g = tracer.grad(lambda p: tnp.sum(p.a * p.b))(
        Pair(np.float32(2.0), np.arange(3.0, dtype=np.float32)))
    np.testing.assert_allclose(g.a, 3.0)
    np.testing.assert_allclose(g.b, [2.0, 2.0, 2.0])
    v = tracer.vmap(lambda p: p.a * p.b)(Pair(np.arange(2.0), np.ones((2, 3))))
    np.testing.assert_allclose(v, [[0, 0, 0], [1, 1, 1]])
    with pytest.raises(TypeError, match="register_pytree_node_class.*tree_flatten"):
        register_pytree_node_class(int)


# ---- key paths and the rest of jax.tree_util's names ------------------------------------

def _mixed_tree():
    P = collections.namedtuple("P", "w b")

    @dataclasses.dataclass
    class D:
        a: object
        s: int = dataclasses.field(metadata={"static": True}, default=0)
    tu.register_dataclass(D)
    return {"x": [1.0, (2.0, None)], "p": P(3.0, 4.0),
            "o": collections.OrderedDict(z=5.0, a=6.0), "d": D(7.0, 1)}


def test_key_paths_name_each_leaf_as_jax_does():
    """Strings checked against jax.tree_util 0.10.2's on the same tree."""
    pairs = tu.tree_leaves_with_path(_mixed_tree())
    assert [(tu.keystr(p), v) for p, v in pairs] == [
        ("['d'].a", 7.0), ("['o']['z']", 5.0), ("['o']['a']", 6.0), ("['p'].w", 3.0),
        ("['p'].b", 4.0), ("['x'][0]", 1.0), ("['x'][1][0]", 2.0)]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == [
        "d/a", "o/z", "o/a", "p/w", "p/b", "x/0", "x/1/0"]
    assert [v for _, v in pairs] == tu.tree_leaves(_mixed_tree())
    pairs, td = tu.tree_flatten_with_path([1, [2, 3]], is_leaf=lambda p, x: len(p) == 1,
                                          is_leaf_takes_path=True)
    assert [v for _, v in pairs] == [1, [2, 3]] and td.num_leaves == 2


def test_tree_map_with_path_takes_prefix_trees():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y),
                                {"a": 1, "b": [2, 3]}, {"a": 10, "b": [20, 30]})
    assert out == {"a": ("['a']", 11), "b": [("['b'][0]", 22), ("['b'][1]", 33)]}
    with pytest.raises(TypeError, match="tree_map_with_path: tree 1 does not match"):
        tu.tree_map_with_path(lambda p, x, y: x, [1, 2], (1, 2))


def test_keyed_registration_and_flat_index_keys():
    class Box:
        def __init__(self, v, w):
            self.v, self.w = v, w
    tu.register_pytree_with_keys(Box, lambda b: ([(tu.GetAttrKey("v"), b.v),
                                                  (tu.GetAttrKey("w"), b.w)], None),
                                 lambda _, c: Box(*c))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([Box(1, 2)])] == ["[0].v",
                                                                                "[0].w"]

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, 2))] == [
        "[<flat index 0>]", "[<flat index 1>]"]


def test_reduce_all_transpose_and_treedef_helpers():
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2, (3,)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    assert tu.tree_all([True, (1, 1)]) and not tu.tree_all([True, (1, 0)])
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    rows = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, rows) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, rows) == ([1, 4], [2, 5], [3, 6])
    with pytest.raises(TypeError, match="tree_transpose"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), rows)
    td = tu.tree_structure((1, [2, 3]))
    assert td.num_nodes == 5 and tu.treedef_children(td)[1] == tu.tree_structure([0, 0])
    assert tu.treedef_is_leaf(tu.tree_structure(1)) and not tu.treedef_is_leaf(td)
    assert tu.treedef_tuple([tu.tree_structure([1]), tu.tree_structure(1)]) == \
        tu.tree_structure(([0], 0))
    assert td.unflatten([7, 8, 9]) == (7, [8, 9]) and td.flatten_up_to((1, [2, [3]])) == [
        1, 2, [3]]
    assert tu.all_leaves([1, 2.0]) and not tu.all_leaves([1, [2]])
    assert tracer.tree.map(lambda x: 2 * x, {"a": 1}) == {"a": 2}


def test_partial_and_static_types_pass_through_jit():
    call = tracer.jit(lambda f, x: f(x))
    assert call(tu.Partial(tnp.add, np.float32(1)), np.float32(2)) == 3.0

    @tu.register_static
    class Op(str):
        pass
    g = tracer.jit(lambda x, op: x + 1 if op == "add" else x - 1)
    assert g(1.0, Op("add")) == 2.0 and g(1.0, Op("sub")) == 0.0

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

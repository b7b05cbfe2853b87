"""OrderedDict and defaultdict are pytrees, as in JAX: an OrderedDict keeps its insertion
order, a defaultdict sorts its keys (as dict does) and keeps its default_factory."""
import collections

import numpy as np

import tracer
import tracer.numpy as tnp
from tracer.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten


def test_ordered_dict_flattens_in_insertion_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]
    back = tree_unflatten(td, [10, 20])
    assert type(back) is collections.OrderedDict and list(back.items()) == [("b", 10),
                                                                            ("a", 20)]
    assert td != tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    assert td != tree_structure({"b": 1, "a": 2})


def test_defaultdict_sorts_keys_and_keeps_its_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, td = tree_flatten(dd)
    assert leaves == [2, 1]
    back = tree_map(lambda x: x * 10, dd)
    assert type(back) is collections.defaultdict and back.default_factory is list
    assert dict(back) == {"a": 20, "b": 10} and back["missing"] == []
    assert td != tree_structure(collections.defaultdict(int, {"b": 1, "a": 2}))
    assert td != tree_structure({"b": 1, "a": 2})


def test_dict_kinds_as_transform_arguments():
    def f(d):
        return d["a"] * 2.0 + tnp.sin(d["b"])
    for kind in (lambda items: collections.OrderedDict(items),
                 lambda items: collections.defaultdict(float, items)):
        d = kind([("b", np.float64(0.5)), ("a", np.float64(1.5))])
        g = tracer.grad(f)(d)
        assert type(g) is type(d) and list(g) == list(tree_map(lambda x: x, d))
        assert float(g["a"]) == 2.0 and float(g["b"]) == np.cos(0.5)
        assert float(tracer.jit(f, backend="numpy")(d)) == 3.0 + np.sin(0.5)
        out = tracer.vmap(f)(kind([("b", np.zeros(3)), ("a", np.arange(3.0))]))
        assert out.tolist() == [0.0, 2.0, 4.0]


def test_static_dict_kinds_keep_order_and_factory_in_the_cache_key():
    od = collections.OrderedDict
    f = tracer.jit(lambda x, d: x * list(d.values())[0], static_argnums=1, backend="numpy")
    assert f(np.ones(1), od([("a", 1.0), ("b", 2.0)])).tolist() == [1.0]
    assert f(np.ones(1), od([("b", 2.0), ("a", 1.0)])).tolist() == [2.0]
    g = tracer.jit(lambda x, d: x * d["missing"], static_argnums=1, backend="numpy")
    assert g(np.ones(1), collections.defaultdict(lambda: 3.0)).tolist() == [3.0]
    assert g(np.ones(1), collections.defaultdict(lambda: 5.0)).tolist() == [5.0]

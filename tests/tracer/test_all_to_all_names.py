"""all_to_all over a tuple of axis names (JAX's batching_test runs it over ('i', 'j')):
positions numbered row-major over the names, as axis_index does. Checked against a NumPy
oracle of its definition (position p gets block p of every position's split axis, in
position order along concat_axis), eagerly, under jit on both backends, and its gradient
(it moves elements: the gradient moves them back); the same cases matched jax 0.10.2's
nested vmaps."""
import itertools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ShapeError
from tracer import lax

SIZES = {"i": 2, "j": 3, "k": 2}
RNG = np.random.default_rng(0)


def oracle(x, k, split, concat, tiled):
    """all_to_all of x, whose first k axes are the positions (row-major)."""
    outer, inner = x.shape[:k], x.shape[k:]
    n = int(np.prod(outer))
    xs = x.reshape((n,) + inner)
    out = [np.concatenate([np.split(xs[s], n, axis=split)[p] for s in range(n)], axis=concat)
           if tiled else np.stack([np.take(xs[s], p, axis=split) for s in range(n)], axis=concat)
           for p in range(n)]
    return np.stack(out).reshape(outer + out[0].shape)


def mapped(names, order, split, concat, tiled):
    """f vmapped over the names of `order` (outermost first), x's leading axes."""
    f = lambda v: lax.all_to_all(v, names, split, concat, tiled=tiled)
    for name in reversed(order):
        f = tracer.vmap(f, axis_name=name)
    return f


CASES = [(names, tiled, split, concat)
         for names in [("i", "j"), ("j", "i"), ("i", "j", "k")]
         for tiled in (False, True) for split, concat in itertools.product(range(2), range(2))]


@pytest.mark.parametrize("names,tiled,split,concat", CASES)
def test_values_eagerly_and_jitted(names, tiled, split, concat):
    order = sorted(names)
    inner = [4, 5]
    inner[split] = int(np.prod([SIZES[a] for a in names])) * (2 if tiled else 1)
    x = RNG.standard_normal([SIZES[a] for a in order] + inner).astype(np.float32)
    # the oracle numbers positions in the order of `names`: bring their axes first
    perm = [order.index(a) for a in names]
    want = oracle(np.transpose(x, perm + [len(order), len(order) + 1]), len(names), split,
                  concat, tiled)
    want = np.transpose(want, list(np.argsort(perm)) + [len(order), len(order) + 1])
    f = mapped(names, order, split, concat, tiled)
    for run in (f, tracer.jit(f), tracer.jit(f, backend="numpy")):
        np.testing.assert_array_equal(np.asarray(run(x)), want)


@pytest.mark.parametrize("tiled", [False, True])
def test_gradient_moves_the_elements_back(tiled):
    names, n = ("i", "j"), 6
    x = np.arange(2 * 3 * n * (1 + tiled) * 5, dtype=np.float64).reshape(2, 3, n * (1 + tiled), 5)
    w = RNG.standard_normal(oracle(x, 2, 0, 1, tiled).shape)
    f = mapped(names, names, 0, 1, tiled)
    g = tracer.grad(lambda x: tnp.sum(f(x) * w))(x)
    moved = oracle(x, 2, 0, 1, tiled).astype(np.int64)      # which element went where
    want = np.zeros(x.size)
    want[moved.ravel()] = w.ravel()
    np.testing.assert_allclose(g, want.reshape(x.shape))


def test_a_split_axis_not_a_multiple_of_the_positions_is_an_error():
    f = mapped(("i", "j"), ("i", "j"), 0, 0, True)
    with pytest.raises(ShapeError, match="all_to_all.*multiple of the axis size 6"):
        f(np.zeros((2, 3, 4)))

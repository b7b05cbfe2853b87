"""tracer.flatten_util.ravel_pytree (jax.flatten_util's): round trips of nested pytrees,
the promoted dtype of mixed leaves and its cast back, JAX's dtype check in unravel, the
empty pytree, and unravel differentiated, jitted and vmapped."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import DTypeError, ShapeError
from tracer.flatten_util import ravel_pytree

RNG = np.random.default_rng(5)
TREE = (1.0, RNG.normal(size=(2, 3)), [RNG.normal(size=(1, 4)),
                                       {"y": RNG.normal(size=(4, 2)), "x": 2.0}], ())


def assert_same_tree(got, want):
    got_leaves, got_tree = tracer.tree_util.tree_flatten(got)
    want_leaves, want_tree = tracer.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_round_trip_in_tree_order():
    flat, unravel = ravel_pytree(TREE)
    want = np.concatenate([np.ravel(leaf) for leaf in tracer.tree_util.tree_leaves(TREE)])
    assert flat.dtype == np.float64
    np.testing.assert_array_equal(flat, want)
    assert flat[0] == 1.0 and flat[-1] == TREE[2][1]["y"][-1, -1]   # dict keys sorted
    assert_same_tree(unravel(flat), TREE)
    np.testing.assert_array_equal(ravel_pytree(unravel(flat * 2))[0], flat * 2)


@pytest.mark.parametrize("dtypes,promoted", [
    ((np.float32, np.int32), np.float64),           # NumPy 2's rule (JAX: float32)
    ((np.float32, np.float16), np.float32),
    ((np.int8, np.uint8, np.bool_), np.int16),
    ((tnp.bfloat16, np.float16), np.float32)])
def test_mixed_dtypes_are_promoted_and_cast_back(dtypes, promoted):
    tree = {f"k{i}": np.arange(i + 2).astype(dt) for i, dt in enumerate(dtypes)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == promoted
    assert_same_tree(unravel(flat), tree)
    wrong = np.float64 if promoted != np.float64 else np.float32
    with pytest.raises(DTypeError, match=f"given array of dtype {np.dtype(wrong)}, but "
                                         f"expected dtype {np.dtype(promoted)}"):
        unravel(flat.astype(wrong))


def test_one_dtype_unravel_keeps_the_vectors_dtype_and_python_scalars_are_strong():
    flat, unravel = ravel_pytree([np.ones(2, np.float32), np.float32(3)])
    assert flat.dtype == np.float32
    assert [leaf.dtype for leaf in unravel(flat.astype(np.float64))] == [np.float64] * 2
    assert ravel_pytree([np.ones(2, np.float32), 1.0])[0].dtype == np.float64   # as JAX
    with pytest.raises(ShapeError, match="expected a vector of 3 elements.*shape \\(4,\\)"):
        unravel(np.ones(4, np.float32))


def test_empty_pytree_is_an_empty_float32_vector():
    for tree in [(), {}, [(), {}], None]:
        flat, unravel = ravel_pytree(tree)
        assert flat.shape == (0,) and flat.dtype == np.float32
        assert unravel(flat) == tree


def test_grads_through_unravel_and_ravel_jitted_and_vmapped():
    tree = {"w": RNG.normal(size=(2, 2)), "b": np.float32(0.5)}
    flat, unravel = ravel_pytree(tree)

    def loss(v):
        p = unravel(v)
        return tnp.sum(p["w"] ** 2) * p["b"]
    want = np.concatenate([[np.sum(tree["w"] ** 2)], 2 * tree["w"].ravel() * 0.5])
    for f in (tracer.grad(loss), tracer.jit(tracer.grad(loss))):
        np.testing.assert_allclose(f(flat), want, rtol=1e-6)    # b went through float32
    tracer.check_grads(lambda v: tnp.sum(unravel(v)["w"] ** 3), (flat,), order=2)
    grads = tracer.grad(lambda t: tnp.sum(ravel_pytree(t)[0] ** 3))(tree)
    assert_same_tree(grads, {"w": 3 * tree["w"] ** 2, "b": np.float32(3 * 0.25)})
    batch = tracer.vmap(unravel)(np.stack([flat, -flat]))
    np.testing.assert_array_equal(batch["w"], np.stack([tree["w"], -tree["w"]]))

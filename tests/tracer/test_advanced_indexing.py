"""Advanced indexing (several index arrays, boolean masks), JAX's x.at[...] updates, item
assignment errors, and NumPy's own functions applied to traced values."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError, OutOfBoundsError, ShapeError

X = np.arange(24.0).reshape(4, 6)
KEYS = [(np.array([0, 2]), np.array([1, 3])), (np.array([[0], [3]]), np.array([1, 2, 5])),
        (slice(None), np.array([0, 0]), None), (np.array([1, 2]), slice(1, 4)),
        np.array([True, False, True, True]), (X[:, 0] > 5,), (Ellipsis, np.array([5, -1])),
        (np.array([-1, 0]), np.array([[1], [2]]))]


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("key", range(len(KEYS)))
def test_getitem_matches_numpy(key, backend):
    k = KEYS[key]
    np.testing.assert_array_equal(tracer.jit(lambda x: x[k], backend=backend)(X), X[k])
    np.testing.assert_array_equal(tnp.getitem(X, k), X[k])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_at_updates_match_numpy_with_repeated_positions(how, backend):
    idx = (np.array([0, 2, 0, 3, 0]), np.array([1, 5, 1, 0, 1]))
    v = np.array([10.0, -3.0, 7.0, 2.0, 5.0])
    want = X.copy()
    if how == "set":
        want[idx] = v                                     # last of a repeated position wins
    else:
        {"add": np.add, "multiply": np.multiply, "min": np.minimum,
         "max": np.maximum}[how].at(want, idx, v)
    f = tracer.jit(lambda x, v: getattr(x.at[idx], how)(v), backend=backend)
    np.testing.assert_array_equal(f(X, v), want)


def test_at_with_a_traced_index_slices_and_get():
    f = tracer.jit(lambda x, i, v: (x.at[i].set(v), x.at[i, 1:3].add(1.0), x.at[i].get()))
    a, b, c = f(X, 2, np.full(6, -1.0))
    np.testing.assert_array_equal(a[2], -1)
    np.testing.assert_array_equal(b[2, 1:3], X[2, 1:3] + 1)
    np.testing.assert_array_equal(c, X[2])
    np.testing.assert_array_equal(X, np.arange(24.0).reshape(4, 6))     # unchanged


def test_at_updates_differentiate():
    def f(x, v):
        return tnp.sum(x.at[np.array([0, 0, 2])].set(v) * x) + tnp.sum(x.at[1].max(v[0]))
    x, v = np.array([0.5, -1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    tracer.check_grads(tracer.jit(f), (x, v), order=2)   # eager NumPy arrays have no .at


def test_errors_say_what_to_do():
    with pytest.raises(ArgumentError, match=r"immutable.*\.at\[.*\]\.set"):
        tracer.jit(lambda x: x.__setitem__(0, 1.0))(X)
    with pytest.raises(ShapeError, match="boolean mask.*where"):
        tracer.jit(lambda x: x[x > 3])(X)
    with pytest.raises(OutOfBoundsError, match="out of bounds"):
        tracer.jit(lambda x: x[np.array([0, 9]), np.array([0, 1])])(X)


def test_numpy_functions_dispatch_to_tracer_numpy():
    def f(x):
        y = np.sin(x) + np.add(x, 1) * np.float64(2)
        return (np.sum(y, axis=0), np.concatenate([x, y]), np.add.reduce(x),
                np.mean(np.maximum(x, 3.0)), np.cumsum(x, axis=1))
    got = tracer.jit(f)(X)
    for g, w in zip(got, f(X)):
        np.testing.assert_allclose(g, w)
    np.testing.assert_allclose(tracer.grad(lambda x: np.sum(np.tanh(x) ** 2))(X),
                               2 * np.tanh(X) / np.cosh(X) ** 2, atol=1e-12)


def test_numpy_functions_without_a_counterpart_are_named():
    with pytest.raises(ArgumentError, match="numpy.packbits has no tracer.numpy counterpart"):
        tracer.jit(lambda x: np.packbits(x))(X)
    with pytest.raises(ArgumentError, match="numpy.sin.*out="):
        tracer.jit(lambda x: np.sin(x, out=np.empty((4, 6))))(X)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("traced", [False, True], ids=["static-index", "traced-index"])
def test_at_apply_applies_once_per_selection(backend, traced):
    """x.at[i].apply(f), as jax (and ufunc.at): f once each time a position is chosen."""
    x, idx = np.arange(5.0), np.array([1, 1, 4, -1])
    if traced:
        f = tracer.jit(lambda x, i: x.at[i].apply(lambda v: 2 * v + 1), backend=backend)
        got = f(x, idx)
    else:
        got = tracer.jit(lambda x: x.at[idx].apply(lambda v: 2 * v + 1), backend=backend)(x)
    ref = x.copy()
    for i in idx:
        ref[i] = 2 * ref[i] + 1
    np.testing.assert_allclose(got, ref)


def test_at_apply_modes_grad_and_vmap():
    x = np.arange(4.0)
    drop = tracer.jit(lambda x: x.at[np.array([5, 1])].apply(tnp.sin, mode="drop"))(x)
    np.testing.assert_allclose(drop, np.where(np.arange(4) == 1, np.sin(x), x))
    g = tracer.grad(lambda x, i: tnp.sum(x.at[i].apply(tnp.sin)))(np.ones(2), np.array([0, 0]))
    np.testing.assert_allclose(g, [np.cos(np.sin(1.0)) * np.cos(1.0), 1.0])
    v = tracer.vmap(lambda x, i: x.at[i].apply(tnp.sin))(np.ones((2, 2)), np.array([[0, 0], [1, 0]]))
    np.testing.assert_allclose(v, [[np.sin(np.sin(1.0)), 1.0], [np.sin(1.0), np.sin(1.0)]])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_created_constants_take_traced_indices(backend):
    """eye and arange inside a trace are traced values (as JAX's), so that a traced index
    selects from them: one-hot rows `eye(n)[labels]`, `arange(n)[idx]`."""
    labels = np.array([2, 0, 1, 2])
    one_hot = tracer.jit(lambda l: tnp.eye(3, dtype=np.float32)[l], backend=backend)
    np.testing.assert_array_equal(one_hot(labels), np.eye(3, dtype=np.float32)[labels])
    pick = tracer.jit(lambda x: tnp.arange(x.shape[0])[x] * 10, backend=backend)
    np.testing.assert_array_equal(pick(np.array([0, 2, 1], np.int32)), [0, 20, 10])
    np.testing.assert_array_equal(tracer.vmap(lambda l: tnp.identity(3)[l])(labels),
                                  np.eye(3)[labels])
    # a returned constant is a new array each call
    made = tracer.jit(lambda: tnp.arange(3), backend=backend)
    a = made()
    a[0] = 7
    np.testing.assert_array_equal(made(), [0, 1, 2])

    def concrete(x):         # outside jit, grad sees concrete values: Python control flow
        a = tnp.arange(3.0)
        return (a * x).sum() if a[1] > 0 else x.sum()
    np.testing.assert_array_equal(tracer.grad(concrete)(np.ones(3)), [0.0, 1.0, 2.0])

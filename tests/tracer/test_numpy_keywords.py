"""NumPy 2 / JAX names and keywords: clip(min=, max=), reshape(order=), quantile's dtype,
compress and extract, several traced index arrays in one x[i, j], einsum's sublist form.
Each eagerly, jitted on both backends, under grad and vmap, against NumPy."""
import functools
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4)).astype(np.float32)
X3 = rng.normal(size=(2, 3, 4)).astype(np.float32)
BACKENDS = agreement.BACKENDS


agree = functools.partial(agreement.agree, rtol=1e-7)


def grad_of_sum(f, x, w=None):
    """grad of sum(f(x) * w), jitted on both backends, equal to the eager one."""
    def loss(x):
        y = f(x)
        return tnp.sum(y * (np.arange(1, y.size + 1, dtype=y.dtype).reshape(y.shape)
                            if w is None else w))
    g = tracer.grad(loss)(x)
    for b in BACKENDS:
        np.testing.assert_allclose(tracer.jit(tracer.grad(loss), backend=b)(x), g, atol=1e-6)
    return g


# ---- clip --------------------------------------------------------------------------------

def test_clip_takes_numpy_2_1_names_and_the_old_ones():
    want = np.clip(X, -0.5, 0.5)
    agree(lambda x: tnp.clip(x, min=-0.5, max=0.5), want, X)
    agree(lambda x: tnp.clip(x, a_min=-0.5, a_max=0.5), want, X)
    agree(lambda x: tnp.clip(x, max=0.5), np.minimum(X, 0.5), X)
    agree(lambda x: x.clip(min=-0.5), np.maximum(X, -0.5)[None], X[None])
    g = grad_of_sum(lambda x: tnp.clip(x, min=-0.5, max=0.5), X, w=1.0)
    np.testing.assert_array_equal(g, (np.abs(X) < 0.5).astype(np.float32))
    lo = np.array([-0.1, -0.2, -0.3], np.float32)
    out = tracer.vmap(lambda x, lo: tnp.clip(x, min=lo, max=0.2))(X, lo)
    np.testing.assert_allclose(out, np.clip(X, lo[:, None], 0.2))
    with pytest.raises(ValueError, match="clip: pass min= or a_min=, not both"):
        tnp.clip(X, a_min=0, min=0)


# ---- reshape(order=) ----------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize("shape", [(4, 6), (-1, 2, 3), (24,)])
def test_reshape_order(order, shape):
    want = np.reshape(X3, shape, order=order)
    agree(lambda x: tnp.reshape(x, shape, order=order), want, X3)
    agree(lambda x: x.reshape(*shape, order=order), want, X3)


def test_reshape_order_f_differentiates_and_batches():
    g = grad_of_sum(lambda x: tnp.reshape(x, (6, 4), order="F"), X3)
    w = np.arange(1, 25, dtype=np.float32).reshape(6, 4)
    np.testing.assert_array_equal(g, np.reshape(w, X3.shape, order="F"))
    out = tracer.vmap(lambda x: tnp.reshape(x, (2, 6), order="F"))(X3)
    np.testing.assert_array_equal(out, np.stack([np.reshape(m, (2, 6), order="F") for m in X3]))


def test_reshape_order_a_follows_the_eager_layout_and_other_spellings():
    xf = np.asfortranarray(X3)
    np.testing.assert_array_equal(tnp.reshape(xf, (4, 6), order="A"),
                                  np.reshape(xf, (4, 6), order="A"))
    np.testing.assert_array_equal(tnp.reshape(X3, (4, 6), "F"), np.reshape(X3, (4, 6), "F"))
    np.testing.assert_array_equal(tnp.reshape(X3, shape=(6, 4)), X3.reshape(6, 4))
    np.testing.assert_array_equal(tnp.reshape(X3, newshape=(6, 4)), X3.reshape(6, 4))
    np.testing.assert_array_equal(tnp.ravel(X3, order="F"), np.ravel(X3, order="F"))
    with pytest.raises(ValueError, match="reshape: order must be 'C', 'F' or 'A', got 'K'"):
        tnp.reshape(X3, (24,), order="K")


# ---- quantile / percentile dtype ---------------------------------------------------------

@pytest.mark.parametrize("q", [0.3, np.float64(0.3), np.array([0.1, 0.5, 0.9]),
                               np.array([[0.25], [1.0]])])
@pytest.mark.parametrize("axis", [None, 1])
def test_quantile_of_float32_is_float32(q, axis):
    want = np.quantile(X, q, axis=axis).astype(np.float32)
    agree(lambda x: tnp.quantile(x, q, axis=axis), want, X)
    agree(lambda x: tnp.percentile(x, np.multiply(q, 100), axis=axis), want, X, atol=1e-5)


def test_quantile_grad_and_vmap():
    q = np.array([0.2, 0.7])
    g = grad_of_sum(lambda x: tnp.quantile(x, q), X)
    assert g.dtype == np.float32 and np.count_nonzero(g) == 4    # two lerps of two elements
    out = tracer.vmap(lambda x: tnp.quantile(x, q))(X)
    np.testing.assert_allclose(out, np.quantile(X, q, axis=1).T, atol=1e-6)
    assert out.dtype == np.float32


# ---- compress / extract ------------------------------------------------------------------

def test_compress_with_a_concrete_condition():
    c = np.array([True, False, True, True])
    agree(lambda x: tnp.compress(c, x, axis=1), np.compress(c, X, axis=1), X)
    agree(lambda x: tnp.compress(c[:3], x, axis=0), np.compress(c[:3], X, axis=0), X)
    agree(lambda x: tnp.compress([1, 0], x), np.compress([1, 0], X), X)     # flattened, short
    g = grad_of_sum(lambda x: tnp.compress(c, x, axis=1), X, w=1.0)
    np.testing.assert_array_equal(g, np.broadcast_to(c, X.shape).astype(np.float32))
    out = tracer.vmap(lambda x: tnp.compress(c, x))(X)
    np.testing.assert_array_equal(out, X[:, c])


def test_compress_with_a_traced_condition_needs_size():
    c = np.array([True, False, True, False])
    want = np.concatenate([np.compress(c, X, axis=1), np.full((3, 1), -7, np.float32)], 1)
    agree(lambda c, x: tnp.compress(c, x, axis=1, size=3, fill_value=-7), want, c, X)
    cs = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], bool)
    out = tracer.vmap(lambda c, x: tnp.compress(c, x, size=2))(cs, X)
    np.testing.assert_array_equal(out, [X[0, [0, 2]], [X[1, 2], 0], X[2, :2]])
    with pytest.raises(TypeError, match="compress: the result's shape depends on the data"):
        tracer.jit(lambda c, x: tnp.compress(c, x))(c, X)


def test_compress_condition_past_the_axis():
    np.testing.assert_array_equal(tnp.compress([1, 0, 0, 0, 0, 0], X[0]), X[0, :1])
    with pytest.raises(IndexError, match="compress: condition of length 5 selects past axis 0"):
        tnp.compress([1, 0, 0, 0, 1], X[0])


def test_extract():
    c = X > 0
    agree(lambda x: tnp.extract(c, x), np.extract(c, X), X)
    agree(lambda x: tnp.extract(c[0], x), np.extract(c[0], X), X)
    want = np.concatenate([np.extract(c, X), np.full(12 - c.sum(), 9, np.float32)])
    agree(lambda c, x: tnp.extract(c, x, size=12, fill_value=9), want, c, X)
    g = grad_of_sum(lambda x: tnp.extract(c, x), X, w=1.0)
    np.testing.assert_array_equal(g, c.astype(np.float32))
    with pytest.raises(TypeError, match="extract: the result's shape depends on the data"):
        tracer.jit(tnp.extract)(c, X)


# ---- several traced index arrays ---------------------------------------------------------

I = np.array([[0, 2], [-1, 1]])
J = np.array([3, -4])
K = np.array([[1], [2]])
KEYS = {"i,j": lambda i, j, k: (i, j), "i,j,k": lambda i, j, k: (i, j, k),
        ":,j,k": lambda i, j, k: (slice(None), j, k), "i,:,k": lambda i, j, k: (i, slice(None), k),
        "i,1,j": lambda i, j, k: (i, 1, j), "1,i,j": lambda i, j, k: (1, i, j),
        "...,j,k": lambda i, j, k: (Ellipsis, j, k),
        "None,i,None,j": lambda i, j, k: (None, i, None, j),
        ":,i,0,j": lambda i, j, k: (slice(None), i % 3, 0, j)}
X4 = rng.normal(size=(3, 4, 4, 4)).astype(np.float32)


@pytest.mark.parametrize("name", KEYS)
def test_several_traced_index_arrays(name):
    key = KEYS[name]
    want = X4[key(I, J, K)]
    agree(lambda x, i, j, k: x[key(i, j, k)], want, X4, I, J, K)
    agree(lambda x, i: x[key(i, J, K)], want, X4, I)          # traced and concrete together


def test_several_traced_index_arrays_grad_vmap_and_updates():
    x = X4[0, :, 0]
    i, j = np.array([0, 2, 2]), np.array([3, 1, 1])
    g = tracer.grad(lambda x, i, j: tnp.sum(x[i, j]))(x, i, j)
    want = np.zeros_like(x)
    np.add.at(want, (i, j), 1)
    np.testing.assert_array_equal(g, want)
    batch_i, batch_j = np.array([[0, 1], [2, 2]]), np.array([[1, 1], [0, 3]])
    np.testing.assert_array_equal(
        tracer.vmap(lambda i, j: tnp.getitem(x, (i, j)))(batch_i, batch_j), x[batch_i, batch_j])
    np.testing.assert_array_equal(
        tracer.vmap(lambda x, i, j: x[i, j])(np.stack([x, -x]), batch_i, batch_j),
        np.stack([x[batch_i[0], batch_j[0]], -x[batch_i[1], batch_j[1]]]))
    want = x.copy()
    want[i, j] = -1
    agree(lambda x, i, j: x.at[i, j].set(-1.0), want, x, i, j, eager=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_several_traced_index_arrays_check_each_axis(backend):
    """j=4 is out of bounds on its axis even though row-major 0*4+4 would be in the array."""
    f = tracer.jit(lambda x, i, j: x[i, j], backend=backend)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        f(X, np.array([0, 1]), np.array([4, 0]))
    with pytest.raises(IndexError, match="getitem: index 4 is out of bounds for axis 1 with "):
        tracer.jit(lambda x, i: x[i, np.array([4, 0])], backend=backend)(X, np.array([0, 1]))


# ---- einsum sublists ---------------------------------------------------------------------

def test_einsum_sublist_form():
    a, b = X, rng.normal(size=(4, 5)).astype(np.float32)
    agree(lambda a, b: tnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b, a, b, atol=1e-5)
    agree(lambda a, b: tnp.einsum(a, [30, 1], b, [1, 2]), np.einsum(a, [30, 1], b, [1, 2]), a, b,
          atol=1e-5)           # implicit output: labels in increasing order, as NumPy
    agree(lambda x: tnp.einsum(x, [Ellipsis, 1], [Ellipsis]), X3.sum(-1), X3, atol=1e-5)
    g = grad_of_sum(lambda a: tnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a, w=1.0)
    np.testing.assert_allclose(g, np.broadcast_to(b.sum(1), a.shape), atol=1e-5)
    out = tracer.vmap(lambda a: tnp.einsum(a, [0], b, [0, 1], [1]))(a)
    np.testing.assert_allclose(out, a @ b, atol=1e-5)
    with pytest.raises(TypeError, match="einsum: a sublist holds ints in"):
        tnp.einsum(a, ["i", "j"])


def test_ndarray_methods_of_the_api_contract():
    agree(lambda x: x.dot(x.T), X @ X.T, X, atol=1e-5)
    agree(lambda x: (x * 10).round(1), np.round(X * 10, 1), X, atol=1e-5)
    agree(lambda x: x.take(np.array([2, 0]), axis=1), X[:, [2, 0]], X)
    agree(lambda x: x.sort(axis=0), np.sort(X, axis=0), X, eager=False)    # NumPy's sorts in place


# ---- reductions: where=, initial=, a= ----------------------------------------------------

M = X > 0


@pytest.mark.parametrize("name, kw", [("sum", {}), ("prod", {}), ("mean", {}),
                                      ("max", {"initial": -5.0}), ("min", {"initial": 5.0})])
@pytest.mark.parametrize("axis", [None, 1])
def test_reductions_take_where_and_initial(name, kw, axis):
    ref = getattr(np, name)(X, axis=axis, where=M, **kw)
    fn = getattr(tnp, name)
    agree(lambda x, m: fn(x, axis=axis, where=m, **kw), ref, X, M, atol=1e-5)
    out = tracer.vmap(lambda x, m: fn(a=x, where=m, **kw))(X, M)
    np.testing.assert_allclose(out, getattr(np, name)(X, axis=1, where=M, **kw), atol=1e-5)
    g = tracer.grad(lambda x: fn(x * x, where=M, **kw).sum())(X)
    assert not np.any(g[~M])                       # the masked-out elements get no gradient


def test_reduction_initial_joins_the_result():
    agree(lambda x: tnp.sum(x, axis=0, initial=10.0), np.sum(X, axis=0, initial=10.0), X,
          atol=1e-5)
    ints = np.arange(4, dtype=np.int32)
    agree(lambda x: tnp.prod(x + 1, initial=2), np.prod(ints + 1, initial=2), ints)
    empty = np.zeros((0, 3), np.float32)
    agree(lambda x: tnp.max(x, axis=0, initial=2.0), np.max(empty, axis=0, initial=2.0), empty)
    with pytest.raises(ValueError, match="max: where= needs initial="):
        tnp.max(X, where=M)


# ---- NumPy's and JAX's keyword names for the contract's creation and shape names --------

def test_creation_and_shape_keywords():
    agree(lambda: tnp.zeros(shape=(2,), dtype=np.float32), np.zeros(shape=(2,), dtype=np.float32))
    agree(lambda: tnp.full(shape=2, fill_value=3.0), np.full(shape=2, fill_value=3.0))
    agree(lambda x: tnp.broadcast_to(x[0], shape=(2, 4)), np.broadcast_to(X[0], (2, 4)), X)
    agree(lambda x: tnp.zeros_like(x, shape=(4,)), np.zeros_like(X, shape=(4,)), X)
    agree(lambda x: tnp.full_like(a=x, fill_value=2.0, shape=(1, 2)),
          np.full_like(X, 2.0, shape=(1, 2)), X)
    agree(lambda x: tnp.transpose(a=x), X.T, X)
    agree(lambda x: tnp.expand_dims(a=x, axis=0), X[None], X)
    agree(lambda x: tnp.squeeze(a=x[None]), X, X)
    agree(lambda x: tnp.concatenate([x, x], axis=None, dtype=np.float16),
          np.concatenate([X, X], axis=None, dtype=np.float16), X, atol=1e-3)
    agree(lambda x: tnp.stack([x, x], axis=1, dtype=np.float64),
          np.stack([X, X], axis=1, dtype=np.float64), X)
    agree(lambda x: tnp.astype(tnp.asarray(a=x, copy=True), np.int32, copy=False),
          X.astype(np.int32), X)
    g = tracer.grad(lambda x: tnp.sum(tnp.stack([x, 2 * x], dtype=np.float64)).astype(
        np.float32))(X)
    np.testing.assert_array_equal(g, np.full_like(X, 3))


# ---- take(mode=, fill_value=) ------------------------------------------------------------

TAKE_IDX = np.array([-5, -1, 0, 3, 4, 7])


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes_as_numpy(mode):
    agree(lambda x, i: tnp.take(x, i, axis=1, mode=mode), np.take(X, TAKE_IDX, 1, mode=mode),
          X, TAKE_IDX)
    g = tracer.grad(lambda x: tnp.sum(tnp.take(x, TAKE_IDX, mode=mode)))(X[0])
    np.testing.assert_array_equal(g, np.bincount(np.take(np.arange(4), TAKE_IDX, mode=mode),
                                                 minlength=4))
    out = tracer.vmap(lambda x: tnp.take(x, TAKE_IDX, mode=mode, unique_indices=False))(X)
    np.testing.assert_array_equal(out, np.take(X, TAKE_IDX, axis=1, mode=mode))


def test_take_fill_mode_as_jax():
    """In-bounds negative indices wrap; the others give fill_value (NaN / int min by default)."""
    want = np.where((TAKE_IDX < -4) | (TAKE_IDX >= 4), np.nan, X[:, TAKE_IDX % 4])
    agree(lambda x, i: tnp.take(x, i, axis=1, mode="fill"), want.astype(np.float32), X, TAKE_IDX)
    ints = np.arange(4, dtype=np.int32)
    agree(lambda x: tnp.take(x, TAKE_IDX, mode="fill"),
          np.where(np.isnan(want[0]), np.iinfo(np.int32).min, ints[TAKE_IDX % 4]), ints)
    agree(lambda x: tnp.take(x, TAKE_IDX, mode="fill", fill_value=-1),
          np.where(np.isnan(want[0]), -1, want[0]).astype(np.float32), X[0])
    g = tracer.grad(lambda x: tnp.sum(tnp.take(x, TAKE_IDX, mode="fill", fill_value=0.0)))(X[0])
    np.testing.assert_array_equal(g, [1, 0, 0, 2])
    with pytest.raises(ValueError, match="take: mode='bad' is not one of"):
        tnp.take(X, TAKE_IDX, mode="bad")

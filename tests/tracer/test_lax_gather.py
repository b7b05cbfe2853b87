"""tracer.lax.gather / scatter* with XLA's dimension numbers and the dynamic slices, against
a loop-per-element NumPy reading of XLA's semantics: every mode, batching dimensions,
eagerly and under jit on both backends, gradients and vmap with traced indices."""
import itertools

import numpy as np
import pytest

import tracer
from tracer import lax

G, S = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
R = np.random.default_rng(0)
X = R.normal(size=(3, 4, 5))
IDX = np.array([[0, 1], [2, 3], [1, -1], [5, 2]], np.int32)


def _start(shape, sizes, idx, b, index_map, op_batch, idx_batch, mode):
    """XLA's window start for batch position b; None for a dropped out-of-bounds window."""
    start = np.zeros(len(shape), np.int64)
    for k, d in enumerate(index_map):
        start[d] = idx[b + (k,)]
    for d, i in zip(op_batch, idx_batch):
        start[d] = b[i]
    limit = np.array(shape) - np.array(sizes)
    if mode == "fill" and not ((start >= 0) & (start <= limit)).all():
        return None
    return np.clip(start, 0, limit)


def ref_gather(x, idx, dn, sizes, mode=None):
    batch = idx.shape[:-1]
    kept = [d for d in range(x.ndim)
            if d not in dn.collapsed_slice_dims + dn.operand_batching_dims]
    out_shape = [0] * (len(batch) + len(kept))
    for d, k in zip(dn.offset_dims, kept):
        out_shape[d] = sizes[k]
    bdims = [d for d in range(len(out_shape)) if d not in dn.offset_dims]
    for d, n in zip(bdims, batch):
        out_shape[d] = n
    out = np.zeros(out_shape, x.dtype)
    for o in itertools.product(*map(range, out_shape)):
        b = tuple(o[d] for d in bdims)
        start = _start(x.shape, sizes, idx, b, dn.start_index_map, dn.operand_batching_dims,
                       dn.start_indices_batching_dims, mode)
        if start is None:
            out[o] = np.nan
            continue
        pos = start.copy()
        for d, k in zip(dn.offset_dims, kept):
            pos[k] += o[d]
        out[o] = x[tuple(pos)]
    return out


def ref_scatter(x, idx, upd, dn, how, mode=None):
    out = x.copy()
    window = [d for d in range(x.ndim)
              if d not in dn.inserted_window_dims + dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for d, u in zip(window, dn.update_window_dims):
        sizes[d] = upd.shape[u]
    sdims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    for u in itertools.product(*map(range, upd.shape)):
        b = tuple(u[d] for d in sdims)
        start = _start(x.shape, sizes, idx, b, dn.scatter_dims_to_operand_dims,
                       dn.operand_batching_dims, dn.scatter_indices_batching_dims, mode)
        if start is None:
            continue
        pos = start.copy()
        for d, w in zip(window, dn.update_window_dims):
            pos[d] += u[w]
        p = tuple(pos)
        out[p] = {"set": lambda a, v: v, "add": np.add, "mul": np.multiply, "min": np.minimum,
                  "max": np.maximum}[how](out[p], upd[u])
    return out


BATCHED_IDX = np.array([[[1], [0]], [[2], [3]], [[0], [0]]], np.int32)
GATHERS = [(IDX, G((1, 2), (0,), (0, 1)), (1, 2, 3)),
           (IDX[:, :1], G((0, 2), (1,), (1,)), (3, 1, 2)),
           (IDX[::-1], G((0, 1, 3), (), (2, 0)), (2, 3, 3)),
           (BATCHED_IDX, G((2,), (1,), (1,), (0,), (0,)), (1, 1, 5))]
SCATTERS = [(IDX, (4, 2, 3), S((1, 2), (0,), (0, 1))),
            (np.array([[1], [1], [0]], np.int32), (3, 3, 5), S((1, 2), (0,), (0,))),
            (BATCHED_IDX, (3, 2, 5), S((2,), (1,), (1,), (0,), (0,)))]


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
@pytest.mark.parametrize("k", range(len(GATHERS)))
def test_gather_matches_xla_semantics(k, mode):
    idx, dn, sizes = GATHERS[k]
    want = ref_gather(X, idx, dn, sizes, mode)
    np.testing.assert_array_equal(lax.gather(X, idx, dn, sizes, mode=mode), want)


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("how", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("k", range(len(SCATTERS)))
def test_scatter_matches_xla_semantics(k, how, mode):
    idx, ushape, dn = SCATTERS[k]
    upd = R.normal(size=ushape)
    fn = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
          "min": lax.scatter_min, "max": lax.scatter_max}[how]
    want = ref_scatter(X, idx, upd, dn, how, "fill" if mode is None else mode)
    np.testing.assert_allclose(fn(X, idx, upd, dn, mode=mode), want, rtol=1e-14)


def test_scatter_sub_and_apply():
    idx, ushape, dn = SCATTERS[1]
    upd = R.normal(size=ushape)
    np.testing.assert_allclose(lax.scatter_sub(X, idx, upd, dn),
                               ref_scatter(X, idx, -upd, dn, "add"), rtol=1e-14)
    got = lax.scatter_apply(X, idx, lambda v: v * 2, dn, update_shape=ushape)
    want = X.copy()
    want[1, :3] *= 4                           # row 1 is named twice: func applies twice
    want[0, :3] *= 2
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_dynamic_slices_clamp_as_jax():
    x = np.arange(60.0).reshape(3, 4, 5)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (1, -2, 9), (2, 2, 3)), x[1:3, 2:4, 2:5])
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, -9, 2, axis=1), x[:, 0:2])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, -1, 2, keepdims=False), x[..., 4])
    want = x.copy()
    want[1:3, 2:4, 2:5] = -1.0
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(x, -np.ones((2, 2, 3)), (np.int32(1), -2, 9)), want)
    want = x.copy()
    want[:, :, 2] = 0.0
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, np.zeros((3, 4)), 2, 2),
                                  want)
    np.testing.assert_array_equal(lax.index_take(x, (np.array([0, 2]), np.array([1, 3])),
                                                 (0, 2)), x[[0, 2], :, [1, 3]])
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, None, 2, axis=1), x[:, 1::2])
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, keepdims=False), x[-1])


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_under_jit_with_traced_indices(backend):
    (idx, dn, sizes), (sidx, ushape, sdn) = GATHERS[0], SCATTERS[0]
    upd = R.normal(size=ushape)

    def f(x, i, s, u, start):
        return (lax.gather(x, i, dn, sizes, mode="fill"), lax.gather(x, i, dn, sizes),
                lax.scatter_add(x, s, u, sdn), lax.scatter(x, s, u, sdn, mode="clip"),
                lax.dynamic_slice(x, (start, 1, start), (2, 2, 2)),
                lax.dynamic_update_slice(x, u[:2], (start, start, start)))
    args = (X, idx, sidx, upd, np.int32(2))
    for got, want in zip(tracer.jit(f, backend=backend)(*args), f(*args)):
        np.testing.assert_array_equal(got, want)


def test_grads_match_finite_differences():
    (idx, dn, sizes), (sidx, ushape, sdn) = GATHERS[3], SCATTERS[0]
    upd = R.normal(size=ushape)
    tracer.check_grads(lambda x: lax.gather(x, idx, dn, sizes) ** 2, (X,), modes=("rev", "fwd"))
    tracer.check_grads(lambda x, u: lax.scatter_add(x, sidx, u, sdn) * x, (X, upd),
                       modes=("rev", "fwd"))
    tracer.check_grads(lambda x, u: lax.scatter(x, sidx, u * u, sdn), (X, upd), modes=("rev",))
    tracer.check_grads(lambda x: lax.dynamic_update_slice(x, x[:1, :2, :2] * 3, (1, 2, 3)),
                       (X,), modes=("rev", "fwd"))


def test_vmap_with_per_example_indices():
    idx, dn, sizes = GATHERS[1]
    starts = np.array([0, 3, -1], np.int32)
    got = tracer.vmap(lambda x, s: lax.dynamic_slice_in_dim(x, s, 2, axis=1))(X, starts)
    np.testing.assert_array_equal(got, np.stack([lax.dynamic_slice_in_dim(x, s, 2, axis=1)
                                                 for x, s in zip(X, starts)]))
    idxs = np.stack([idx, idx[::-1], idx + 1])
    sizes2 = sizes[1:]
    dn2 = G((1,), (0,), (0,))
    got = tracer.vmap(lambda x, i: lax.gather(x, i, dn2, sizes2, mode="fill"))(X, idxs)
    np.testing.assert_array_equal(got, np.stack([ref_gather(x, i, dn2, sizes2, "fill")
                                                 for x, i in zip(X, idxs)]))

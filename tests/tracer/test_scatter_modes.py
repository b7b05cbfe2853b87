"""Scatter and gather semantics: `x.at[idx]` in every mode with duplicate, negative,
out-of-range and traced indices, eagerly, under both jit backends and under vmap, against
NumPy (`ufunc.at`, assignment); and lax.dynamic_index / dynamic_update_index's start index
(negative counts from the end, then clamped, as jax.lax)."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

N = 10
XV = np.arange(N, dtype=np.float64) * 1.5 - 4.0


def _jax_slot(i, n):
    i = i + n if i < 0 else i
    return min(max(i, 0), n - 1)


RUNS = {
    "eager": lambda f: f,
    "numpy": lambda f: tracer.jit(f, backend="numpy"),
    "llvm": lambda f: tracer.jit(f, backend="llvm"),
}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("i", [-1, -3, -10, -30, 0, 4, 12])
def test_dynamic_index_counts_negative_starts_from_the_end(run, i):
    idx = np.int32(i)
    got = RUNS[run](lax.dynamic_index)(XV, idx)
    assert got == XV[_jax_slot(i, N)]
    upd = RUNS[run](lambda x, i: lax.dynamic_update_index(x, i, x[0] * 0 + 99.0))(XV, idx)
    want = XV.copy()
    want[_jax_slot(i, N)] = 99.0
    np.testing.assert_array_equal(upd, want)


def test_dynamic_index_negative_under_vmap_and_grad():
    ii = np.array([-1, -3, 2, -30], np.int64)
    np.testing.assert_array_equal(tracer.vmap(lambda i: lax.dynamic_index(XV, i))(ii),
                                  XV[[_jax_slot(int(i), N) for i in ii]])
    g = tracer.grad(lambda x: lax.dynamic_index(x, np.int64(-3)) * 2.0)(XV)
    np.testing.assert_array_equal(g, np.eye(N)[N - 3] * 2.0)


# ---- x.at[idx] in every mode -----------------------------------------------------------

from tracer.numpy.index_updates import At  # noqa: E402  (eager arrays have no .at)

UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "min": np.minimum,
          "max": np.maximum}
HOWS = ("set",) + tuple(UFUNCS)
X6 = np.array([0.5, -1.0, 2.0, 3.5, -2.5, 1.25])
INDEX_SETS = {
    "duplicate": np.array([2, 0, 2, 5, 2, 0]),
    "negative": np.array([-1, -6, 3, -1, 0, 5]),
    "out_of_range": np.array([7, -7, 1, 6, 1, -1]),
}
V6 = np.array([4.0, -3.0, 0.0, 2.5, -0.5, 1.5])       # a zero among the repeated writes
MODES = (None, "clip", "drop", "fill")     # "promise_in_bounds" is None: test_keywords


def _numpy_at(x, idx, v, how, mode):
    """NumPy's answer: wrap negatives, apply the mode, then assignment / ufunc.at."""
    n = len(x)
    i = np.where(idx < 0, idx + n, idx)
    keep = (i >= 0) & (i < n)
    if mode == "clip":
        i, keep = np.clip(i, 0, n - 1), np.ones_like(keep)
    out = x.copy()
    if how == "get":
        return np.where(keep, x[np.clip(i, 0, n - 1)], np.nan)
    if how == "set":
        out[i[keep]] = v[keep]
    else:
        UFUNCS[how].at(out, i[keep], v[keep])
    return out


def _all_modes(x, i, v, mode):
    at = x.at[i] if hasattr(x, "at") else At(x)[i]
    return tuple(getattr(at, how)(v, mode=mode) for how in HOWS) + (at.get(mode=mode),)


def _runners():
    def jit_traced(backend):
        return lambda x, i, v, mode: tracer.jit(_all_modes, backend=backend,
                                                static_argnums=3)(x, i, v, mode)

    def jit_const(backend):
        return lambda x, i, v, mode: tracer.jit(lambda x, v: _all_modes(x, i, v, mode),
                                                backend=backend)(x, v)

    def vmapped(x, i, v, mode):       # two examples, the index batched too
        xs, vs, ii = np.stack([x, x[::-1]]), np.stack([v, v * 2]), np.stack([i, i[::-1]])
        outs = tracer.vmap(lambda x, i, v: _all_modes(x, i, v, mode))(xs, ii, vs)
        want = [[_numpy_at(a, j, b, how, mode) for how in HOWS + ("get",)]
                for a, j, b in zip(xs, ii, vs)]
        for k in range(len(outs)):
            np.testing.assert_array_equal(outs[k][1], want[1][k])
        return tuple(o[0] for o in outs)
    return {"eager": _all_modes, "numpy": jit_traced("numpy"), "llvm": jit_traced("llvm"),
            "numpy_const": jit_const("numpy"), "llvm_const": jit_const("llvm"),
            "vmap": vmapped}


RUNNERS = _runners()


@pytest.mark.parametrize("run", RUNNERS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", INDEX_SETS)
def test_at_matches_numpy_in_every_mode(which, mode, run):
    idx = INDEX_SETS[which]
    if which == "out_of_range" and mode is None:
        with pytest.raises(IndexError, match="out of bounds"):
            RUNNERS[run](X6, idx, V6, mode)
        return
    got = RUNNERS[run](X6, idx, V6, mode)
    for how, g in zip(HOWS + ("get",), got):
        np.testing.assert_array_equal(g, _numpy_at(X6, idx, V6, how, mode), err_msg=how)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_repeated_set_at_a_traced_index_keeps_the_last_write(backend):
    f = tracer.jit(lambda x, v, i: x.at[i, 0].set(v), backend=backend)
    got = f(np.zeros((3, 4)), np.array([1., 2., 3.]), np.array([2, 0, 2]))
    want = np.zeros((3, 4))
    want[[2, 0, 2], 0] = [1., 2., 3.]
    np.testing.assert_array_equal(got, want)
    assert got[2, 0] == 3.0


def test_fill_value_and_integer_fills():
    x = np.arange(4, dtype=np.int32)
    i = np.array([5, -1, -9])
    np.testing.assert_array_equal(At(x)[i].get(mode="fill"), [np.iinfo(np.int32).min, 3,
                                                               np.iinfo(np.int32).min])
    np.testing.assert_array_equal(At(x.astype(np.uint8))[i].get(mode="drop"), [255, 3, 255])
    f = tracer.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-7.5))
    np.testing.assert_array_equal(f(X6, np.array([6, 2, -7])), [-7.5, X6[2], -7.5])


def test_keywords_are_checked():
    with pytest.raises(tracer.TracerError, match=r"at\[\].set: mode='wrap' is not one of"):
        At(X6)[0].set(1.0, mode="wrap")
    with pytest.raises(tracer.TracerError, match=r"at\[\].get: unique_indices must be True"):
        At(X6)[0].get(unique_indices="yes")
    got = At(X6)[np.array([1, 1])].add(1.0, indices_are_sorted=True, unique_indices=False)
    assert got[1] == X6[1] + 2
    with pytest.raises(IndexError, match="index 6 is out of bounds"):
        At(X6)[np.array([1, 6])].set(0.0, mode="promise_in_bounds")


def test_a_traced_index_out_of_bounds_raises_in_the_default_mode():
    for backend in ("numpy", "llvm"):
        f = tracer.jit(lambda x, i: x.at[i].set(0.0), backend=backend)
        with pytest.raises(IndexError, match="out of bounds"):
            f(X6, np.array([1, 6]))


# ---- gradients follow the value --------------------------------------------------------

def test_only_the_winning_write_of_a_repeated_index_gets_the_cotangent():
    idx, w = INDEX_SETS["duplicate"], np.arange(1.0, 7.0)
    f = tracer.grad(lambda x, v, i: tnp.sum(x.at[i].set(v) * w), argnums=(0, 1))
    gx, gv = f(X6, V6, idx)                                   # a traced index
    last = {int(p): k for k, p in enumerate(idx)}           # position -> last writer
    np.testing.assert_array_equal(gv, [w[p] if last[int(p)] == k else 0.0
                                       for k, p in enumerate(idx)])
    np.testing.assert_array_equal(gx, np.where(np.isin(np.arange(6), idx), 0.0, w))


@pytest.mark.parametrize("how", HOWS)
def test_updates_with_repeated_indices_differentiate(how):
    idx = INDEX_SETS["duplicate"]
    v = V6 if how not in ("min", "max") else np.array([4.0, -3.0, 0.7, 2.5, -0.5, 1.5])
    f = lambda x, v: tnp.sum(getattr(At(x)[idx], how)(v) * np.arange(1.0, 7.0))  # noqa: E731
    tracer.check_grads(f, (X6, v), order=2)


def test_min_max_share_the_cotangent_at_ties():
    x = np.array([1.0, 5.0])
    idx, v = np.array([0, 0, 1]), np.array([0.7, 0.5, 5.0])
    gx, gv = tracer.grad(lambda x, v: tnp.sum(x.at[idx].max(v)), argnums=(0, 1))(x, v)
    np.testing.assert_array_equal(gx, [1.0, 0.5])       # x[1] ties with v[2]
    np.testing.assert_array_equal(gv, [0.0, 0.0, 0.5])


@pytest.mark.parametrize("how", HOWS)
def test_onnx_export_repeats_numpys_answer(how):
    ort = pytest.importorskip("onnxruntime")
    from tracer.export import to_onnx
    idx = INDEX_SETS["duplicate"]
    x2, v2 = np.stack([X6, -X6], 1), np.stack([V6, V6 * 3], 1)

    def f(x, v, i):
        return getattr(x.at[i], how)(v)
    model = to_onnx(f, x2, v2, idx)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], [x2, v2, idx])))[0]
    want = x2.copy()
    if how == "set":
        want[idx] = v2
    else:
        UFUNCS[how].at(want, idx, v2)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float16", "bfloat16", "bool"])
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_every_dtype_matches_numpy(dtype, backend):
    import ml_dtypes
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    idx = INDEX_SETS["duplicate"]
    x, v = (np.arange(6) * 3 % 5).astype(dt), np.array([4, 3, 0, 2, 1, 5]).astype(dt)
    if dtype in ("float16", "bfloat16"):
        v[3] = np.nan                               # min and max propagate NaN, as NumPy
    hows = ("set", "min", "max") if dtype == "bool" else HOWS
    with np.errstate(invalid="ignore"):         # NumPy's bfloat16 NaN * 0 warns
        got = tracer.jit(lambda x, v, i: [getattr(x.at[i], h)(v) for h in hows],
                         backend=backend)(x, v, idx)
    for how, g in zip(hows, got):
        want = x.copy()
        if how == "set":
            want[idx] = v
        else:
            with np.errstate(invalid="ignore"):
                UFUNCS[how].at(want, idx, v)
        assert g.dtype == want.dtype
        np.testing.assert_array_equal(g.astype(np.float64), want.astype(np.float64),
                                      err_msg=how)


def test_vmap_with_a_shared_index():
    ii = INDEX_SETS["duplicate"]
    xs, vs = np.stack([X6, -X6]), np.stack([V6, V6 + 1])
    outs = tracer.vmap(lambda x, v: _all_modes(x, ii, v, None))(xs, vs)
    for b in range(2):
        for how, o in zip(HOWS + ("get",), outs):
            np.testing.assert_array_equal(o[b], _numpy_at(xs[b], ii, vs[b], how, None))


def test_the_kernel_rejects_mismatched_operands():
    from tracer.lax.scatters import scatter
    with pytest.raises(tracer.TracerError, match=r"scatter: indices i64\[2\] into f64\[6\] "
                                                 r"take updates f64\[2\], got f64\[3\]"):
        scatter(X6, V6[:3], np.array([0, 1]), "set")
    with pytest.raises(tracer.TracerError, match=r"scatter: how='sub' is not one of"):
        scatter(X6, V6[:2], np.array([0, 1]), "sub")
    with pytest.raises(tracer.TracerError, match=r"scatter: indices must be integers"):
        scatter(X6, V6[:2], np.array([0.0, 1.0]), "add")
    with pytest.raises(IndexError, match=r"scatter: index 6 is out of bounds for axis 0"):
        scatter(X6, V6[:2], np.array([0, 6]), "add")

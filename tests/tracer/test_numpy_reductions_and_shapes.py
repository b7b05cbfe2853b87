"""What the spec table cannot express of the reductions, scans, shapes, sorting and
creation names: data-dependent shapes (nonzero & co. eagerly, with size=/fill_value= under
jit), NaN ordering in sorts and medians, scans on the llvm backend, cumprod's gradient at
zeros, errors, 0-d reductions, swapaxes keywords, where(cond) and too-large zeros/full."""
import inspect
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError, ShapeError, TracerError

BACKENDS = ["numpy", "llvm"]

NAMES = """average var std ptp all any count_nonzero cumsum cumprod nansum nanprod nanmean
nanvar nanstd nanmax nanmin nanargmax nanargmin median percentile quantile nanmedian trace diff
ediff1d gradient moveaxis rollaxis broadcast_arrays broadcast_shapes atleast_1d atleast_2d
atleast_3d vstack hstack dstack column_stack row_stack block split array_split hsplit vsplit
dsplit tile repeat flip fliplr flipud rot90 roll pad take_along_axis diagonal diag diagflat tril
triu tri tril_indices triu_indices tril_indices_from triu_indices_from diag_indices
diag_indices_from indices meshgrid ix_ r_ c_ append insert delete
nonzero flatnonzero argwhere unique searchsorted sort argsort lexsort partition argpartition
copy empty empty_like linspace logspace geomspace eye identity ndim shape size newaxis""".split()


def test_every_reduction_and_shape_name_exists():
    assert [n for n in NAMES if not hasattr(tnp, n)] == []


def test_grid_functions_have_numpys_signatures_and_shape_errors():
    """tri and the *_indices functions take NumPy's parameters by name; the *_from ones
    read only a (traced) array's shape and reject a wrong rank as NumPy does."""
    assert list(inspect.signature(tnp.tri).parameters)[:4] == ["N", "M", "k", "dtype"]
    assert list(inspect.signature(tnp.tril_indices).parameters) == ["n", "k", "m"]
    np.testing.assert_array_equal(tnp.tri(N=3, M=2, k=1), np.tri(3, 2, 1))
    with pytest.raises(ValueError, match="tril_indices_from: input array must be 2-d"):
        tnp.tril_indices_from(np.ones(3))
    with pytest.raises(ValueError, match="diag_indices_from"):
        tnp.diag_indices_from(np.ones((2, 3)))


X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonzero_family_eagerly_and_with_size_under_jit(backend):
    want = np.nonzero(X)
    for got in (tnp.nonzero(X), tnp.where(X)):
        assert all(g.dtype == np.int64 for g in got)
        np.testing.assert_array_equal(np.stack(got), np.stack(want))
    jitted = tracer.jit(lambda x: tnp.nonzero(x, size=5, fill_value=-1), backend=backend)(X)
    np.testing.assert_array_equal(np.stack(jitted), [[0, 1, 1, -1, -1], [1, 0, 2, -1, -1]])
    short = tracer.jit(lambda x: tnp.where(x, size=2), backend=backend)(X)
    np.testing.assert_array_equal(np.stack(short), [[0, 1], [1, 0]])
    flat = tracer.jit(lambda x: tnp.flatnonzero(x, size=4, fill_value=9), backend=backend)(X)
    np.testing.assert_array_equal(flat, [1, 3, 5, 9])
    np.testing.assert_array_equal(tnp.argwhere(X), np.argwhere(X))
    aw = tracer.jit(lambda x: tnp.argwhere(x > 0, size=3), backend=backend)(X)
    np.testing.assert_array_equal(aw, [[0, 1], [1, 0], [0, 0]])


def test_data_dependent_shapes_under_tracing_say_what_to_do():
    for f in (tnp.nonzero, tnp.flatnonzero, tnp.argwhere, tnp.where):
        with pytest.raises(TracerError, match="size="):
            tracer.jit(f)(X)
    with pytest.raises(TracerError, match="unique"):
        tracer.jit(tnp.unique)(X)
    np.testing.assert_array_equal(tnp.unique(np.array([3, 1, 3])), [1, 3])
    vals, counts = tnp.unique(np.array([3, 1, 3]), return_counts=True)
    np.testing.assert_array_equal(counts, [1, 2])
    with pytest.raises(ArgumentError, match="nonzero"):
        tnp.nonzero(np.array(1.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_sorts_last_and_poisons_median_and_quantile(backend, dtype):
    x = np.array([[3.0, np.nan, 1.0, 2.0], [4.0, 0.5, -1.0, 8.0]], dtype)
    f = tracer.jit(lambda x: (tnp.sort(x), tnp.argsort(x), tnp.median(x, axis=1),
                              tnp.quantile(x, 0.25, axis=1), tnp.nanmedian(x, axis=1),
                              tnp.nanmax(x, axis=1), tnp.nanargmin(x, axis=1)), backend=backend)
    want = (np.sort(x), np.argsort(x, kind="stable"), np.median(x, axis=1),
            np.quantile(x, 0.25, axis=1), np.nanmedian(x, axis=1), np.nanmax(x, axis=1),
            np.nanargmin(x, axis=1))
    for g, w in zip(f(x), want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_all_nan_slices(backend):
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = (np.nanmax(x, axis=1), np.nanmean(x, axis=1), np.nanvar(x, axis=1),
                np.nanmedian(x, axis=1))
    got = tracer.jit(lambda x: (tnp.nanmax(x, axis=1), tnp.nanmean(x, axis=1),
                                tnp.nanvar(x, axis=1), tnp.nanmedian(x, axis=1)),
                     backend=backend)(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ArgumentError, match="All-NaN"):
        tnp.nanargmax(x, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_llvm_scans_match_numpy_exactly_on_long_and_split_axes(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 5000)) * 3).astype(dtype)
    f = tracer.jit(lambda x: (tnp.cumsum(x, axis=1), tnp.cumsum(x, axis=0),
                              tnp.cumprod(x[:, :20] % 3 if x.dtype.kind == "i" else x[:, :20],
                                          axis=1)), backend="llvm")
    for g, w in zip(f(x), (np.cumsum(x, axis=1), np.cumsum(x, axis=0),
                           np.cumprod(x[:, :20] % 3 if x.dtype.kind == "i" else x[:, :20],
                                      axis=1))):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 2.0, 3.0], [2.0, 3.0, 0.0],
                               [[1.5, 0.0, 2.0, 0.0], [0.0, 0.0, 1.0, 3.0]]])
def test_cumprod_gradient_is_exact_at_zeros_to_third_order(x):
    x = np.array(x)
    tracer.check_grads(lambda x: tnp.cumprod(x, axis=-1), (x,), order=3)
    g = tracer.grad(lambda x: tnp.sum(tnp.cumprod(x, axis=-1)))(x)
    eps = 1e-7
    fd = [(np.cumprod(x + eps * e, axis=-1).sum() - np.cumprod(x - eps * e, axis=-1).sum())
          / (2 * eps) for e in np.eye(x.size).reshape((x.size,) + x.shape)]
    np.testing.assert_allclose(g.ravel(), fd, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sort_differentiates_through_the_values_it_picks(backend):
    x = np.array([3.0, -1.0, 2.0, 0.5])
    w = np.arange(1.0, 5.0)
    g = tracer.grad(lambda x: tnp.sum(tnp.sort(x) * w))(x)
    np.testing.assert_array_equal(g, w[np.argsort(np.argsort(x))])
    g = tracer.jit(tracer.grad(lambda x: tnp.median(x) + tnp.max(tnp.quantile(x, [0.5]))),
                   backend=backend)(x)
    np.testing.assert_allclose(g, [0.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", [tnp.sum, tnp.prod, tnp.max, tnp.min, tnp.mean, tnp.argmax,
                                tnp.all, tnp.any, tnp.var, tnp.median, tnp.cumsum],
                         ids=lambda f: f.__name__)
def test_eager_reductions_of_0d_float64(backend, op):
    tracer.set_backend(backend)
    try:
        for x in (np.array(2.5), np.float64(2.5), 2.5):
            got, want = op(x), getattr(np, op.__name__)(x)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want)
            if op not in (tnp.argmax, tnp.all, tnp.any, tnp.cumsum):   # reported: prod
                tracer.grad(op)(x)                           # of a Python float
                tracer.jit(tracer.grad(op), backend=backend)(x)
    finally:
        tracer.set_backend("numpy")


def test_swapaxes_takes_numpys_keywords():
    x = np.zeros((2, 3, 4))
    assert tnp.swapaxes(x, axis1=0, axis2=-1).shape == (4, 3, 2)
    assert tracer.jit(lambda x: tnp.swapaxes(x, axis2=1, axis1=0))(x).shape == (3, 2, 4)


@pytest.mark.parametrize("make", [lambda: tnp.zeros((2 ** 40, 2 ** 40)),
                                  lambda: tnp.full((2 ** 62,), 1.0),
                                  lambda: tnp.empty((2 ** 31, 2 ** 31, 4))])
def test_too_large_creation_is_a_shape_error(make):
    with pytest.raises(ShapeError, match="too large"):
        make()


def test_bad_arguments_are_tracer_errors():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ArgumentError, match="linear"):
        tnp.quantile(x, 0.5, method="closest_observation")
    with pytest.raises(ArgumentError, match="range"):
        tnp.quantile(x, 1.5)
    with pytest.raises(ShapeError, match="equal division"):
        tnp.split(x, 2, axis=1)
    with pytest.raises(ArgumentError, match="mode"):
        tnp.pad(x, 1, mode="median")
    with pytest.raises(ArgumentError, match="concrete"):
        tracer.jit(lambda x, k: tnp.repeat(x, k))(x, np.array([1, 2]))
    with pytest.raises(ArgumentError, match="both or neither"):
        tnp.where(x > 0, x)


@pytest.mark.parametrize("name, shapes", [("vstack", [(2, 3), (2, 4)]),
                                          ("hstack", [(2, 3), (3, 3)]),
                                          ("dstack", [(2, 3), (2, 4)]),
                                          ("column_stack", [(2,), (3,)])])
def test_stack_shape_errors_name_the_function_called(name, shapes):
    xs = [np.ones(s) for s in shapes]
    for run in (getattr(tnp, name), tracer.jit(getattr(tnp, name))):
        with pytest.raises(ShapeError, match=f"^{name}: shapes .* differ"):  # a ValueError
            run(xs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_meshgrid_with_an_empty_axis(backend):
    """(Not in the spec table: ONNX Runtime's Expand of a size-1 dim to 0 fails.)"""
    x, y = np.arange(1.0), np.arange(0.0)
    got = tracer.jit(lambda x, y: tnp.stack(tnp.meshgrid(x, y)), backend=backend)(x, y)
    np.testing.assert_array_equal(got, np.stack(np.meshgrid(x, y)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 33), 1), ((33, 3), 0), ((1,), 0),
                                        ((0,), 0), ((2, 0), 1), ((64, 300), -1)])
def test_llvm_argsort_is_numpys_stable_sort(dtype, shape, axis):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, shape).astype(dtype)          # many ties
    if x.dtype.kind == "f" and x.size > 3:
        x.flat[[0, 2]] = np.nan
    got = tracer.jit(lambda x: (tnp.argsort(x, axis=axis), tnp.sort(x, axis=axis)),
                     backend="llvm")(x)
    np.testing.assert_array_equal(got[0], np.argsort(x, axis=axis, kind="stable"))
    np.testing.assert_array_equal(got[1], np.sort(x, axis=axis))


@pytest.mark.parametrize("f", [lambda x: tnp.sum(x, out=x), lambda x: tnp.var(x, 0, None, x),
                               lambda x: tnp.cumsum(x, out=x), lambda x: tnp.median(x, out=x),
                               lambda x: tnp.nanmax(x, 0, x), lambda x: tnp.all(x, 0, x)])
def test_out_arguments_are_refused(f):
    """NumPy's positions are kept (out before keepdims/ddof), but out= cannot be honoured."""
    with pytest.raises(ArgumentError, match="out="):
        f(np.ones(3))

"""isin digitize and the data-sized set functions (intersect1d union1d setdiff1d setxor1d
unique_all/counts/inverse/values, issue 26): NumPy's results eagerly; under jit (both
backends) with JAX's size=/fill_value= the same values, sorted and padded; without size=
an error that says to pass it."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ConcretizationError

A = np.array([5., 1, 2, 2, 7, np.nan, 1])
B = np.array([2., 7, 8, np.nan, 9])
I = np.array([[3, 1, 2], [1, 4, 4]], np.int32)


def runs(f, *args, backends=agreement.BACKENDS):
    """f(*args) eagerly and jitted on both backends (or `backends`)."""
    return [f(*args)] + [tracer.jit(f, backend=b)(*args) for b in backends]


def some(full):
    """Both backends for a table's representative cases, the interpreter for the rest
    (each llvm compile costs; the kernels are the same)."""
    return agreement.BACKENDS if full else ["numpy"]


def equal_nan(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want), (got, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("e,t", [(A, B), (I, np.array([4, 1, 9], np.int8)),
                                 (np.float32(2), B), (A[:0], B), (A, B[:0])],
                         ids=["float", "int", "0d", "empty-e", "empty-t"])
def test_isin(e, t, invert):
    agreement.agree(lambda e, t: tnp.isin(e, t, invert=invert), np.isin(e, t, invert=invert),
                    e, t)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [np.array([1., 2, 5, 7]), np.array([9., 5, 5, 1]),
                                  np.array([3.]), np.array([], np.float64)],
                         ids=["rising", "falling", "one", "empty"])
def test_digitize(bins, right):
    x = np.array([0., 1, 1.5, 2, 5, 6, 7, 9, np.nan])
    agreement.agree(lambda x, b: tnp.digitize(x, b, right=right),
                    np.digitize(x, bins, right=right), x, bins)
    agreement.agree(lambda x: tnp.digitize(x, bins, right=right),
                    np.digitize(x[3], bins, right=right), x[3])


def test_digitize_refuses_unsorted_bins():
    with pytest.raises(ValueError, match="digitize: bins must be monotonically"):
        tnp.digitize(A, np.array([1., 3, 2]))


@pytest.mark.parametrize("name", ["union1d", "setdiff1d", "setxor1d", "intersect1d"])
@pytest.mark.parametrize("a,b", [(A, B), (I, np.array([4, 9, 9], np.int8)), (A[:0], B),
                                 (A[:0], B[:0]), (np.float32(3), np.array([3.], np.float32))],
                         ids=["float", "int", "empty1", "empty2", "0d"])
def test_set_functions(name, a, b):
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    want = np_fn(a, b)
    equal_nan(fn(a, b), want)
    n = len(want)
    equal_nan(fn(a, b, size=n), want)
    padded = np.concatenate([want, np.full(2, -1, want.dtype)])
    for got in runs(lambda a, b: fn(a, b, size=n + 2, fill_value=-1), a, b,
                    backends=some(a is A or a is I)):
        equal_nan(got, padded)
    if n:       # the default fill is the smallest value, as JAX's
        got = tracer.jit(lambda a, b: fn(a, b, size=n + 1), backend="numpy")(a, b)
        equal_nan(got, np.concatenate([want, want[:1]]))
    with pytest.raises(ConcretizationError, match=f"{name}: .*size="):
        tracer.jit(fn)(a, b)


def test_intersect1d_return_indices():
    want = np.intersect1d(A, B, return_indices=True)
    for got in runs(lambda a, b: tnp.intersect1d(a, b, return_indices=True, size=2), A, B):
        for g, w in zip(got, want):
            equal_nan(g, w)
    for g, w in zip(tnp.intersect1d(A, B, return_indices=True), want):
        equal_nan(g, w)


FAMILY = ["unique_values", "unique_counts", "unique_inverse", "unique_all"]


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("x", [A, I, np.zeros((0, 3)), np.float32(2.5)],
                         ids=["float-nan", "int-2d", "empty", "0d"])
def test_unique_family(name, x):
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    want = np_fn(x)
    got = fn(x)
    if name == "unique_values":
        equal_nan(got, want)
        want = (np.sort(want),)     # NumPy 2.4 may give any order; sized results are sorted
    else:
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        for g, w in zip(got, want):
            equal_nan(g, w)
    n = len(want[0])
    for size in (n, n + 1):
        for got in (runs(lambda x: fn(x, size=size, fill_value=0), x, backends=some(x is A))
                    if size > n else
                    [fn(x, size=size, fill_value=0)]):
            got = (got,) if name == "unique_values" else got
            for field, g, w in zip(getattr(want, "_fields", ("values",)), got, want):
                if field in ("values", "counts"):
                    w = np.concatenate([w, np.zeros(size - n, w.dtype)])
                elif field == "indices":
                    g = np.asarray(g)[:n]
                equal_nan(g, w)
    with pytest.raises(ConcretizationError, match=f"{name}: .*size="):
        tracer.jit(fn)(x)


def test_unique_values_differentiates_and_batches():
    x = np.array([0.5, -1.25, 3.0, 2.0])         # (ties would make finite differences jump)
    tracer.check_grads(lambda x: tnp.unique_values(x, size=5) * np.arange(1., 6.), (x,),
                       order=1)
    xs = np.array([[3., 1, 3], [2, 2, 2]])
    got = tracer.vmap(lambda x: tnp.unique_counts(x, size=3, fill_value=-1))(xs)
    np.testing.assert_array_equal(got.values, [[1, 3, -1], [2, -1, -1]])
    np.testing.assert_array_equal(got.counts, [[1, 2, 0], [3, 0, 0]])
    got = tracer.vmap(lambda x: tnp.isin(x, np.array([2., 3.])))(xs)
    np.testing.assert_array_equal(got, np.isin(xs, [2, 3]))

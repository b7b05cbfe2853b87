"""numpy 2's index arithmetic, functional assembly and type predicates (issue 26):
unravel_index ravel_multi_index put_along_axis fill_diagonal (inplace=False, as JAX)
choose resize apply_along_axis apply_over_axes piecewise trim_zeros array_equiv and the
is*/as* names, against NumPy eagerly and jitted on both backends, with check_grads
through the value-moving ones and vmap of a few."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError, ConcretizationError, OutOfBoundsError

A = np.arange(12.0).reshape(3, 4) - 4.5


def tuple_agree(f, want, *args, backends=agreement.BACKENDS):
    runs = [f(*args)] + [tracer.jit(f, backend=b)(*args) for b in backends]
    for got in runs:
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("idx,shp", [(np.array([5, 7, 0]), (2, 4)), (np.int64(3), (4,)),
                                     (np.array([[1, 23]], np.int32), (2, 3, 4)),
                                     (np.zeros(0, np.int64), (2, 2))],
                         ids=["2d", "0d", "3d-i32", "empty"])
def test_unravel_ravel_roundtrip(idx, shp, order):
    want = np.unravel_index(idx, shp, order=order)
    backends = agreement.BACKENDS if order == "C" else ["numpy"]
    tuple_agree(lambda i: tnp.unravel_index(i, shp, order=order), want, idx, backends=backends)
    flat = np.ravel_multi_index(want, shp, order=order)
    np.testing.assert_array_equal(tnp.ravel_multi_index(want, shp, order=order), flat)
    agreement.agree(lambda *c: tnp.ravel_multi_index(c, shp, mode="clip", order=order),
                    flat, *want, backends=backends)


def test_index_modes_and_errors():
    c = (np.array([1, 0, -1]), np.array([3, 5, 9]))
    for mode in ["wrap", "clip", ("clip", "wrap")]:
        agreement.agree(lambda a, b: tnp.ravel_multi_index((a, b), (2, 4), mode=mode),
                        np.ravel_multi_index(c, (2, 4), mode=mode), *c)
    with pytest.raises(OutOfBoundsError, match="ravel_multi_index"):
        tnp.ravel_multi_index(c, (2, 4))
    with pytest.raises(ConcretizationError, match="mode='wrap' or mode='clip'"):
        tracer.jit(lambda a, b: tnp.ravel_multi_index((a, b), (2, 4)))(*c)
    with pytest.raises(OutOfBoundsError, match="unravel_index: index 8 is out of bounds"):
        tnp.unravel_index(8, (2, 4))
    got = tracer.jit(lambda i: tnp.unravel_index(i, (2, 4)))(np.array([8, -1]))
    np.testing.assert_array_equal(np.stack(got), [[1, 0], [3, 0]])     # clamped, as JAX


@pytest.mark.parametrize("idx,vals,axis", [(np.array([[1], [0], [3]]), -1.0, 1),
                                           (np.array([[2, 0, 1, 1]]), np.arange(4.0), 0),
                                           (np.array([[-1], [0], [-4]]), 9.0, 1),
                                           (np.array([0, 11]), np.array([5.0, 6.0]), None)],
                         ids=["col", "row", "negative", "flat"])
def test_put_along_axis(idx, vals, axis):
    want = A.copy()
    np.put_along_axis(want, idx, vals, axis)
    agreement.agree(lambda a, v: tnp.put_along_axis(a, idx, v, axis, inplace=False), want,
                    A, np.asarray(vals))
    tracer.check_grads(lambda a, v: tnp.put_along_axis(a, idx, v, axis, inplace=False),
                       (A, np.asarray(vals)), order=1)


def test_put_along_axis_and_fill_diagonal_need_inplace_false():
    with pytest.raises(ArgumentError, match="put_along_axis: .*inplace=False"):
        tnp.put_along_axis(A, np.zeros((3, 1), int), 1.0, 1)
    with pytest.raises(ArgumentError, match="fill_diagonal: .*inplace=False"):
        tnp.fill_diagonal(A, 1.0)


@pytest.mark.parametrize("shp,val,wrap", [((3, 5), np.array([1.0, 2.0]), False),
                                          ((7, 3), 5.0, True), ((7, 3), 5.0, False),
                                          ((3, 3, 3), np.array([4.0]), False),
                                          ((0, 0), 1.0, False), ((1, 1), 2.0, False)],
                         ids=["wide", "tall-wrap", "tall", "3d", "empty", "one"])
def test_fill_diagonal(shp, val, wrap):
    a = np.arange(float(np.prod(shp))).reshape(shp)
    want = a.copy()
    np.fill_diagonal(want, val, wrap)
    agreement.agree(lambda a, v: tnp.fill_diagonal(a, v, wrap, inplace=False), want, a,
                    np.asarray(val))
    if a.size:
        tracer.check_grads(lambda a, v: tnp.fill_diagonal(a, v, wrap, inplace=False),
                           (a, np.asarray(val)), order=1)


def test_choose():
    choices = [np.arange(4.0), np.arange(4.0) * 10, np.float64(100)]
    i = np.array([0, 1, 2, 1])
    np.testing.assert_array_equal(tnp.choose(i, choices), np.choose(i, choices))
    j = np.array([0, 4, -1, 1])
    for mode in ["wrap", "clip"]:
        agreement.agree(lambda j, *c: tnp.choose(j, c, mode=mode),
                        np.choose(j, choices, mode=mode), j, *choices)
    with pytest.raises(ConcretizationError, match="choose: mode='raise'"):
        tracer.jit(lambda j: tnp.choose(j, choices))(j)
    with pytest.raises(OutOfBoundsError, match="choose"):
        tnp.choose(j, choices)
    tracer.check_grads(lambda a, b: tnp.choose(i, [a, b, 0.0], mode="clip"),
                       tuple(choices[:2]), order=1)


@pytest.mark.parametrize("a,new", [(np.array([1, 2, 3]), (2, 4)), (A, 5), (A, (0,)),
                                   (np.zeros(0), 3), (np.float32(2), (2, 2))],
                         ids=["grow", "shrink", "to-empty", "from-empty", "0d"])
def test_resize(a, new):
    agreement.agree(lambda a: tnp.resize(a, new), np.resize(a, new), a)


def test_resize_grad():
    tracer.check_grads(lambda a: tnp.resize(a, (5, 3)), (A,), order=1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis(axis):
    a3 = np.arange(24.0).reshape(2, 3, 4)
    for f, nf in [(lambda r: tnp.sum(r * r), lambda r: np.sum(r * r)),
                  (lambda r: r[:2] * tnp.max(r), lambda r: r[:2] * np.max(r))]:
        agreement.agree(lambda a: tnp.apply_along_axis(f, axis, a),
                        np.apply_along_axis(nf, axis, a3), a3)
    tracer.check_grads(lambda a: tnp.apply_along_axis(lambda r: tnp.sum(r * r), axis, a),
                       (a3,), order=1)


def test_apply_over_axes():
    a3 = np.arange(24.0).reshape(2, 3, 4)
    for axes in [[0, 2], 1, [-1]]:
        agreement.agree(lambda a: tnp.apply_over_axes(tnp.sum, a, axes),
                        np.apply_over_axes(np.sum, a3, axes), a3)


X = np.linspace(-2, 2, 9)


@pytest.mark.parametrize("conds,funcs", [
    (lambda x: [x < 0, x >= 0], [lambda x: -x, lambda x: x ** 2]),
    (lambda x: [x < 0], [1.5, 7.0]),
    (lambda x: [x < -1, x > 1], [lambda x: x * 3, lambda x: x - 1, lambda x: x / 2]),
    (lambda x: x > 0, [lambda x: x + 1])], ids=["two", "values+otherwise", "three", "one"])
def test_piecewise(conds, funcs):
    agreement.agree(lambda x: tnp.piecewise(x, conds(x), funcs),
                    np.piecewise(X, conds(X), funcs), X)
    tracer.check_grads(lambda x: tnp.piecewise(x, conds(x), funcs), (X + 0.05,), order=1)
    np.testing.assert_allclose(tracer.vmap(lambda x: tnp.piecewise(x, conds(x), funcs))(
        X.reshape(3, 3)), np.piecewise(X, conds(X), funcs).reshape(3, 3))


def test_trim_zeros_is_eager_only():
    for trim in ["fb", "f", "b"]:
        a = np.array([0, 0, 1, 2, 0, 3, 0])
        np.testing.assert_array_equal(tnp.trim_zeros(a, trim), np.trim_zeros(a, trim))
    np.testing.assert_array_equal(tnp.trim_zeros(np.zeros(3)), np.trim_zeros(np.zeros(3)))
    with pytest.raises(ConcretizationError, match="trim_zeros: the result's size"):
        tracer.jit(tnp.trim_zeros)(np.array([0, 1, 0]))


@pytest.mark.parametrize("a,b", [([1, 2], [[1, 2], [1, 2]]), ([1, 2], [1, 3]),
                                 ([1, 2], [1, 2, 3]), (np.zeros(0), np.zeros((2, 0))),
                                 (np.float32(1), np.ones(3))])
def test_array_equiv(a, b):
    assert tnp.array_equiv(a, b) is np.array_equiv(a, b)
    if (np.shape(a), np.shape(b)) != ((2,), (3,)):
        got = tracer.jit(tnp.array_equiv)(np.asarray(a), np.asarray(b))
        assert bool(got) == np.array_equiv(a, b)


@pytest.mark.parametrize("x", [1.5, 3, True, np.float32(2), np.array(1.0), np.ones(2),
                               [1, 2], "s", 1 + 2j, np.zeros(0)])
def test_type_predicates(x):
    assert tnp.isscalar(x) == np.isscalar(x)
    assert tnp.iscomplexobj(x) == np.iscomplexobj(x)
    assert tnp.isrealobj(x) == np.isrealobj(x)
    if not isinstance(x, (str, complex)):
        agreement.agree(tnp.iscomplex, np.iscomplex(x), np.asarray(x))
        agreement.agree(tnp.isreal, np.isreal(x), np.asarray(x))


def test_isscalar_of_a_traced_python_number_is_numpys_answer():
    assert tracer.jit(lambda x: tnp.ones(2) * tnp.isscalar(x))(2.0).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("x", [5, [1, 2], np.arange(6).reshape(2, 3)[:, ::2], np.float32(1)])
def test_ascontiguousarray_asanyarray(x):
    for dtype in [None, np.float32]:
        agreement.agree(lambda x: tnp.ascontiguousarray(x, dtype),
                        np.ascontiguousarray(x, dtype), np.asarray(x))
        agreement.agree(lambda x: tnp.asanyarray(x, dtype), np.asanyarray(x, dtype),
                        np.asarray(x))


# ---- vectorize (tracer/numpy_mapped.py) ---------------------------------------------------

def test_vectorize_broadcasts_scalar_functions_and_signatures():
    f = tnp.vectorize(lambda a, b: a + 2 * b)
    np.testing.assert_array_equal(f(np.arange(3.0), np.ones((2, 1))),
                                  np.arange(3.0) + 2 * np.ones((2, 1)))
    assert f(np.ones((1, 3)), 1.0).shape == (1, 3)
    rng = np.random.default_rng(0)
    x, y, m = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((5, 2, 3))
    dot = tnp.vectorize(lambda a, b: tnp.dot(a, b), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(x, y), x @ y)
    np.testing.assert_allclose(tracer.jit(dot)(x, y), x @ y)
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(dot(x, y)))(x),
                               np.broadcast_to(y, x.shape))
    mv = tnp.vectorize(lambda a, v: a @ v, signature="(m,n),(n)->(m)")
    np.testing.assert_allclose(mv(m, y), m @ y)
    two = tnp.vectorize(lambda a: (a, 2 * a), signature="()->(),()")
    assert [o.tolist() for o in two(np.arange(3.0))] == [[0, 1, 2], [0, 2, 4]]
    power = tnp.vectorize(lambda a, n: a ** n, excluded={1})
    assert power(np.arange(4.0), 2).tolist() == [0, 1, 4, 9]


def test_vectorize_checks_core_dimensions():
    dot = tnp.vectorize(lambda a, b: tnp.dot(a, b), signature="(n),(n)->()")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        dot(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        tnp.vectorize(lambda a: a, signature="(n->()")(np.ones(3))
    bad = tnp.vectorize(lambda a: a, signature="(n)->()")
    with pytest.raises(ValueError, match="output 0 has shape"):
        bad(np.ones((2, 3)))


def test_static_index_helpers_and_constants_are_numpy_s():
    """jax.numpy's s_, index_exp, mgrid, ogrid, iterable, euler_gamma and bool: static
    helpers whose NumPy objects give the same indices and constant grids here."""
    x = np.arange(6.0)
    assert tracer.jit(lambda v: v[tnp.s_[1:5:2]])(x).tolist() == [1.0, 3.0]
    assert tnp.index_exp[1:2] == (slice(1, 2),)
    np.testing.assert_array_equal(tnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    assert [g.shape for g in tnp.ogrid[0:2, 0:3]] == [(2, 1), (1, 3)]
    assert tnp.iterable([1]) and not tnp.iterable(1)
    assert tnp.euler_gamma == np.euler_gamma and tnp.bool == np.bool_ and tnp.bool is tnp.bool_
    assert tnp.zeros(2, tnp.bool).dtype == np.bool_

"""tracer.numpy and tracer.nn against NumPy: the spec table (values, dtypes, shape rules)
eagerly and under jit(backend="numpy"), plus the semantics the table cannot express
(NEP 50 weak scalars, mixed-dtype promotion, stability of softmax & co, API coverage)."""
import itertools
import re
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from spec import F32, F64, case_id, cases, make_input
from spec_dtypes import check_row

CASES = cases()

# API.md's lists, hard-coded (shared/API.md is not always beside the repo in CI).
NUMPY_API = """add subtract multiply divide negative power exp log log1p expm1 sqrt sin cos tanh
abs sign maximum minimum clip where greater greater_equal less less_equal equal not_equal sum
mean max min prod argmax argmin matmul dot reshape transpose broadcast_to expand_dims squeeze
concatenate stack zeros ones zeros_like ones_like full arange asarray astype take""".split()
NN_API = "relu sigmoid softmax log_softmax logsumexp gelu".split()
OPERATORS = ["__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__matmul__",
             "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
             "__getitem__", "T", "shape", "dtype", "ndim", "sum", "mean", "max", "reshape",
             "astype"]


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_spec_eager_jit_and_shape_rule_match_numpy(case):
    spec, shapes, dt = case
    rng = np.random.default_rng(0)
    xs = [make_input(s, dt, spec.domain, rng) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's own 0/0 of empty means
        want = spec.ref(np, *xs)
        eager = spec.fn(tnp, *xs)
        jitted = tracer.jit(lambda *a: spec.fn(tnp, *a), backend="numpy")(*xs)
    check_row(eager, want, dt, spec.atol)
    check_row(jitted, want, dt, spec.atol)
    graph = tracer.make_graph(lambda *a: spec.fn(tnp, *a))(*xs)
    (out,) = graph.out_avals
    assert (out.shape, out.dtype) == (np.shape(eager), np.asarray(eager).dtype)
    graph.verify()


def test_every_api_name_exists_and_has_a_spec_row():
    missing = [n for n in NUMPY_API if not callable(getattr(tnp, n, None))]
    missing += [f"nn.{n}" for n in NN_API if not callable(getattr(tracer.nn, n, None))]
    missing += [f"Tracer.{n}" for n in OPERATORS if not hasattr(tracer.Tracer, n)]
    assert missing == []
    rows = {s.name for s, _, _ in CASES}
    assert [n for n in NUMPY_API + NN_API
            if not any(re.match(rf"{n}($|[_(])", r) for r in rows)] == []


# ---- NEP 50: Python scalars are weak, NumPy scalars and arrays are not ------------------

WEAK_CASES = [
    (np.float32, 2.0, np.float32), (np.float32, 2, np.float32), (np.int32, 2, np.int32),
    (np.int32, 2.5, np.float64), (np.bool_, 2, np.int64), (np.bool_, 2.5, np.float64),
    (np.int64, True, np.int64), (np.float32, np.float64(2.0), np.float64),
    (np.int32, np.int64(2), np.int64), (np.float32, np.int32(2), np.float64),
]


@pytest.mark.parametrize("dtype,scalar,want", WEAK_CASES,
                         ids=[f"{d.__name__}-{s!r}" for d, s, _ in WEAK_CASES])
def test_scalar_promotion_follows_nep50(dtype, scalar, want):
    x = np.arange(3).astype(dtype)
    for op in (tnp.add, tnp.multiply, tnp.maximum, lambda a, b: tnp.where(a > 0, a, b)):
        ref = np.asarray(op(x, scalar) if op is not tnp.add else x + scalar).dtype
        assert ref == want
        assert tnp.asarray(op(x, scalar)).dtype == want
        # the same scalar as a jit argument is as weak as the literal
        assert tracer.jit(op, backend="numpy")(x, scalar).dtype == want
        assert tracer.jit(lambda a: op(a, scalar), backend="numpy")(x).dtype == want


def test_weak_results_of_scalar_only_computations_stay_weak():
    x32 = np.ones(2, np.float32)
    f = tracer.jit(lambda a, s: a * (s * 2.0 + 1), backend="numpy")
    assert f(x32, 3.0).dtype == np.float32
    g = tracer.make_graph(lambda s: s * 2)(3.0)
    assert g.out_avals[0].weak_type and g.out_avals[0].dtype == np.float64


@pytest.mark.parametrize("fun", [
    lambda x, s: x * tnp.exp(s), lambda x, s: x * tnp.asarray(s), lambda x, s: x + tnp.add(s, 1),
    lambda x, s: x - tnp.where(True, s, 0.0), lambda x, s: x * tnp.sum(s),
    lambda x, s: x + s * 2 + tnp.multiply(s, 1.0),
], ids=["exp", "asarray", "add", "where", "sum", "mixed"])
def test_tracer_numpy_results_are_strong_so_jit_agrees_with_eager(fun):
    x = np.ones(2, np.float32)
    eager = fun(x, 1.5)      # NumPy: np.exp(1.5) etc. are float64 values, not Python floats
    assert eager.dtype == np.float64
    assert tracer.jit(fun, backend="numpy")(x, 1.5).dtype == np.float64


def test_python_scalars_alone_follow_numpy():
    assert tnp.add(2, 3) == 5 and np.asarray(tnp.add(2, 3)).dtype == np.int64
    assert np.asarray(tnp.multiply(2, 1.5)).dtype == np.float64
    assert np.asarray(tnp.exp(1)).dtype == np.float64
    assert np.asarray(tnp.divide(3, 2)).dtype == np.float64


DTS = [np.bool_, np.int32, np.int64, np.float32, np.float64]


@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "divide", "equal", "where",
                                "concatenate", "matmul"])
def test_mixed_dtype_promotion_matches_numpy(op):
    def call(m, a, b):
        if op == "where":
            return m.where(np.array([True, False, True]), a, b)
        if op == "concatenate":
            return m.concatenate([a, b])
        if op == "matmul":
            return m.matmul(m.reshape(a, (3, 1)), m.reshape(b, (1, 3)))
        return getattr(m, op)(a, b)
    for da, db in itertools.product(DTS, DTS):
        a, b = np.arange(1, 4).astype(da), np.arange(2, 5).astype(db)
        want = call(np, a, b)
        for got in (call(tnp, a, b), tracer.jit(lambda p, q: call(tnp, p, q),
                                                backend="numpy")(a, b)):
            assert got.dtype == want.dtype, (da, db)
            np.testing.assert_array_equal(got, want)


def test_float32_stays_float32_through_transcendentals_and_reductions():
    x = np.linspace(0.1, 2, 6, dtype=np.float32).reshape(2, 3)
    fns = [tnp.exp, tnp.log, tnp.sqrt, tnp.tanh, tnp.mean, tnp.sum, tracer.nn.softmax,
           tracer.nn.gelu, tracer.nn.sigmoid, tracer.nn.logsumexp, lambda v: v / 3,
           lambda v: v ** 2, lambda v: tnp.power(v, 0.5), lambda v: tnp.clip(v, 0, 1.5)]
    for f in fns:
        assert np.asarray(f(x)).dtype == np.float32
        assert tracer.jit(f, backend="numpy")(x).dtype == np.float32


# ---- numerically stable nn functions ------------------------------------------------------

@pytest.mark.filterwarnings("ignore:divide by zero")   # log(0) = -inf, as in NumPy
@pytest.mark.parametrize("dt", [F32, F64], ids=str)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_softmax_family_is_stable_for_huge_and_infinite_inputs(dt, mode):
    nn = tracer.nn
    wrap = (lambda f: f) if mode == "eager" else (lambda f: tracer.jit(f, backend="numpy"))
    x = np.array([[1000.0, 1000.0, -np.inf], [-1000.0, 0.0, -1000.0]], dt)
    sm = wrap(nn.softmax)(x)
    assert sm.dtype == dt
    np.testing.assert_allclose(sm, [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]], atol=1e-30)
    np.testing.assert_allclose(wrap(nn.log_softmax)(x)[0], [-np.log(2), -np.log(2), -np.inf],
                               rtol=1e-6)
    np.testing.assert_allclose(wrap(lambda v: nn.logsumexp(v, axis=1))(x),
                               [1000 + np.log(2), 0.0], rtol=1e-6)
    assert wrap(nn.logsumexp)(np.full(3, -np.inf, dt)) == -np.inf
    with np.errstate(over="raise", invalid="raise"):     # no overflow or NaN on the way
        wrap(nn.softmax)(np.array([1e4, -1e4, 0.0], dt))
        wrap(nn.logsumexp)(np.array([1e4, 1e4], dt))


def test_gelu_default_is_the_tanh_form():
    x = np.linspace(-3, 3, 7)
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(tracer.nn.gelu(x), tanh_form, rtol=1e-14)
    assert np.max(np.abs(tracer.nn.gelu(x) - tracer.nn.gelu(x, approximate=False))) > 1e-5


# ---- reductions and indexing details -------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 0), (), (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_axes(axis, keepdims):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11
    for name in ("sum", "mean", "max", "min", "prod"):
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        got = getattr(tnp, name)(x, axis=axis, keepdims=keepdims)
        jitted = tracer.jit(lambda v: getattr(tnp, name)(v, axis=axis, keepdims=keepdims),
                            backend="numpy")(x)
        for g in (got, jitted):
            assert np.shape(g) == np.shape(want)
            np.testing.assert_allclose(g, want, rtol=1e-12)


def test_eager_results_are_numpy_arrays_or_scalars_like_numpy():
    x = np.arange(6.0).reshape(2, 3)
    assert type(tnp.exp(x)) is np.ndarray
    assert isinstance(tnp.sum(x), (np.ndarray, np.generic))
    assert type(tnp.take(x, [0], axis=1)) is np.ndarray


def test_traced_integer_index_gathers_and_wraps_negative_indices():
    x = np.arange(12.0).reshape(3, 4)
    f = tracer.jit(lambda v, i: v[i] + v[:, i].sum(), backend="numpy")
    for i in (0, 2, -1, -3):
        np.testing.assert_array_equal(f(x, np.int64(i)), x[i] + x[:, i].sum())
    np.testing.assert_array_equal(tracer.jit(lambda v, i: v[i], backend="numpy")(
        x, np.array([[2, -1]])), x[np.array([[2, -1]])])

"""Random chains of ops over every dtype class (hypothesis): bool, int8/int32/int64,
uint8, float16, bfloat16, float64, on 0-d, size-1, empty and broadcasting shapes, with
each dtype's edge values (INT_MIN, -1, 0; NaN, infinities, -0.0). The llvm backend must
give the numpy backend's bits, and both NumPy's own answer: integer overflow wraps, and
`//` and `%` by zero give 0 (README, Sizes and indices)."""
import warnings

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import tracer
import tracer.numpy as tnp

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int32, np.int64, np.uint8,
                                np.float16, BF16, np.float64)]
HALF = (np.dtype(np.float16), BF16)

# name: (tracer op, NumPy op, dtype kinds it takes); every op keeps broadcasting shapes
OPS = {
    "add": (tnp.add, np.add, "iuf"),
    "subtract": (tnp.subtract, np.subtract, "iuf"),
    "multiply": (tnp.multiply, np.multiply, "biuf"),
    "floor_divide": (tnp.floor_divide, np.floor_divide, "iu"),
    "remainder": (tnp.remainder, np.remainder, "iu"),
    "maximum": (tnp.maximum, np.maximum, "biuf"),
    "minimum": (tnp.minimum, np.minimum, "biuf"),
    "where": (lambda x, y: tnp.where(x > y, x, y), lambda x, y: np.where(x > y, x, y), "biuf"),
    "bitwise_xor": (tnp.bitwise_xor, np.bitwise_xor, "biu"),
    "bitwise_and": (tnp.bitwise_and, np.bitwise_and, "biu"),
    "negative": (lambda x, y: tnp.negative(x), lambda x, y: np.negative(x), "iuf"),
    "abs": (lambda x, y: tnp.abs(y), lambda x, y: np.abs(y), "biuf"),
    "square": (lambda x, y: tnp.square(x), lambda x, y: np.square(x), "iuf"),
    "less": (lambda x, y: tnp.less(x, y).astype(x.dtype),
             lambda x, y: np.less(x, y).astype(x.dtype), "biuf"),
    "equal": (lambda x, y: tnp.equal(x, y).astype(x.dtype),
              lambda x, y: np.equal(x, y).astype(x.dtype), "biuf"),
    "sign": (lambda x, y: tnp.sign(y), lambda x, y: np.sign(y), "iuf"),
}


def kind(dtype):
    return "f" if dtype == BF16 else dtype.kind       # ml_dtypes' kind is "V"


def values(dtype):
    """Edge values of `dtype` with a few ordinary ones."""
    if kind(dtype) == "b":
        return [False, True]
    if kind(dtype) in "iu":
        info = np.iinfo(dtype)
        return [info.min, info.max, 0, 1, 2, 3, 7, info.max - 1, info.min + 1] + (
            [-1, -2, -7] if dtype.kind == "i" else [])
    return [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5, 2.0, 3.25, -7.0, 1e-3]


SHAPE_PAIRS = [((), ()), ((1,), ()), ((0,), ()), ((0,), (1,)), ((3, 1), (1, 4)),
               ((2, 0, 3), (3,)), ((5,), (5,)), ((1, 1), (7,)), ((4, 1, 6), (3, 1)),
               ((17,), (1,))]


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    names = [n for n, (_, _, kinds) in OPS.items() if kind(dtype) in kinds]
    ops = draw(st.lists(st.sampled_from(names), min_size=1, max_size=5))
    sx, sy = draw(st.sampled_from(SHAPE_PAIRS))
    pool = values(dtype)
    x, y = (np.array(draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(s)),
                                   max_size=int(np.prod(s)))), dtype).reshape(s)
            for s in (sx, sy))
    return ops, x, y


def chain(ops, table):
    """x, y -> (x, y) after each op: x becomes op(x, y), y the old x (so both sides
    broadcast through the whole chain)."""
    def f(x, y):
        for name in ops:
            x, y = table[name](x, y), x
        return x, y
    return f


def assert_same_bits(g, w):
    """Equal dtypes, shapes and values; floats with their signed zeros, NaN matching NaN
    whatever its sign (the rule of tests/lowering/test_one_answer.py)."""
    assert (g.dtype, g.shape) == (w.dtype, w.shape)
    if kind(g.dtype) != "f":
        np.testing.assert_array_equal(g, w)
        return
    g, w = g.astype(np.float64), w.astype(np.float64)
    assert np.all((g == w) & (np.signbit(g) == np.signbit(w)) | np.isnan(g) & np.isnan(w)), \
        (g, w)


def same(got, want, exact):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:           # a half result: NumPy rounds float16 ops alike, bfloat16's too
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=1e-2, atol=1e-2)


SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_dtype_chains_agree_across_backends_and_numpy(case):
    ops, x, y = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = chain(ops, {n: o[1] for n, o in OPS.items()})(x, y)
        interpreted = tracer.jit(chain(ops, {n: o[0] for n, o in OPS.items()}),
                                 backend="numpy")(x, y)
    compiled = tracer.jit(chain(ops, {n: o[0] for n, o in OPS.items()}))(x, y)
    for c, i in zip(compiled, interpreted):
        assert_same_bits(c, i)
    same(compiled, want, exact=x.dtype not in HALF)

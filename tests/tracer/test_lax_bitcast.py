"""tracer.lax.bitcast_convert_type and Tracer.view: NumPy's .view bits on both backends
(every same-size dtype pair, NaN payloads, -0.0, 0-d, empty), JAX's trailing axis for other
sizes, jit/vmap, a zero gradient, clear errors."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

BF16 = np.dtype(ml_dtypes.bfloat16)
BY_SIZE = {1: ["int8", "uint8"], 2: ["int16", "uint16", "float16", BF16],
           4: ["int32", "uint32", "float32"], 8: ["int64", "uint64", "float64"]}
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _quiet_halves(bits):
    """16-bit patterns whose float16 and bfloat16 readings have no signaling NaN: the llvm
    backend holds those dtypes in float32 registers, where signaling NaNs become quiet."""
    while True:
        f16_nan = (bits & 0x7C00 == 0x7C00) & (bits & 0x3FF != 0)
        bf16_nan = (bits & 0x7F80 == 0x7F80) & (bits & 0x7F != 0)
        new = bits | np.where(f16_nan, 0x200, 0).astype(bits.dtype) | \
            np.where(bf16_nan, 0x40, 0).astype(bits.dtype)
        if np.array_equal(new, bits):
            return bits
        bits = new


def _patterns(size):
    """Random bit patterns plus every float's -0.0, infinities and NaNs with payloads."""
    u = UNSIGNED[size]
    top = 1 << (8 * size - 1)
    special = [0, top, top - 1, top + 1, 1]
    for dt in BY_SIZE[size]:
        if np.dtype(dt).kind in "fV":
            finfo = ml_dtypes.finfo(dt)
            inf = int(np.array(np.inf, dt).view(u))
            special += [inf, inf | top, inf | 1 << (finfo.nmant - 1) | 5, inf | 3 | top]
    rand = np.random.default_rng(size).integers(0, 2 ** (8 * size), 240 - len(special), u)
    bits = np.concatenate([np.array(special, u), rand]).reshape(5, -1)
    return _quiet_halves(bits) if size == 2 else bits


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    u = UNSIGNED[want.dtype.itemsize]
    np.testing.assert_array_equal(got.view(u), want.view(u))


@pytest.mark.parametrize("backend", ["eager", "numpy", "llvm"])
@pytest.mark.parametrize("size", sorted(BY_SIZE))
def test_every_same_size_pair_matches_numpy_view(size, backend):
    bits = _patterns(size)
    pairs = list(itertools.product(BY_SIZE[size], repeat=2))
    xs = [bits.view(src) for src, _ in pairs]

    def f(*xs):
        # the doubled bitcast runs in one fused loop on the llvm backend
        return [lax.bitcast_convert_type(lax.bitcast_convert_type(x, dst), dst)
                for x, (_, dst) in zip(xs, pairs)]
    outs = f(*xs) if backend == "eager" else tracer.jit(f, backend=backend)(*xs)
    for out, x, (_, dst) in zip(outs, xs, pairs):
        _same_bits(out, x.view(dst))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_zero_d_empty_bool_and_fused_arithmetic(backend):
    def f(s, e, b, x):
        return (lax.bitcast_convert_type(s, np.int32), lax.bitcast_convert_type(e, np.float64),
                lax.bitcast_convert_type(b, bool),
                lax.bitcast_convert_type(lax.bitcast_convert_type(x * 2, np.uint32)
                                         + np.uint32(1), np.float32))
    s, e, b = np.float32(-0.0), np.zeros((0, 3), np.int64), np.array([True, False])
    x = np.array([1.0, -3.5, np.inf], np.float32)
    for fn in (f, tracer.jit(f, backend=backend)):
        outs = fn(s, e, b, x)
        _same_bits(outs[0], np.array(s).view(np.int32))
        _same_bits(outs[1], e.view(np.float64))
        np.testing.assert_array_equal(outs[2], b)
        _same_bits(outs[3], ((x * 2).view(np.uint32) + 1).view(np.float32))


@pytest.mark.parametrize("backend", ["eager", "numpy", "llvm"])
@pytest.mark.parametrize("old,new", [(np.float64, np.uint8), (np.uint32, np.int16),
                                     (BF16, np.uint8), (np.int64, np.float32)])
def test_other_item_sizes_add_or_remove_the_last_axis_as_jax(old, new, backend):
    x = _patterns(np.dtype(old).itemsize)[:, :6].view(old)
    ratio = np.dtype(old).itemsize // np.dtype(new).itemsize
    want = x.view(new).reshape(x.shape + (ratio,))
    run = (lambda f, *a: f(*a)) if backend == "eager" else \
        (lambda f, *a: tracer.jit(f, backend=backend)(*a))
    _same_bits(run(lambda x: lax.bitcast_convert_type(x, new), x), want)
    _same_bits(run(lambda w: lax.bitcast_convert_type(w, old), want), x)


def test_as_jax():
    jax = pytest.importorskip("jax")
    x = np.array([[1.5, -2.0], [np.nan, 1e-40]], np.float32)
    for new in (np.int32, np.uint8, np.float16):
        _same_bits(lax.bitcast_convert_type(x, new),
                   np.asarray(jax.lax.bitcast_convert_type(x, new)))


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_vmap_jit_and_view_method(backend):
    x = np.arange(24, dtype=np.float32).reshape(3, 8) - 7.25
    f = tracer.jit(tracer.vmap(lambda r: (lax.bitcast_convert_type(r, np.uint16),
                                          r.view(np.uint8), r.view(np.float64))),
                   backend=backend)
    a, b, c = f(x)
    _same_bits(a, x.view(np.uint16).reshape(3, 8, 2))
    _same_bits(b, x.view(np.uint8))
    _same_bits(c, x.view(np.float64))


def test_gradient_is_zero_as_in_jax():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    g = tracer.grad(lambda x: tnp.sum(lax.bitcast_convert_type(x, np.float32) * 2.0 + x))(x)
    np.testing.assert_array_equal(g, np.ones(3, np.float32))
    j = tracer.jvp(lambda x: lax.bitcast_convert_type(x, np.float32), (x,), (x,))[1]
    np.testing.assert_array_equal(j, np.zeros(3, np.float32))


@pytest.mark.parametrize("call,error,words", [
    (lambda: lax.bitcast_convert_type(np.zeros(3, np.int8), bool), tracer.DTypeError,
     ["bitcast_convert_type", "int8", "bool", "x.astype(bool)"]),
    (lambda: lax.bitcast_convert_type(np.zeros(3, np.uint8), np.uint16), tracer.ShapeError,
     ["bitcast_convert_type", "uint8", "uint16", "(3,)", "size 2"]),
    (lambda: lax.bitcast_convert_type(np.float32(1), np.float64), tracer.ShapeError,
     ["float32", "float64", "()"]),
    (lambda: lax.bitcast_convert_type(np.zeros(2), np.complex64), tracer.DTypeError,
     ["complex64", "not supported"]),
    (lambda: tracer.jit(lambda x: x.view(np.uint16))(np.zeros((), np.float32)),
     tracer.ShapeError, ["view", "float32", "uint16", "rank >= 1"]),
    (lambda: tracer.jit(lambda x: x.view(np.float64))(np.zeros(3, np.float32)),
     tracer.ShapeError, ["view", "(3,)", "multiple of 8 bytes"]),
    (lambda: tracer.run_kernel("bitcast", [np.zeros(2, np.float32)], {"dtype": np.int16}),
     tracer.DTypeError, ["bitcast", "equal item sizes", "bitcast_convert_type"]),
])
def test_clear_errors(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value)

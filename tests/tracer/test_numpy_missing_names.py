"""NumPy names and keywords tracer.numpy lacked (found by comparing numpy-coverage.md's
names and NumPy 2's signatures with tracer.numpy's): bincount (with JAX's length=), and
NumPy's ufunc keywords on the elementwise functions. Each against NumPy eagerly and
jitted on both backends, under grad (finite differences) and vmap, on empty and 0-d
inputs."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ConcretizationError

BACKENDS = agreement.BACKENDS
X = np.array([1, 1, 2, 3, 3, 3, 0, 5], np.int32)
W = np.linspace(-1, 2, 8).astype(np.float32)


# ---- bincount ------------------------------------------------------------------------------

@pytest.mark.parametrize("x", [X, X.astype(np.uint8), X.astype(np.int64), X > 1,
                               np.array([], np.int32)], ids=["i32", "u8", "i64", "bool", "empty"])
@pytest.mark.parametrize("minlength", [0, 9])
def test_bincount_counts_as_numpy(x, minlength):
    want = np.bincount(x, minlength=minlength)
    got = tnp.bincount(x, minlength=minlength)
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    agreement.agree(lambda x: tnp.bincount(x, minlength=minlength, length=len(want)), want, x)


@pytest.mark.parametrize("w", [W, W.astype(np.float64), (W * 4).astype(np.int16), W > 0])
def test_bincount_weights_sum_in_float64_as_numpy(w):
    want = np.bincount(X, w, minlength=7)
    assert want.dtype == np.float64
    agreement.agree(lambda x, w: tnp.bincount(x, w, minlength=7, length=7), want, X, w)
    np.testing.assert_array_equal(tnp.bincount(X, weights=w, minlength=7), want)


def test_bincount_length_drops_values_past_it_and_clips_negatives_as_jax():
    x = np.array([-1, -1, 1, 3, 10])
    agreement.agree(lambda x: tnp.bincount(x, length=5), np.array([2, 1, 0, 1, 0]), x)
    agreement.agree(lambda x: tnp.bincount(x, minlength=8, length=2), np.array([2, 1]), x)


def test_bincount_differentiates_in_its_weights():
    def loss(w):
        return tnp.sum(tnp.bincount(X, w, length=6) * np.arange(1.0, 7.0))
    want = np.arange(1.0, 7.0)[X].astype(np.float32)
    for f in [tracer.grad(loss)] + [tracer.jit(tracer.grad(loss), backend=b) for b in BACKENDS]:
        got = f(W)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want)
    tracer.check_grads(lambda w: tnp.bincount(X, w, length=6), (W.astype(np.float64),),
                       order=2)


def test_bincount_under_vmap():
    xs = np.array([[0, 1, 1, 4], [3, 3, 2, 9]])
    want = np.stack([np.bincount(x, minlength=6)[:6] for x in xs])
    for b in BACKENDS:
        f = tracer.jit(tracer.vmap(lambda x: tnp.bincount(x, length=6)), backend=b)
        np.testing.assert_array_equal(f(xs), want)
    ws = np.stack([W, 2 * W])
    got = tracer.vmap(lambda w: tnp.bincount(X, w, length=6), in_axes=0)(ws)
    np.testing.assert_allclose(got, np.stack([np.bincount(X, w) for w in ws]))


def test_bincount_errors_name_the_problem():
    with pytest.raises(ConcretizationError, match="bincount: .* pass length="):
        tracer.jit(tnp.bincount)(X)
    with pytest.raises(ValueError, match="bincount: x must have no negative elements"):
        tnp.bincount(np.array([0, -1]))
    with pytest.raises(ValueError, match=r"bincount: x must be 1-D, got shape \(\)"):
        tnp.bincount(np.int32(3))
    with pytest.raises(ValueError, match=r"bincount: x must be 1-D, got shape \(2, 2\)"):
        tnp.bincount(np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="bincount: x must be an integer array, got float32"):
        tnp.bincount(W)
    with pytest.raises(ValueError, match="bincount: minlength and length must not be"):
        tnp.bincount(X, minlength=-1)
    with pytest.raises(ValueError, match=r"bincount: weights of shape \(3,\) must have x's"):
        tnp.bincount(X, W[:3])


# ---- ufunc keywords: out, where, casting, order, dtype, subok -------------------------------

UFUNC_NAMES = sorted(n for n in dir(tnp) if isinstance(getattr(np, n, None), np.ufunc))
# gufuncs (core dimensions: matmul, vecdot, matvec, vecmat) have no .outer in NumPy and
# need matrices; the elementwise tests below leave them out
GUFUNCS = {n for n in UFUNC_NAMES if getattr(np, n).signature}
F32 = np.array([0.25, 0.5, 0.75], np.float32)
I8 = np.array([3, 100, 7], np.int8)
INTEGER_ONLY = ("bitwise", "left", "right", "invert", "gcd", "lcm")


def _inputs(name, x=None):
    """Operands NumPy's loops take: ints for the integer-only ufuncs, ldexp's exponent an
    int, a matrix for the gufuncs that need one."""
    nin = getattr(np, name).nin
    x = (I8 if name.startswith(INTEGER_ONLY) else F32) if x is None else x
    if name == "ldexp":
        return (x, I8[:1])
    if name == "matmul":
        return (x[:, None], x[None])
    if name == "matvec":
        return (x[:, None] * x[None], x)
    if name == "vecmat":
        return (x, x[:, None] * x[None])
    return (x,) + (x[None],) * (nin - 1)


def _same(got, want):
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        g = np.asarray(g)
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(g.astype(float), np.asarray(w).astype(float), rtol=1e-6,
                                   equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", [n for n in UFUNC_NAMES if n not in GUFUNCS])
def test_every_ufunc_name_computes_in_numpys_loop_for_dtype(name):
    """NumPy's loop for dtype= (float32 -> float64, int8 -> int16/float32/bool), or NumPy's
    refusal as a TypeError, eagerly and jitted on both backends."""
    ufunc = getattr(np, name)
    cases = 0
    extra = [(I8, np.uint8)] if name == "bitwise_count" else []   # its one output dtype
    for x, dt in [(F32, np.float64), (I8, np.int16), (I8, np.float32), (I8, np.bool_)] + extra:
        xs = (x,) * ufunc.nin if name != "ldexp" else (x, I8)
        f = lambda *a: getattr(tnp, name)(*a, dtype=dt)    # noqa: E731
        try:
            want = ufunc(*xs, dtype=dt)
        except TypeError:
            with pytest.raises(TypeError, match="NumPy has no loop"):
                f(*xs)
            continue
        cases += 1
        _same(f(*xs), want)
        for b in BACKENDS:
            _same(tracer.jit(f, backend=b)(*xs), want)
    assert cases or name == "frexp"     # (NumPy takes no dtype= for frexp's two outputs)


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_every_ufunc_name_takes_the_keywords_at_their_defaults(name):
    import inspect
    xs = _inputs(name)
    keywords = dict(out=None, where=True, casting="same_kind", order="K", dtype=None,
                    subok=True)
    _same(getattr(tnp, name)(*xs, **keywords), getattr(tnp, name)(*xs))
    params = inspect.signature(getattr(tnp, name)).parameters
    assert [p for p in keywords if p not in params] == []


def test_ufunc_dtype_examples_and_numpys_own_functions_on_traced_values():
    a = np.array([100, 100, -7], np.int8)
    want = np.add(a, a, dtype=np.int16)                 # [200, 200, -14]: no wrap in int8
    agreement.agree(lambda a: tnp.add(a, a, dtype=np.int16), want, a)
    agreement.agree(lambda a: np.add(a, a, dtype=np.int16), want, a, eager=False)
    agreement.agree(lambda x: np.sin(x, dtype=np.float64), np.sin(F32, dtype=np.float64), F32,
                    eager=False)
    agreement.agree(lambda x: tnp.add(x, 1.0, dtype=np.float64), np.add(F32, 1.0,
                                                                          dtype=np.float64), F32)
    agreement.agree(lambda x: tnp.less(x, 0.5, dtype=bool), F32 < 0.5, F32)
    agreement.agree(lambda x, y: tnp.matmul(x, y, dtype=np.float64),
                    np.matmul(F32, F32, dtype=np.float64), F32, F32)
    q, r = np.divmod(np.array([7, -7]), 2, dtype=np.float32)
    for b in BACKENDS:
        got = tracer.jit(lambda x: tnp.divmod(x, 2, dtype=np.float32), backend=b)(
            np.array([7, -7]))
        _same(got, (q, r))
    # 0-d and empty inputs
    agreement.agree(lambda x: tnp.exp(x, dtype=np.float64), np.exp(F32[0], dtype=np.float64),
                    F32[0])
    agreement.agree(lambda x: tnp.exp(x, dtype=np.float64), np.zeros(0), F32[:0])


def test_ufunc_dtype_differentiates_and_batches():
    def loss(x):
        return tnp.sum(tnp.multiply(x, tnp.sin(x, dtype=np.float64), dtype=np.float64))
    want = (np.sin(F32) + F32 * np.cos(F32)).astype(np.float32)
    for f in [tracer.grad(loss)] + [tracer.jit(tracer.grad(loss), backend=b) for b in BACKENDS]:
        got = f(F32)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    tracer.check_grads(lambda x: tnp.exp(x, dtype=np.float32), (F32.astype(np.float64),),
                       order=2, atol=1e-3, rtol=1e-3)
    xs = np.stack([F32, 2 * F32])
    got = tracer.vmap(lambda x: tnp.hypot(x, 1.0, dtype=np.float64))(xs)
    _same(got, np.hypot(xs, 1.0, dtype=np.float64))


def test_ufunc_keyword_misuse_is_refused_as_numpy_and_jax_do():
    with pytest.raises(TypeError, match="add: NumPy has no loop for inputs.*casting='same_kind'"):
        tnp.add(F32, F32, dtype=np.int32)
    _same(tnp.add(F32, F32, dtype=np.int32, casting="unsafe"),
          np.add(F32, F32, dtype=np.int32, casting="unsafe"))
    with pytest.raises(TypeError, match="add: NumPy has no loop for inputs.*casting='no'"):
        tnp.add(I8, F32, casting="no")
    with pytest.raises(TypeError, match="sin: out= is not supported"):
        tnp.sin(F32, out=np.empty(3, np.float32))
    with pytest.raises(ValueError, match=r"sin: where= leaves .* tnp.where\(mask"):
        tnp.sin(F32, where=F32 > 0.3)
    with pytest.raises(ValueError, match="sin: casting must be one of"):
        tnp.sin(F32, casting="sometimes")
    with pytest.raises(ValueError, match="sin: order must be one of"):
        tnp.sin(F32, order="X")


# ---- casting= on concatenate and the stacks --------------------------------------------------

@pytest.mark.parametrize("fn", ["concatenate", "stack", "vstack", "hstack"])
def test_concatenate_family_checks_casting_as_numpy(fn):
    a, b = np.ones(2, np.float32), np.arange(2, dtype=np.int32)
    f = getattr(tnp, fn)
    for kw in [dict(dtype=np.float64, casting="safe"), dict(dtype=np.int32, casting="unsafe"),
               dict(casting="same_kind")]:
        agreement.agree(lambda a, b: f([a, b], **kw), getattr(np, fn)([a, b], **kw), a, b)
    for kw in [dict(dtype=np.int32), dict(casting="no"), dict(casting="equiv")]:
        with pytest.raises(TypeError, match="Cannot cast array data from dtype..float32"):
            getattr(np, fn)([a, b], **kw)   # NumPy refuses these too
        with pytest.raises(TypeError, match="concatenate: cannot cast float32 to"):
            f([a, b], **kw)
    with pytest.raises(ValueError, match="concatenate: casting must be one of"):
        f([a, b], casting="x")


# ---- out= on NumPy's other functions that take it ---------------------------------------------

@pytest.mark.parametrize("name, args", [("fix", (F32 - 0.5,)), ("isposinf", (F32,)),
                                        ("isneginf", (F32,)), ("clip", (F32, 0.3, 0.6)),
                                        ("dot", (F32, F32)), ("outer", (F32, F32))])
def test_out_none_is_accepted_and_an_out_array_refused(name, args):
    want = getattr(np, name)(*args)
    agreement.agree(lambda *a: getattr(tnp, name)(*a, out=None), want, *args)
    with pytest.raises(TypeError, match=f"{name}: out= is not supported"):
        getattr(tnp, name)(*args, out=np.empty_like(want))


# ---- creation: order, device, like, subok; array's copy and ndmin ---------------------------

@pytest.mark.parametrize("make", [
    lambda m: m.zeros((2, 3), None, "F", device="cpu", like=None),
    lambda m: m.ones(3, order="C", device=None),
    lambda m: m.full(3, 2.5, None, "F", device="cpu"),
    lambda m: m.empty(3, order="F", device="cpu") * 0,
    lambda m: m.zeros_like(F32, order="F", subok=False, device="cpu"),
    lambda m: m.ones_like(F32, None, "A", True, (2, 2), device="cpu"),
    lambda m: m.full_like(F32, 7, order="C", subok=True, device="cpu"),
    lambda m: m.empty_like(F32, device="cpu") * 0,
    lambda m: m.arange(1, 7, 2, device="cpu", like=None),
    lambda m: m.linspace(0, 1, 5, device="cpu"),
    lambda m: m.eye(3, 4, 1, order="F", device="cpu", like=None),
    lambda m: m.identity(2, like=None),
    lambda m: m.asarray([1, 2], order="F", device="cpu", like=None),
    lambda m: m.array([1.5, 2], order="F", subok=False, like=None),
    lambda m: m.broadcast_to(F32, (2, 3), subok=False),
    lambda m: m.broadcast_arrays(F32, F32[:, None], subok=False)[1],
], ids=["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
        "arange", "linspace", "eye", "identity", "asarray", "array", "broadcast_to",
        "broadcast_arrays"])
def test_creation_takes_numpys_placement_keywords(make):
    want = make(np)
    for b in BACKENDS:      # built inside a jitted function: a constant of the same value
        got = tracer.jit(lambda x: x * 0 + make(tnp), backend=b)(np.zeros((), want.dtype))
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    got = make(tnp)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_zeros_ones_empty_with_dtype_none_are_float64_as_numpy():
    for name in ("zeros", "ones", "empty"):
        assert getattr(tnp, name)(2, None).dtype == getattr(np, name)(2, None).dtype == np.float64
        assert tracer.jit(lambda: getattr(tnp, name)(2, dtype=None))().dtype == np.float64


def test_array_copies_and_takes_ndmin_and_ndmax_as_numpy():
    got = tnp.array(F32)
    assert not np.shares_memory(got, F32)
    assert tnp.array(F32, copy=False) is F32
    for nd in (0, 1, 3):
        want = np.array(F32[0], ndmin=nd)
        agreement.agree(lambda x: tnp.array(x, ndmin=nd), want, F32[0])
    agreement.agree(lambda x: tnp.array(x, ndmin=3), np.array(F32, ndmin=3), F32)
    np.testing.assert_array_equal(tnp.array([[1, 2]], ndmax=2), np.array([[1, 2]], ndmax=2))
    g = tracer.grad(lambda x: tnp.sum(tnp.array(x, ndmin=2) ** 2))(F32)
    np.testing.assert_allclose(g, 2 * F32)
    with pytest.raises(ValueError, match="array: the value has 2 dimensions, more than ndmax=1"):
        tnp.array([[1]], ndmax=1)


def test_placement_keyword_misuse_is_a_value_error_as_numpys():
    for f, what in [(lambda: np.zeros(2, device="gpu"), "Device not understood"),
                    (lambda: np.zeros(2, order="K"), "only 'C' or 'F' order"),
                    (lambda: np.zeros_like(F32, order="X"), "order must be one of")]:
        with pytest.raises(ValueError, match=what):
            f()
    import jax
    np.testing.assert_array_equal(tnp.zeros(2, device=jax.devices()[0]), np.zeros(2))
    with pytest.raises(ValueError, match="zeros: device must be None or 'cpu'"):
        tnp.zeros(2, device="gpu")
    with pytest.raises(ValueError, match=r"zeros: order must be one of \('C', 'F'\), got 'K'"):
        tnp.zeros(2, order="K")
    with pytest.raises(ValueError, match="zeros_like: order must be one of"):
        tnp.zeros_like(F32, order="X")
    with pytest.raises(ValueError, match="asarray: order must be one of"):
        tnp.asarray(F32, order="X")


def test_unique_takes_sorted():
    x = np.array([3, 1, 3, 2])
    np.testing.assert_array_equal(tnp.unique(x, sorted=True), np.unique(x, sorted=True))
    np.testing.assert_array_equal(np.sort(tnp.unique(x, sorted=False)), [1, 2, 3])


def test_aliases_stay_one_function_and_modules_export_the_wrapper():
    from tracer.numpy import elementwise, products
    assert tnp.abs is tnp.absolute and tnp.divide is tnp.true_divide
    assert tnp.mod is tnp.remainder and tnp.invert is tnp.bitwise_not
    assert elementwise.add is tnp.add and products.matmul is tnp.matmul


@pytest.mark.parametrize("args, dtype", [((1, 2), np.int8), ((True, 2.5), np.float32),
                                         ((np.int8(100), 100), np.int16), (([1, 2], 1.5), bool)])
def test_ufunc_dtype_with_python_scalars_as_numpy(args, dtype):
    name = "less" if dtype is bool else "add"
    want = getattr(np, name)(*args, dtype=dtype)
    _same(getattr(tnp, name)(*args, dtype=dtype), want)
    for b in BACKENDS:      # jit arguments that are Python scalars stay weak, as NumPy's
        _same(tracer.jit(lambda *a: getattr(tnp, name)(*a, dtype=dtype), backend=b)(*args),
              want)
    with pytest.raises(TypeError, match=r"add: NumPy has no loop for inputs \['float', 'int'\]"):
        tnp.add(3.0, 2, dtype=np.int16)


# ---- ufunc.outer ---------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", [n for n in UFUNC_NAMES
                                  if getattr(np, n).nin == 2 and n not in GUFUNCS])
def test_binary_ufunc_outer_as_numpy(name):
    x = I8 if name.startswith(INTEGER_ONLY) else F32
    a, b = x, (I8 if name == "ldexp" else x)[:2].reshape(2, 1)
    want = getattr(np, name).outer(a, b)
    _same(getattr(tnp, name).outer(a, b), want)
    for bk in BACKENDS:     # NumPy's own ufunc.outer on traced values too
        _same(tracer.jit(lambda a, b: getattr(np, name).outer(a, b), backend=bk)(a, b), want)


def test_ufunc_outer_differentiates_batches_and_takes_0d_and_empty():
    a = F32.astype(np.float64)
    tracer.check_grads(lambda a, b: tnp.multiply.outer(a, b), (a, a[:2]), order=2)
    got = tracer.vmap(tnp.subtract.outer)(np.stack([F32, 2 * F32]), F32[None].repeat(2, 0))
    _same(got, np.stack([np.subtract.outer(F32, F32), np.subtract.outer(2 * F32, F32)]))
    _same(tnp.add.outer(2.0, F32), np.add.outer(2.0, F32))
    _same(tnp.add.outer(F32[:0], F32), np.add.outer(F32[:0], F32))
    _same(tnp.add.outer(I8, I8, dtype=np.int16), np.add.outer(I8, I8, dtype=np.int16))


# ---- ufunc.reduce and ufunc.accumulate -------------------------------------------------------

M = np.array([[1., 3, 2], [5, 0, 4]], np.float32)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_and",
                                  "logical_or"])
@pytest.mark.parametrize("method, axes", [("reduce", (0, 1, None)), ("accumulate", (0, 1))])
def test_ufunc_reduce_and_accumulate_as_numpy(name, method, axes):
    x = M > 1 if name.startswith("logical") else M
    for axis in axes:
        want = getattr(getattr(np, name), method)(x, axis=axis)
        agreement.agree(lambda x: getattr(getattr(tnp, name), method)(x, axis=axis), want, x)
        agreement.agree(lambda x: getattr(getattr(np, name), method)(x, axis=axis), want, x,
                        eager=False)
    want = getattr(getattr(np, name), method)(x)        # the first axis by default
    agreement.agree(lambda x: getattr(getattr(np, name), method)(x), want, x, eager=False)


def test_ufunc_reduce_keywords_gradients_and_vmap():
    want = np.add.reduce(M, keepdims=True, initial=1.0, dtype=np.float64)
    agreement.agree(lambda x: tnp.add.reduce(x, 0, np.float64, keepdims=False, initial=1.0)[None],
                    want, M)
    agreement.agree(lambda x: tnp.add.accumulate(x, 1, np.float64),
                    np.add.accumulate(M, 1, np.float64), M)
    g = tracer.grad(lambda x: tnp.sum(tnp.maximum.accumulate(x, axis=1)))(M)
    np.testing.assert_array_equal(g, [[1, 2, 0], [3, 0, 0]])
    tracer.check_grads(lambda x: tnp.multiply.accumulate(x, axis=1), (M.astype(np.float64),),
                       order=2)
    got = tracer.vmap(lambda x: np.maximum.accumulate(x))(M)
    np.testing.assert_array_equal(got, np.maximum.accumulate(M, axis=1))
    with pytest.raises(TypeError, match="numpy.subtract.reduce has no tracer.numpy counterpart"):
        tracer.jit(lambda x: np.subtract.reduce(x))(M)

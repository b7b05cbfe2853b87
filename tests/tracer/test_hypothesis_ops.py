"""Random compositions of elementwise, broadcasting, reduction and shape ops on random
shapes and dtypes: eager tracer.numpy matches NumPy (values and dtypes), jit(numpy) is
bitwise equal to eager, the traced graph's output types match the results, and the same
programs compiled by the llvm backend, and batched by vmap on both backends, match
NumPy's values and dtypes."""
import warnings

import numpy as np
from hypothesis import assume, example, given, settings, strategies as st

import tracer
import tracer.numpy as tnp

DTYPES = [np.dtype(d) for d in ("float32", "float64", "int32", "int64", "bool")]


def _float(dt):
    return dt.kind == "f"


def _reduce_params(nonempty):
    """Params (axis, keepdims) of a reduction: axis None, an int or a tuple (negatives
    included); None (skip the step) when `nonempty` and it would reduce an empty axis."""
    def params(rng, shapes, dtypes):
        shape = shapes[0]
        ndim, keep = len(shape), bool(rng.integers(2))
        if ndim == 0 or rng.integers(3) == 0:
            return None if nonempty and 0 in shape else (None, keep)
        axes = rng.permutation(ndim)[:rng.integers(1, ndim + 1)]
        if nonempty and any(shape[a] == 0 for a in axes):
            return None
        axes = [int(a) - ndim if rng.integers(2) else int(a) for a in axes]
        return (axes[0] if len(axes) == 1 and rng.integers(2) else tuple(axes)), keep
    return params


# (name, arity, ok(dtypes, shapes), fn(m, params, *xs), params(draw, shapes, dtypes))
OPS = [
    ("negative", 1, lambda d, s: d[0].kind != "b", lambda m, p, x: m.negative(x), None),
    ("abs", 1, lambda d, s: True, lambda m, p, x: m.abs(x), None),
    ("tanh", 1, lambda d, s: _float(d[0]), lambda m, p, x: m.tanh(x), None),
    ("exp", 1, lambda d, s: _float(d[0]), lambda m, p, x: m.exp(m.minimum(x, 5)), None),
    ("sqrt", 1, lambda d, s: _float(d[0]), lambda m, p, x: m.sqrt(m.abs(x)), None),
    ("scalar", 1, lambda d, s: d[0].kind != "b",
     lambda m, p, x: m.add(m.multiply(x, p[0]), p[1]),
     lambda rng, s, d: ([2, -1, 0.5, 3.0][rng.integers(4)], [1, 2.5][rng.integers(2)])),
    ("add", 2, lambda d, s: True, lambda m, p, x, y: m.add(x, y), None),
    ("multiply", 2, lambda d, s: True, lambda m, p, x, y: m.multiply(x, y), None),
    ("subtract", 2, lambda d, s: "b" not in (d[0].kind, d[1].kind),
     lambda m, p, x, y: m.subtract(x, y), None),
    ("maximum", 2, lambda d, s: True, lambda m, p, x, y: m.maximum(x, y), None),
    ("divide", 2, lambda d, s: _float(d[0]) and _float(d[1]),
     lambda m, p, x, y: m.divide(x, m.add(m.abs(y), 1)), None),
    ("where", 2, lambda d, s: True, lambda m, p, x, y: m.where(m.greater(x, y), x, y), None),
    ("less", 2, lambda d, s: True, lambda m, p, x, y: m.less(x, y), None),
    ("sum", 1, lambda d, s: True, lambda m, p, x: m.sum(x, axis=p[0], keepdims=p[1]),
     _reduce_params(False)),
    ("mean", 1, lambda d, s: 0 not in s[0], lambda m, p, x: m.mean(x, axis=p[0], keepdims=p[1]),
     _reduce_params(False)),
    ("max", 1, lambda d, s: True, lambda m, p, x: m.max(x, axis=p[0], keepdims=p[1]),
     _reduce_params(True)),
    ("reshape", 1, lambda d, s: True, lambda m, p, x: m.reshape(x, (-1,)), None),
    ("transpose", 1, lambda d, s: True, lambda m, p, x: m.transpose(x), None),
    ("expand_dims", 1, lambda d, s: True, lambda m, p, x: m.expand_dims(x, 0), None),
    ("squeeze", 1, lambda d, s: True, lambda m, p, x: m.squeeze(x), None),
    ("reverse", 1, lambda d, s: len(s[0]) > 0, lambda m, p, x: x[::-1], None),
    ("broadcast_to", 1, lambda d, s: True,
     lambda m, p, x: m.broadcast_to(x, (2,) + np.shape(x)), None),
    ("astype", 1, lambda d, s: True, lambda m, p, x: m.asarray(x).astype(p[0]),
     lambda rng, s, d: (DTYPES[rng.integers(len(DTYPES))],)),
    ("concatenate", 2, lambda d, s: len(s[0]) > 0 and s[0][1:] == s[1][1:] and len(s[1]) > 0,
     lambda m, p, x, y: m.concatenate([x, y], axis=0), None),
]


def _broadcastable(s1, s2):
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


@st.composite
def programs(draw):
    """(inputs, steps): steps are (op index, operand indices, params); each step's result
    joins the pool. Input shapes broadcast against a common base shape; ops and operands
    are picked uniformly by a drawn seed; shapes and dtypes are tracked on NumPy."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    base = draw(st.lists(st.integers(0, 3), max_size=3))
    pool = []
    for _ in range(draw(st.integers(1, 3))):
        shape = tuple(d if draw(st.booleans()) else 1 for d in base)
        shape = shape[draw(st.integers(0, len(shape))):]
        dt = draw(st.sampled_from(DTYPES))
        x = rng.integers(-3, 4, shape) if dt.kind != "f" else rng.standard_normal(shape) * 2
        pool.append(x > 0 if dt.kind == "b" else x.astype(dt))
    inputs, steps, target = list(pool), [], draw(st.integers(1, 6))
    for _ in range(8 * target):        # ops that do not fit the picked operands are skipped
        if len(steps) == target:
            break
        i = int(rng.integers(len(OPS)))
        name, arity, ok, fn, params = OPS[i]
        args = tuple(int(a) for a in rng.integers(len(pool), size=arity))
        shapes = [pool[a].shape for a in args]
        dtypes = [pool[a].dtype for a in args]
        if not ok(dtypes, shapes) or arity == 2 and name != "concatenate" and not \
                _broadcastable(*shapes):
            continue
        p = params(rng, shapes, dtypes) if params else ()
        if p is None:
            continue
        with np.errstate(all="ignore"):
            pool.append(np.asarray(fn(np, p, *[pool[a] for a in args])))
        steps.append((i, args, p))
    assume(steps)
    return inputs, steps


def values(m, inputs, steps):
    """The inputs, then every step's result, computed by module `m`."""
    pool = list(inputs)
    for i, args, p in steps:
        pool.append(OPS[i][3](m, p, *[pool[a] for a in args]))
    return pool


def run(m, inputs, steps):
    pool = values(m, inputs, steps)
    return pool[-1], pool[-2]


def _fresh(x, rng):
    """An input of the same signature with other values (a jit cache hit)."""
    if x.dtype.kind == "b":
        return rng.random(x.shape) > 0.5
    return (rng.standard_normal(x.shape) * 3).astype(x.dtype)


@settings(max_examples=80, deadline=None)
@given(programs())
def test_random_compositions_eager_match_numpy_and_jit_matches_eager(program):
    inputs, steps = program
    jitted_fun = tracer.jit(lambda *xs: run(tnp, xs, steps), backend="numpy")
    graph = tracer.make_graph(lambda *xs: run(tnp, xs, steps))(*inputs)
    rng = np.random.default_rng(0)
    for args in (inputs, [_fresh(x, rng) for x in inputs]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with np.errstate(all="ignore"):
                want = run(np, args, steps)
            eager = run(tnp, args, steps)
            jitted = jitted_fun(*args)
        for w, e, j, aval in zip(want, eager, jitted, graph.out_avals):
            w, e, j = np.asarray(w), np.asarray(e), np.asarray(j)
            assert e.dtype == w.dtype and e.shape == w.shape
            tol = 1e-5 if w.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(e, w, rtol=tol, atol=tol)
            assert j.dtype == e.dtype and j.shape == e.shape
            np.testing.assert_array_equal(j, e)          # same kernels: bitwise equal
            assert (aval.shape, aval.dtype) == (e.shape, e.dtype)


def _close(got, want, where, single=False):
    """got matches NumPy's `want`: dtype and shape exactly, floats to a few ulps (the llvm
    backend's fused code may round differently from NumPy's one-op-at-a-time), float32's
    ulps if the program computed any float32 value (`single`): a float64 result of a
    float32 tanh differed from NumPy's by its one-ulp difference, 6.8e-8 relative."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, where
    tol = 0 if want.dtype.kind != "f" else 2e-5 if want.dtype == np.float32 or single \
        else 1e-9
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=where)


def _single(inputs, steps):
    """Whether the program computes any float32 value (inputs included), in NumPy."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return any(np.asarray(x).dtype == np.float32 for x in values(np, inputs, steps))


def _numpy(args, steps):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return run(np, args, steps)


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_compositions_compiled_by_llvm_match_numpy(program):
    inputs, steps = program
    f = tracer.jit(lambda *xs: run(tnp, xs, steps), backend="llvm")
    rng = np.random.default_rng(0)
    for args in (inputs, [_fresh(x, rng) for x in inputs]):       # a cache hit too
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = f(*args)
        single = _single(args, steps)
        for g, w in zip(got, _numpy(args, steps)):
            _close(g, w, str(steps), single)


# a float32 tanh (one ulp from NumPy's) divided in float64: float32's tolerance (_close)
TANH_DIVIDED = ([np.array([[[-1.3604238]]], np.float32), np.array([[[-1]]], np.int32),
                 np.array([[[-1, 2, 3]]], np.int32)],
                [(2, (0,), ()), (9, (2, 0), ()), (17, (2,), ()), (10, (3, 4), ())])


@settings(max_examples=25, deadline=None)
@given(programs())
@example(TANH_DIVIDED)
def test_random_compositions_under_vmap_match_numpy_per_example(program):
    inputs, steps = program
    single = _single(inputs, steps)
    rng = np.random.default_rng(1)
    batch = [np.stack([x] + [_fresh(x, rng) for _ in range(2)]) for x in inputs]
    want = [_numpy([b[k] for b in batch], steps) for k in range(3)]
    for backend in ("numpy", "llvm"):
        f = tracer.jit(tracer.vmap(lambda *xs: run(tnp, xs, steps)), backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = f(*batch)
        for o in range(2):
            _close(got[o], np.stack([np.asarray(w[o]) for w in want]), f"{backend} {steps}",
                   single)


@st.composite
def index_keys(draw):
    """(array, key): NumPy basic indices plus at most one integer-array (or list) index."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    key, dims, array_used = [], list(shape), False
    while dims and (any(k is Ellipsis for k in key) or draw(st.integers(0, 3))):
        d = dims[0]
        kind = draw(st.sampled_from(["slice", "int", "none", "ellipsis", "array"]))
        if kind == "none":
            key.append(None)
            continue
        if kind == "ellipsis" and not any(k is Ellipsis for k in key):
            key.append(Ellipsis)      # then index exactly the trailing dims
            dims = dims[draw(st.integers(0, len(dims))):]
            continue
        if kind == "int" and d:
            key.append(draw(st.integers(-d, d - 1)))
        elif kind == "array" and d and not array_used:
            array_used = True
            idx = draw(st.lists(st.integers(-d, d - 1), max_size=3))
            key.append(idx if draw(st.booleans()) else np.array(idx, np.int64).reshape(
                (1, -1) if draw(st.booleans()) else (-1,)))
        else:
            bound = st.none() | st.integers(-d - 2, d + 2)
            key.append(slice(draw(bound), draw(bound),
                             draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
        dims.pop(0)
    x = np.arange(int(np.prod(shape))).reshape(shape).astype(np.float32)
    return x, key[0] if len(key) == 1 and draw(st.booleans()) else tuple(key)


@settings(max_examples=100, deadline=None)
@given(index_keys())
def test_random_indexing_matches_numpy(case):
    x, key = case
    want = x[key]
    for got in (tnp.getitem(x, key), tracer.jit(lambda v: v[key], backend="numpy")(x)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)

"""tracer.lax's reductions, reduce with known and arbitrary computations, argmax/argmin,
cumulative ops and associative_scan: against NumPy eagerly and under jit on both backends,
gradients by finite differences, vmap."""
import functools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

R = np.random.default_rng(0)
X = R.normal(size=(3, 5, 4))
I = R.integers(-100, 100, (3, 5, 4)).astype(np.int32)


def _logcumsumexp(x, axis):
    return np.log(np.cumsum(np.exp(x), axis=axis))


def _rev(fn, axis):
    return lambda x: np.flip(fn(np.flip(x, axis)), axis)


CASES = {
    "sum": (lambda x, i: lax.reduce_sum(x, (0, 2)), lambda x, i: x.sum((0, 2))),
    "prod": (lambda x, i: lax.reduce_prod(x, (1,)), lambda x, i: x.prod(1)),
    "max": (lambda x, i: lax.reduce_max(x, (2, 0)), lambda x, i: x.max((2, 0))),
    "min": (lambda x, i: lax.reduce_min(i, (1,)), lambda x, i: i.min(1)),
    "int8 sum wraps": (lambda x, i: lax.reduce_sum(lax.convert_element_type(i, np.int8), (1,)),
                       lambda x, i: i.astype(np.int8).sum(1, dtype=np.int8)),
    "and": (lambda x, i: lax.reduce_and(i, (1,)), lambda x, i: np.bitwise_and.reduce(i, 1)),
    "or": (lambda x, i: lax.reduce_or(i, (0, 1)), lambda x, i: np.bitwise_or.reduce(
        i.reshape(-1, 4), 0)),
    "xor": (lambda x, i: lax.reduce_xor(i, (1,)), lambda x, i: np.bitwise_xor.reduce(i, 1)),
    "bool xor": (lambda x, i: lax.reduce_xor(i > 0, (1,)),
                 lambda x, i: np.logical_xor.reduce(i > 0, 1)),
    "bool and": (lambda x, i: lax.reduce_and(i > -90, (1,)), lambda x, i: (i > -90).all(1)),
    "reduce add init": (lambda x, i: lax.reduce(x, 1.0, lax.add, (1,)),
                        lambda x, i: x.sum(1) + 1.0),
    "reduce lambda": (lambda x, i: lax.reduce(x, 0.0, lambda a, b: a + b, (0, 2)),
                      lambda x, i: x.sum((0, 2))),
    "reduce lambda max": (lambda x, i: lax.reduce(x, -np.inf, lambda a, b: lax.max(a, b), (1,)),
                          lambda x, i: x.max(1)),
    "reduce pair": (lambda x, i: lax.reduce((x, i), (-np.inf, np.int32(0)), lambda a, b: (
        lax.max(a[0], b[0]), lax.add(a[1], b[1])), (1,))[1], lambda x, i: i.sum(1, dtype=i.dtype)),
    "argmax": (lambda x, i: lax.argmax(x, 1, np.int32), lambda x, i: x.argmax(1).astype(np.int32)),
    "argmin": (lambda x, i: lax.argmin(i, 2, np.int64), lambda x, i: i.argmin(2)),
    "cumsum": (lambda x, i: lax.cumsum(x, 1), lambda x, i: np.cumsum(x, 1)),
    "cumsum rev": (lambda x, i: lax.cumsum(x, 2, reverse=True),
                   lambda x, i: _rev(functools.partial(np.cumsum, axis=2), 2)(x)),
    "cumprod": (lambda x, i: lax.cumprod(x, 0), lambda x, i: np.cumprod(x, 0)),
    "cummax": (lambda x, i: lax.cummax(x, 1), lambda x, i: np.maximum.accumulate(x, 1)),
    "cummin rev": (lambda x, i: lax.cummin(i, 1, reverse=True),
                   lambda x, i: _rev(functools.partial(np.minimum.accumulate, axis=1), 1)(i)),
    "cumlogsumexp": (lambda x, i: lax.cumlogsumexp(x, 1),
                     lambda x, i: _logcumsumexp(x, 1)),
    "associative_scan pair": (lambda x, i: lax.associative_scan(
        lambda a, b: (a[0] + b[0], a[1] * b[1]), (x, x), axis=1)[1],
        lambda x, i: np.cumprod(x, 1)),
}


@pytest.mark.parametrize("mode", ["eager", "numpy", "llvm"])
def test_reductions_match_numpy(mode):
    names = sorted(CASES)

    def run(x, i):
        return [CASES[n][0](x, i) for n in names]
    got = run(X, I) if mode == "eager" else tracer.jit(run, backend=mode)(X, I)
    for name, g in zip(names, got):
        want = np.asarray(CASES[name][1](X, I))
        assert np.asarray(g).dtype == want.dtype, name
        np.testing.assert_allclose(g, want, rtol=1e-12, err_msg=name)


def test_reduce_checks_its_arguments():
    with pytest.raises(TypeError, match="lax.reduce"):
        lax.reduce(X, np.float32(0), lax.add, (0,))
    with pytest.raises(ValueError, match="lax.reduce_sum"):
        lax.reduce_sum(X, (3,))
    assert lax.reduce(X[:, :0], 2.0, lambda a, b: a * b, (1,)).tolist() == [[2.0] * 4] * 3


@pytest.mark.parametrize("fn", [lambda x: lax.reduce(x, 0.0, lambda a, b: a + b * b, (1,)),
                                lambda x: lax.cummax(x, 1) * lax.cumsum(x, 2, reverse=True),
                                lambda x: lax.cumlogsumexp(x, 0),
                                lambda x: lax.reduce_prod(x, (0, 2))])
def test_grads_match_finite_differences(fn):
    tracer.check_grads(fn, (X,), modes=("rev", "fwd"))


def test_vmap_matches_a_loop():
    def f(x):
        return (lax.cummax(x, 1), lax.reduce(x, 0.0, lambda a, b: a + b, (0,)),
                lax.argmax(x, 0, np.int32), lax.associative_scan(tnp.add, x, reverse=True))
    got = tracer.vmap(f)(X)
    for k, leaves in enumerate(zip(*[f(x) for x in X])):
        np.testing.assert_allclose(got[k], np.stack(leaves), rtol=1e-12)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_float_index_dtype_is_a_type_error_in_jax_words(name):
    with pytest.raises(TypeError, match="index_dtype must be an integer type"):
        getattr(lax, name)(np.arange(3.0), 0, np.float32)

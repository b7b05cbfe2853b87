"""tracer.random.exact: the samplers' transcendental functions give the same bits eagerly
and under jit on both backends, are accurate to a few float64 ulps (so float32 results are
correctly rounded almost always), keep the special values the samplers rely on, and carry
their analytic derivatives."""
import math

import numpy as np
import pytest

import tracer
from tracer.random import exact

RNG = np.random.default_rng(0)
CASES = {   # name: (function, reference, float64 arguments, largest error in float64 ulps)
    "exp": (exact.exp, np.exp, RNG.uniform(-750, 712, 4000), 1),
    "log": (exact.log, np.log, np.exp(RNG.uniform(-744, 709, 4000)), 1),
    "log1p": (exact.log1p, np.log1p, np.concatenate([RNG.uniform(-1, 0, 2000),
                                                     np.exp(RNG.uniform(-40, 50, 2000))]), 1),
    "erf": (exact.erf, np.vectorize(math.erf), RNG.uniform(-7, 7, 4000), 4),
    "lgamma": (exact.lgamma, np.vectorize(math.lgamma), RNG.uniform(0.5, 1e6, 4000), 8),
    "tanpi": (exact.tanpi, lambda x: np.tan(np.pi * x), RNG.uniform(-0.25, 0.25, 4000), 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_accuracy(name):
    fn, ref, x, ulps = CASES[name]
    ours, theirs = np.asarray(fn(x)), ref(x)
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    scale = np.maximum(np.abs(theirs[finite]), np.finfo(np.float64).tiny)
    assert np.max(np.abs(ours[finite] - theirs[finite]) / scale) <= ulps * 2.0 ** -52


FNS = {**{name: case[0] for name, case in CASES.items()}, "erfinv": exact.erfinv}
ARGS = {f"{name}_{dt.__name__}": (CASES[name][2] if name in CASES else
                                  RNG.uniform(-0.999, 0.999, 1000))[:1000].astype(dt)
        for name in FNS for dt in (np.float32, np.float64)}


def _all(args):
    return {key: FNS[key.rsplit("_", 1)[0]](x) for key, x in args.items()}


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_same_bits_on_every_backend(backend):
    eager, jitted = _all(ARGS), tracer.jit(_all, backend=backend)(ARGS)
    for key, value in eager.items():
        assert np.asarray(value).dtype == ARGS[key].dtype, key
        np.testing.assert_array_equal(jitted[key], value, err_msg=key)


def test_special_values():
    assert np.signbit(exact.log1p(np.float32(-0.0))) and exact.log1p(np.float32(0.0)) == 0
    assert exact.log(np.float64(0)) == -np.inf and exact.exp(np.float64(-800)) == 0
    assert exact.exp(np.float64(710)) == np.inf
    assert exact.log(np.float64(5e-324)) == np.log(5e-324)
    np.testing.assert_allclose(exact.power(np.array([1.0, 0.0, 2.0]),
                                           np.array([np.inf, 0.0, 3.0])), [1, 1, 8], rtol=1e-15)
    x = np.array([-2.5, -1e-40, 0, 1e-45, 1.0], np.float32)
    np.testing.assert_array_equal(exact.next_float(x, 1), np.nextafter(x, np.float32(np.inf)))
    np.testing.assert_array_equal(exact.next_float(x, -1), np.nextafter(x, -np.float32(np.inf)))


def test_derivatives():
    g = tracer.grad(lambda x: exact.exp(x) + exact.log(x) + exact.erf(x) + exact.log1p(x) +
                    exact.erfinv(x / 2) + exact.power(x, 3.0))(0.7)
    want = (math.exp(0.7) + 1 / 0.7 + 2 / math.sqrt(math.pi) * math.exp(-0.49) + 1 / 1.7 +
            0.5 * math.sqrt(math.pi) / 2 * math.exp(float(exact.erfinv(0.35)) ** 2) +
            3 * 0.49)
    np.testing.assert_allclose(g, want, rtol=1e-12)

"""tracer.exact_math: the same bits on every backend, within one ulp."""
import numpy as np
import pytest

import tracer
from tracer import exact_math


def _positive_floats(dt):
    """Powers of 2 and their neighbours over the normal range, and random mantissas."""
    info = np.finfo(dt)
    p2 = np.ldexp(np.ones(1, dt), np.arange(info.minexp, info.maxexp).astype(np.int32))
    mant = np.random.default_rng(0).uniform(0.5, 1, p2.size).astype(dt)
    x = np.concatenate([p2, np.nextafter(p2, dt(0)), np.nextafter(p2, dt(np.inf)), p2 * mant])
    return x[np.isfinite(x) & (x >= info.tiny)]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_log_and_log1p_are_exact_copies_everywhere_within_one_ulp(dt):
    """categorical's log and normal's log1p: the same bits on both backends, and within
    one ulp of a float64 (float80) reference; numpy's and the llvm backend's own logs
    differ in the last bit."""
    x = _positive_floats(dt)
    z = -np.concatenate([x[x < 1], np.linspace(0, 1, 2001, endpoint=False).astype(dt)])
    wide = np.float64 if dt == np.float32 else np.longdouble
    for fn, arg, ref in ((exact_math.log, x, np.log), (exact_math.log1p, z, np.log1p)):
        got = fn(arg)
        jitted = tracer.jit(fn, backend="llvm")(arg)
        np.testing.assert_array_equal(jitted.view(np.uint8), got.view(np.uint8))
        err = np.abs(got.astype(wide) - ref(arg.astype(wide))) / np.spacing(np.abs(got))
        assert err.max() < 1, (fn.__name__, float(err.max()))

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from spec import case_id, cases, make_input

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_eager_and_jit_numpy_match_numpy(case):
    spec, shapes, dt = case
    rng = np.random.default_rng(0)
    xs = [make_input(s, dt, spec.domain, rng) for s in shapes]
    with np.errstate(all="ignore"):
        want = spec.ref(np, *xs)
    got = spec.fn(tnp, *xs)
    jitted = tracer.jit(lambda *a: spec.fn(tnp, *a), backend="numpy")(*xs)
    for g in (got, jitted):
        g = np.asarray(g)
        assert g.dtype == np.asarray(want).dtype, (g.dtype, np.asarray(want).dtype)
        assert g.shape == np.shape(want)
        np.testing.assert_allclose(g, want, rtol=2e-6 if dt == np.float32 else 1e-12,
                                   atol=spec.atol)

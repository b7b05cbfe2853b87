"""tracer.scipy.signal's convolve, correlate and convolve2d against SciPy's values (each
mode, either input the larger, 1-D to 3-D), jitted on both backends, differentiated in
both inputs, vmapped, and their argument errors."""
import numpy as np
import pytest

import tracer
from tracer.scipy import signal

R = np.random.default_rng(11)
SHAPES = [((6,), (3,)), ((3,), (6,)), ((5, 4), (3, 2)), ((4, 3), (4, 1)), ((2, 2), (5, 4)),
          ((2, 3, 4), (2, 2, 2))]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_against_scipy(name, shapes, mode):
    sp = pytest.importorskip("scipy.signal")
    a, b = R.normal(size=shapes[0]), R.normal(size=shapes[1])
    got = getattr(signal, name)(a, b, mode)
    want = getattr(sp, name)(a, b, mode)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if len(shapes[0]) == 2:
        np.testing.assert_allclose(signal.convolve2d(a, b, mode), sp.convolve2d(a, b, mode),
                                   rtol=1e-12, atol=1e-12)


def test_jit_grads_and_vmap():
    a, b = R.normal(size=(5, 4)), R.normal(size=(3, 2))
    want = signal.convolve(a, b, "same")
    for backend in ("numpy", "llvm"):
        got = tracer.jit(lambda x, y: signal.convolve(x, y, "same"), backend=backend)(a, b)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for mode in ("full", "same", "valid"):
        tracer.check_grads(lambda x, y: signal.correlate(x, y, mode), (a, b), order=2)
    batch = tracer.vmap(signal.convolve, in_axes=(0, None))(np.stack([a, -a]), b)
    np.testing.assert_allclose(batch, np.stack([signal.convolve(a, b), -signal.convolve(a, b)]),
                               rtol=1e-12)
    assert signal.convolve(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("call,match", [
    (lambda: signal.convolve(np.ones(3), np.ones(2), "middle"), "mode must be one of"),
    (lambda: signal.convolve(np.ones(3), np.ones((2, 2))), "same number of dimensions"),
    (lambda: signal.convolve(np.ones((3, 1)), np.ones((1, 3))), "smaller than the other"),
    (lambda: signal.convolve(np.ones(3), np.ones(0)), "zero-size arrays"),
    (lambda: signal.correlate(np.ones(3), np.ones(2), method="fast"), "expected 'auto'"),
    (lambda: signal.convolve2d(np.ones(3), np.ones(2)), "only supports 2-dimensional")])
def test_argument_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="wrap")

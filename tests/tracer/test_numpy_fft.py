"""tracer.numpy.fft: fftshift, ifftshift, fftfreq and rfftfreq against numpy.fft eagerly
and jitted on both backends, differentiated (x of the shifts, d of the frequencies) and
vmapped; the complex transforms raise a DTypeError naming themselves, and the window
length n must be a static int."""
import agreement
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError, ArgumentValueError, DTypeError

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 5, 3))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("axes", [None, 0, 1, -1, (0, 2), [2, 1], (1, 1)])
def test_shifts_match_numpy_and_differentiate(name, axes):
    agreement.agree(lambda x: getattr(tnp.fft, name)(x, axes=axes),
                    getattr(np.fft, name)(X, axes=axes), X, rtol=0, atol=0,
                    backends=agreement.BACKENDS if axes == (0, 2) else ["numpy"])
    tracer.check_grads(lambda x: getattr(tnp.fft, name)(x, axes) * x, (X,), order=2)


def test_shifts_are_inverse_and_vmap_over_a_batch_axis():
    for n in (4, 5):
        v = np.arange(float(n))
        np.testing.assert_array_equal(tnp.fft.ifftshift(tnp.fft.fftshift(v)), v)
    got = tracer.vmap(lambda x: tnp.fft.fftshift(x, axes=0), in_axes=1)(X)
    np.testing.assert_array_equal(got, np.moveaxis(np.fft.fftshift(X, axes=0), 1, 0))
    np.testing.assert_array_equal(tnp.fft.fftshift(np.float32(2)), np.float32(2))   # JAX's


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_frequencies_match_numpy(name, n):
    for d in (1.0, 0.1, 3):
        agreement.agree(lambda: getattr(tnp.fft, name)(n, d), getattr(np.fft, name)(n, d),
                        rtol=1e-15, atol=0, backends=["numpy"] if n < 8 else agreement.BACKENDS)
    got = getattr(tnp.fft, name)(n, np.float32(0.5), dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, getattr(np.fft, name)(n, 0.5), rtol=1e-7)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_differentiate_in_d_jitted_and_vmapped(name):
    f = getattr(tnp.fft, name)
    k = getattr(np.fft, name)(6, 1.0) * 6       # the integer grid
    for b in agreement.BACKENDS:
        got = tracer.jit(tracer.jacrev(lambda d: f(6, d)), backend=b)(0.5)
        np.testing.assert_allclose(got, -k / (6 * 0.5 ** 2), rtol=1e-12)
    tracer.check_grads(lambda d: f(6, d), (0.5,), order=2)
    ds = np.array([0.5, 2.0])
    np.testing.assert_allclose(tracer.vmap(lambda d: f(6, d))(ds),
                               [getattr(np.fft, name)(6, d) for d in ds], rtol=1e-15)


@pytest.mark.parametrize("name", ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft",
                                  "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
                                  "ihfft"])
def test_complex_transforms_raise_naming_themselves(name):
    with pytest.raises(DTypeError, match=f"fft.{name} .*tracer has no complex dtypes "
                                         r"\(got float32\)"):
        getattr(tnp.fft, name)(np.ones(4, np.float32), axis=0)
    with pytest.raises(TypeError, match="no complex dtypes"):
        tracer.jit(getattr(tnp.fft, name))(np.ones(4))


@pytest.mark.parametrize("n,d,error,match", [
    (2.5, 1.0, ArgumentError, "n .* must be an int, got 2.5"),
    (0, 1.0, ArgumentValueError, "n .* must be >= 1"),
    (4, [1.0, 2.0], ArgumentError, "d .* must be a scalar"),
    (4, np.ones(2), ArgumentError, "d .* must be a scalar")])
def test_frequencies_refuse_bad_arguments(n, d, error, match):
    for f in (tnp.fft.fftfreq, tnp.fft.rfftfreq):
        with pytest.raises(error, match=f.__name__ + ": " + match):
            f(n, d)
    with pytest.raises(ArgumentError, match="fftfreq: n .* must be a static int"):
        tracer.jit(tnp.fft.fftfreq)(4)

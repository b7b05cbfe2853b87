"""`tracer.scipy.signal`: jax.scipy.signal's N-dimensional convolve and correlate and the
2-D convolve2d, as JAX composes them: the smaller input flipped and slid over the larger
by tracer.lax.conv_general_dilated, with the padding each mode asks for. method='fft'
gives the same values computed directly (an FFT needs complex numbers, which tracer has
none of); fftconvolve, the spectral functions and correlate2d are not here."""
from tracer import lax
from tracer import numpy as tnp
from tracer.scipy._util import promote_inexact

__all__ = ["convolve", "correlate", "convolve2d"]

_MODES = ("full", "same", "valid")


def _convolve_nd(name, in1, in2, mode):
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}")
    in1, in2 = promote_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                         f"shapes {in1.shape} and {in2.shape}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: zero-size arrays not supported in convolutions, got "
                         f"shapes {in1.shape} and {in2.shape}")
    pairs = list(zip(in1.shape, in2.shape))
    swap = not all(s1 >= s2 for s1, s2 in pairs)
    if swap and not all(s1 <= s2 for s1, s2 in pairs):
        raise ValueError(f"{name}: one input must be smaller than the other in every "
                         f"dimension, got shapes {in1.shape} and {in2.shape}")
    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    pads = {"valid": [(0, 0) for _ in in2.shape],
            "same": [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                     for s, so in zip(in2.shape, shape_o)],
            "full": [(s - 1, s - 1) for s in in2.shape]}[mode]
    out = lax.conv_general_dilated(in1[None, None], tnp.flip(in2)[None, None],
                                   (1,) * in1.ndim, pads)
    return out[0, 0]


def _method(name, method):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{name}: got method={method!r}; expected 'auto', 'fft', or 'direct'")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """scipy.signal.convolve of two arrays of one rank; 'same' is centred on in1."""
    _method("convolve", method)
    return _convolve_nd("convolve", in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """scipy.signal.correlate: convolve with in2 flipped along every axis."""
    _method("correlate", method)
    return _convolve_nd("correlate", in1, tnp.flip(tnp.asarray(in2)), mode)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """scipy.signal.convolve2d with boundary='fill' and fillvalue=0 (JAX's only ones)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if tnp.ndim(in1) != 2 or tnp.ndim(in2) != 2:
        raise ValueError(f"convolve2d() only supports 2-dimensional inputs, got shapes "
                         f"{tnp.shape(in1)} and {tnp.shape(in2)}")
    return _convolve_nd("convolve2d", in1, in2, mode)

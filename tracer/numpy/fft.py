"""numpy.fft's real-valued names, as jax.numpy.fft's: fftshift and ifftshift are rolls by
half of each axis, fftfreq and rfftfreq constant integer grids divided by n * d (d may be
traced, and is differentiated). The transforms take or return complex arrays, which tracer
has none of: they raise a DTypeError saying so, as lax.real and lax.complex do."""
import numpy as np

from ir import check_dtype
from ir.errors import ArgumentError, ArgumentValueError
from ir.types import dtype_kind
from tracer.numpy._base import (FLOAT64, complex_only, convert, float_dtype, normalize_axis,
                                shape, value)
from tracer.numpy.assembly import roll
from tracer.numpy.creation import _placed
from tracer.numpy.elementwise import divide, multiply
from tracer.numpy.signal import operator_index


def _shift(name, x, axes, sign):
    x = value(x, name)
    nd = len(shape(x))
    axes = tuple(range(nd)) if axes is None else axes
    listed = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    shifts = [sign * (shape(x)[normalize_axis(name, a, nd)] // 2) for a in listed]
    return roll(x, shifts, listed)


def fftshift(x, axes=None):
    """x rolled by n // 2 along each of `axes` (all by default): frequency 0 to the middle."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """fftshift's inverse: x rolled by -(n // 2) along each of `axes`."""
    return _shift("ifftshift", x, axes, -1)


def _frequencies(name, n, d, dtype, device, grid):
    """grid(n) (NumPy ints) / (d * n) in `dtype` (default float64), computed in its float
    type as JAX's; n is static (it fixes the shape), d a scalar, possibly traced."""
    _placed(name, device=device)
    n = operator_index(name, n, "n (the window length)")
    if n < 1:
        raise ArgumentValueError(f"{name}: n (the window length) must be >= 1 (the "
                                 f"frequencies are divided by it), got {n}")
    dt = FLOAT64 if dtype is None else check_dtype(dtype, name)
    ct = dt if dtype_kind(dt) == "f" else float_dtype(dt)
    if isinstance(d, (list, tuple)) or shape(value(d, name)) != ():
        raise ArgumentError(f"{name}: d (the sample spacing) must be a scalar, got {d!r}")
    spacing = convert(value(d, name), ct, name)
    return convert(divide(np.asarray(grid(n), ct), multiply(spacing, n)), dt, name)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of fft's n outputs for sample spacing d: [0, 1, ..., -1] / (d * n)."""
    return _frequencies("fftfreq", n, d, dtype, device,
                        lambda n: (np.arange(n) + n // 2) % n - n // 2)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The frequencies of rfft's n // 2 + 1 outputs: [0, 1, ..., n // 2] / (d * n)."""
    return _frequencies("rfftfreq", n, d, dtype, device, lambda n: np.arange(n // 2 + 1))


_COMPLEX = {**dict.fromkeys(["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2",
                             "rfftn", "ihfft"], "returns a complex array"),
            **dict.fromkeys(["irfft", "irfft2", "irfftn", "hfft"],
                            "takes a complex (Hermitian) spectrum")}
globals().update({name: complex_only(f"tracer.numpy.fft.{name}", doc, arrays=1)
                  for name, doc in _COMPLEX.items()})

__all__ = ["fftshift", "ifftshift", "fftfreq", "rfftfreq", *_COMPLEX]

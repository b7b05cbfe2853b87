"""jax.lax's convolution conveniences over tracer.lax.conv_general_dilated: conv,
conv_with_general_padding, conv_transpose and conv_dimension_numbers. `precision` is
checked and has no effect on CPU; preferred_element_type converts the operands first.
"""
from typing import NamedTuple

import numpy as np

from tracer import numpy as tnp
from tracer.lax.conv import conv_general_dilated
from tracer.lax.lax_dot import _check_precision


class ConvDimensionNumbers(NamedTuple):
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """jax.lax.conv_dimension_numbers: (batch, feature, spatial...) axis numbers of lhs and
    out and (out feature, in feature, spatial...) of rhs; spatial in the rhs spec's order."""
    nd = len(lhs_shape)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if dimension_numbers is None:
        spec = tuple(range(nd))
        return ConvDimensionNumbers(spec, spec, spec)
    lhs, rhs, out = dimension_numbers
    if not all(isinstance(s, str) for s in dimension_numbers):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs:
            spatial.sort(key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return ConvDimensionNumbers(perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC"))


def _operands(lhs, rhs, precision, preferred_element_type):
    _check_precision(precision)
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    if preferred_element_type is not None:
        lhs, rhs = (tnp.astype(v, np.dtype(preferred_element_type)) for v in (lhs, rhs))
    return lhs, rhs


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """jax.lax.conv: NCHW input, OIHW kernel, no dilation."""
    lhs, rhs = _operands(lhs, rhs, precision, preferred_element_type)
    return conv_general_dilated(lhs, rhs, window_strides, padding)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """jax.lax.conv_with_general_padding: NCHW / OIHW with dilations."""
    lhs, rhs = _operands(lhs, rhs, precision, preferred_element_type)
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation)


def _transpose_padding(k, s, padding):
    """The (lo, hi) padding that makes a dilated convolution the gradient-shaped transpose
    of a strided one, as JAX's conv_transpose."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"lax.conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) "
                         f"pairs, got {padding!r}")
    return lo, total - lo


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """jax.lax.conv_transpose: a convolution with lhs dilated by `strides` (channels-last
    layouts by default, as JAX)."""
    lhs, rhs = _operands(lhs, rhs, precision, preferred_element_type)
    nd = lhs.ndim
    if use_consistent_padding:
        raise NotImplementedError("lax.conv_transpose: use_consistent_padding=True is not "
                                  "supported; pass explicit (lo, hi) padding instead")
    if dimension_numbers is None:
        space = "HWD"[:nd - 2]
        dimension_numbers = ("N" + space + "C", space + "IO", "N" + space + "C")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    kernel = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    dil = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str):
        padding = [_transpose_padding((k - 1) * r + 1, s, padding)
                   for k, r, s in zip(kernel, dil, strides)]
    if transpose_kernel:                  # flip the spatial axes, swap in and out features
        rhs = tnp.flip(rhs, axis=tuple(dn.rhs_spec[2:]))
        rhs = tnp.swapaxes(rhs, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, strides, dil, dn)


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv",
           "conv_with_general_padding", "conv_transpose"]

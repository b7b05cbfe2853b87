"""jax.lax's convolution conveniences over tracer.lax.conv_general_dilated (conv,
conv_with_general_padding, conv_transpose) and its shape helpers (conv_dimension_numbers,
padtype_to_pads, the *_shape_tuple functions); precision and preferred_element_type are
conv_general_dilated's.
"""
from typing import NamedTuple

import numpy as np

from lowering.numpy_windows import window_out_shape
from tracer import numpy as tnp
from tracer.lax.conv import conv_general_dilated, padtype_pads
from tracer.lax.lax_dot import dot_general
from tracer.precision import DotAlgorithm, DotAlgorithmPreset, check_precision


class ConvDimensionNumbers(NamedTuple):
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """jax.lax.conv_dimension_numbers: (batch, feature, spatial...) axis numbers of lhs and
    out and (out feature, in feature, spatial...) of rhs; spatial in the rhs spec's order."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if dimension_numbers is None:
        spec = tuple(range(len(lhs_shape)))
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


def conv_general_permutations(dimension_numbers):
    """jax.lax.conv_general_permutations: the (lhs, rhs, out) axis orders of string specs."""
    return tuple(conv_dimension_numbers(None, None, dimension_numbers))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """jax.lax.padtype_to_pads: explicit (lo, hi) pairs for 'SAME', 'SAME_LOWER', 'VALID'."""
    return list(padtype_pads("lax.padtype_to_pads", padding, in_shape, window_shape,
                             window_strides))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """jax.lax.conv_shape_tuple: the output shape of an NCHW / OIHW convolution."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"lax.conv_shape_tuple: expected {len(lhs_shape) - 2} (lo, hi) pads, "
                        f"got {len(pads)}")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if min(padded, default=0) < 0:
        raise ValueError(f"lax.conv_shape_tuple: padding {pads} removes more than "
                         f"lhs_shape[2:]={tuple(lhs_shape[2:])}")
    ones = (1,) * len(pads)
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + window_out_shape(
        lhs_shape[2:], rhs_shape[2:], strides, pads, ones, ones)


def _in_layout(shape, perm):
    return tuple(shape[i] for i in perm)


def _out_layout(shape, perm):
    return tuple(shape[i] for i in np.argsort(perm))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(_in_layout(lhs_shape, lp), _in_layout(rhs_shape, rp), window_strides,
                           padding)
    return _out_layout(out, op)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lhs, rhs = _in_layout(lhs_shape, lp), _in_layout(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in zip(rhs[2:], window_strides)]
    space = tuple((n - 1) * s - k + 2 + lo + hi
                  for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, padding))
    return _out_layout((lhs[0], rhs[0]) + space, op)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    ones = (1,) * len(operand_shape)
    return window_out_shape(operand_shape, window_dimensions, window_strides, padding,
                            base_dilation or ones, window_dilation or ones)


def platform_dependent(*args, default=None, **per_platform):
    """jax.lax.platform_dependent: the "cpu" branch (else `default`) applied to args."""
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(f"lax.platform_dependent: no 'cpu' branch and no default "
                                  f"(got branches for {sorted(per_platform)})")
    return branch(*args)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """jax.lax.conv: NCHW input, OIHW kernel, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """jax.lax.conv_with_general_padding: NCHW / OIHW with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_padding(k, s, padding):
    """The (lo, hi) padding that makes a dilated convolution the gradient-shaped transpose
    of a strided one with the forward padding `padding` ('SAME', 'VALID' or a (lo, hi)
    pair), as JAX's conv_transpose."""
    if isinstance(padding, str) and padding.upper() == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif isinstance(padding, str) and padding.upper() == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    elif not isinstance(padding, str) and len(padding) == 2:
        lo, total = k - 1 - int(padding[0]), 2 * (k - 1) - int(padding[0]) - int(padding[1])
    else:
        raise ValueError(f"lax.conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) "
                         f"pairs, got {padding!r}")
    return lo, total - lo


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """jax.lax.conv_transpose: a convolution with lhs dilated by `strides` (channels-last
    layouts by default, as JAX)."""
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    nd = lhs.ndim
    if dimension_numbers is None:
        space = "HWD"[:nd - 2]
        dimension_numbers = ("N" + space + "C", space + "IO", "N" + space + "C")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    kernel = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    dil = (1,) * (nd - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        forward = [padding] * len(strides) if isinstance(padding, str) else padding
        padding = [_transpose_padding((k - 1) * r + 1, s, p)
                   for k, r, s, p in zip(kernel, dil, strides, forward)]
    if transpose_kernel:                  # flip the spatial axes, swap in and out features
        rhs = tnp.flip(rhs, axis=tuple(dn.rhs_spec[2:]))
        rhs = tnp.swapaxes(rhs, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * (nd - 2), padding, strides, dil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """jax.lax.conv_general_dilated_patches: each output position's receptive field,
    flattened into the output feature dimension (channel-major, then the filter's spatial
    positions in the rhs spec's order), as JAX: a grouped convolution (one group per
    channel) with an identity filter, so gradients and batching are the convolution's."""
    lhs = tnp.asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    if len(filter_shape) != lhs.ndim - 2:
        raise ValueError(f"lax.conv_general_dilated_patches: filter_shape {filter_shape} needs "
                         f"one size per spatial dimension of lhs {lhs.shape}")
    size, channels = int(np.prod(filter_shape)), lhs.shape[dn.lhs_spec[1]]
    eye = np.broadcast_to(np.eye(size, dtype=lhs.dtype), (channels, size, size))
    rhs = np.moveaxis(eye.reshape((channels * size, 1) + filter_shape), (0, 1), dn.rhs_spec[:2])
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                dn, feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """jax.lax.conv_general_dilated_local: a convolution with its own kernel at each output
    position (a locally connected layer), as JAX: every position's patch
    (conv_general_dilated_patches) contracted with that position's kernel by dot_general.
    rhs is laid out as rhs_spec, with `I` the patch (channel-major, then the window in the
    rhs spec's order) and the spatial axes the output's positions."""
    check_precision(precision)
    if isinstance(precision, (str, DotAlgorithm, DotAlgorithmPreset)):
        raise ValueError(f"lax.conv_general_dilated_local: unsupported precision {precision!r} "
                         f"(give None, a Precision or a pair of them)")
    pair = isinstance(precision, (tuple, list))
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=precision[0] if pair else precision)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    want = tuple(patches.shape[d] for d in dn.out_spec[2:])
    got = tuple(rhs.shape[d] for d in dn.rhs_spec[2:])
    if rhs.shape[dn.rhs_spec[1]] != patches.shape[dn.out_spec[1]] or got != want:
        raise ValueError(f"lax.conv_general_dilated_local: rhs of shape {rhs.shape} needs "
                         f"{patches.shape[dn.out_spec[1]]} input features (channels times "
                         f"filter_shape {tuple(filter_shape)}) and spatial sizes {want} (the "
                         f"output's), got {rhs.shape[dn.rhs_spec[1]]} and {got}")
    order = sorted(range(lhs.ndim - 2), key=lambda k: dn.out_spec[2 + k])
    batch = ([dn.out_spec[2 + k] for k in order], [dn.rhs_spec[2 + k] for k in order])
    out = dot_general(patches, rhs, (([dn.out_spec[1]], [dn.rhs_spec[1]]), batch),
                      precision=precision)
    return tnp.moveaxis(out, (-2, -1), dn.out_spec[:2])


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv", "conv_general_dilated_patches",
           "conv_general_dilated_local",
           "conv_with_general_padding", "conv_transpose", "conv_general_permutations",
           "padtype_to_pads", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple", "platform_dependent"]

"""Index grids and small constant arrays: tri and the *_indices functions (concrete:
their arguments fix the result), meshgrid, ix_, and the r_ / c_ index tricks."""
import functools

import numpy as np

from ir.errors import ArgumentError, ShapeError
from ir.types import dtype_kind
from tracer.core import as_array
from tracer.numpy._base import convert, dtype_of, result_dtype, shape, value
from tracer.numpy.shape_ops import atleast_1d, concatenate, ravel, reshape


def _concrete(fn):
    """A creation function of concrete arguments only (an array argument counts for its
    shape): NumPy's, as a fresh array, with NumPy's signature."""
    @functools.wraps(getattr(np, fn))
    def op(*args, **kwargs):
        out = getattr(np, fn)(*args, **kwargs)
        return tuple(as_array(o, fn) for o in out) if isinstance(out, tuple) else \
            as_array(out, fn)
    op.__doc__ = f"numpy.{fn} (its arguments fix the result's shape: concrete only)."
    return op


tri, tril_indices, triu_indices, diag_indices, indices = (
    _concrete(n) for n in ("tri", "tril_indices", "triu_indices", "diag_indices", "indices"))


def _matrix_shape(arr, fn):
    """The shape of a 2-d `arr` (traced or not: only its shape is read)."""
    s = shape(arr)
    if len(s) != 2:
        raise ShapeError(f"{fn}: input array must be 2-d, got shape {s}")
    return s


def tril_indices_from(arr, k=0):
    n, m = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
    n, m = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(n, k=k, m=m)


def diag_indices_from(arr):
    s = shape(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise ShapeError(f"diag_indices_from: input array must be at least 2-d with all "
                         f"dimensions of equal length, got shape {s}")
    return diag_indices(s[0], len(s))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ArgumentError("meshgrid: indexing must be 'xy' or 'ij'")
    xs = [ravel(value(x, "meshgrid")) for x in xi]
    nd = len(xs)
    outs = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            s[0], s[1] = s[1], s[0]
        outs.append(reshape(x, tuple(s)))
    if not sparse:
        from tracer.numpy.shape_ops import broadcast_arrays
        outs = list(broadcast_arrays(*outs))
    return tuple(outs)


def ix_(*args):
    outs = []
    for i, a in enumerate(args):
        x = value(a, "ix_")
        if len(shape(x)) != 1:
            raise ShapeError("ix_: cross index must be 1 dimensional")
        if dtype_kind(dtype_of(x)) == "b":
            x = as_array(np.nonzero(x)[0], "ix_")
        outs.append(reshape(x, (1,) * i + (-1,) + (1,) * (len(args) - i - 1)))
    return tuple(outs)


class _Concatenator:
    """r_ / c_: slices become aranges (or linspaces for a complex step), arrays join
    along the first (r_) or last (c_, 1-D entries as columns) axis."""

    def __init__(self, columns):
        self.columns = columns

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, str) for k in key):
            raise ArgumentError("r_/c_: string directives are not supported")
        parts = []
        for k in key:
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                if isinstance(step, complex):
                    x = as_array(np.linspace(start, k.stop, int(abs(step))), "r_")
                else:
                    x = as_array(np.arange(start, k.stop, step), "r_")
            else:
                x = atleast_1d(value(k, "r_"))
            parts.append(x)
        if self.columns:
            parts = [reshape(p, (-1, 1)) if len(shape(p)) == 1 else p for p in parts]
            dt = result_dtype("c_", *parts)
            return concatenate([convert(p, dt) for p in parts], axis=-1)
        dt = result_dtype("r_", *parts)
        return concatenate([convert(p, dt) for p in parts], axis=0)


r_, c_ = _Concatenator(False), _Concatenator(True)

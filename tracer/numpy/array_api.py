"""NumPy 2's array-API names that are not plain aliases (issue 26): code written for
NumPy 2 or jax.numpy (`concat`, `permute_dims`, `vecdot`, `bitwise_count`, ...) traces
as it is. Each is a composition of the functions NumPy 1 spelled otherwise, so it
differentiates and batches through them. The one-to-one aliases (acos, pow,
bitwise_invert, ...) are assigned in tracer/numpy/__init__.py."""
import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from ir.types import dtype_kind
from tracer.core import Tracer
from tracer.numpy._base import (broadcast_shapes, convert, dtype_of, no_out, normalize_axis,
                                result_dtype, shape, value)
from tracer.numpy.bitwise import bitwise_and, logical_and, right_shift
from tracer.numpy.elementwise import add, less, multiply, subtract, where
from tracer.numpy.indexing import getitem
from tracer.numpy.products import matmul
from tracer.numpy.reductions import any as any_, computation, sum
from tracer.numpy.shape_ops import (broadcast_to, concatenate, expand_dims, moveaxis,
                                    swapaxes, transpose)


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concat (the array API's name of concatenate)."""
    no_out("concat", out)
    return concatenate(arrays, axis=axis, dtype=dtype, casting=casting)


def permute_dims(a, /, axes=None):
    """numpy.permute_dims (the array API's name of transpose)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """The last two axes swapped (a stack of matrices transposed)."""
    x = value(x, "matrix_transpose")
    if len(shape(x)) < 2:
        raise ShapeError(f"matrix_transpose: input must be at least 2-dimensional, got shape "
                         f"{shape(x)}; use transpose (or reshape to a matrix) for fewer axes")
    return swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """The slices of x along `axis`, as a tuple (the inverse of stack)."""
    x = value(x, "unstack")
    if not shape(x):
        raise ShapeError("unstack: a 0-d array has no axis to unstack along; use "
                         "atleast_1d first")
    x = moveaxis(x, normalize_axis("unstack", axis, len(shape(x))), 0)
    return tuple(getitem(x, i) for i in range(shape(x)[0]))


def jax_product_keywords(op, operands, precision, preferred_element_type):
    """JAX's keywords of its products: `precision` checked (CPU products run at the
    operands' full precision), `preferred_element_type` the dtype the operands are
    converted to, so the product is computed and returned in it."""
    from tracer.precision import check_precision
    if precision is not None:
        check_precision(precision)
    ops = [value(x, op) for x in operands]
    if preferred_element_type is None:
        return ops
    return [convert(x, np.dtype(preferred_element_type), op) for x in ops]


def _gufunc_keywords(op, out, dtype):
    no_out(op, out)
    if dtype is not None:
        raise ArgumentError(f"{op}: dtype= is not supported; astype the operands first")


def vecdot(x1, x2, /, out=None, *, axis=-1, keepdims=False, dtype=None, precision=None,
           preferred_element_type=None):
    """Dot products along `axis` of x1 and x2 broadcast together (x1 conjugated: a no-op,
    as every dtype here is real); bools give the OR of ANDs, half floats multiply and sum
    in float32, as NumPy's dot loops."""
    _gufunc_keywords("vecdot", out, dtype)
    a, b = jax_product_keywords("vecdot", (x1, x2), precision, preferred_element_type)
    if not shape(a) or not shape(b):
        raise ShapeError(f"vecdot: operands must be at least 1-d, got shapes {shape(a)} and "
                         f"{shape(b)}")
    shp = broadcast_shapes("vecdot", shape(a), shape(b))
    ax = normalize_axis("vecdot", axis, len(shp))
    if shape(a)[ax - len(shp)] != shape(b)[ax - len(shp)]:
        raise ShapeError(f"vecdot: the contracted axis {axis} differs in size: {shape(a)} "
                         f"and {shape(b)} (it is not broadcast); give operands whose axis "
                         f"{axis} has one length")
    dt = result_dtype("vecdot", a, b)
    if dtype_kind(dt) == "b":
        return any_(logical_and(broadcast_to(a, shp), broadcast_to(b, shp)), axis=ax,
                    keepdims=keepdims)
    ct = computation(dt)
    a, b = broadcast_to(convert(a, ct), shp), broadcast_to(convert(b, ct), shp)
    return convert(sum(multiply(a, b), axis=ax, keepdims=keepdims), dt, "vecdot")


def matvec(x1, x2, /, out=None, *, dtype=None, precision=None, preferred_element_type=None):
    """Matrix (..., m, n) times vector (..., n) -> (..., m), batch axes broadcast."""
    _gufunc_keywords("matvec", out, dtype)
    a, v = jax_product_keywords("matvec", (x1, x2), precision, preferred_element_type)
    if len(shape(a)) < 2 or not shape(v):
        raise ShapeError(f"matvec: needs a matrix (..., m, n) and a vector (..., n), got "
                         f"shapes {shape(a)} and {shape(v)}")
    return getitem(matmul(a, expand_dims(v, -1)), (Ellipsis, 0))


def vecmat(x1, x2, /, out=None, *, dtype=None, precision=None, preferred_element_type=None):
    """Vector (..., n) times matrix (..., n, m) -> (..., m), batch axes broadcast."""
    _gufunc_keywords("vecmat", out, dtype)
    v, a = jax_product_keywords("vecmat", (x1, x2), precision, preferred_element_type)
    if len(shape(a)) < 2 or not shape(v):
        raise ShapeError(f"vecmat: needs a vector (..., n) and a matrix (..., n, m), got "
                         f"shapes {shape(v)} and {shape(a)}")
    return getitem(matmul(expand_dims(v, -2), a), (Ellipsis, 0, slice(None)))


def bitwise_count(x, /):
    """The number of 1 bits in |x| (uint8), as numpy.bitwise_count: a SWAR popcount in
    the unsigned integer of x's width, so it runs on every backend."""
    x = value(x, "bitwise_count")
    dt = np.dtype(dtype_of(x))
    if dtype_kind(dt) not in "biu":
        raise DTypeError(f"bitwise_count: needs integer or bool input, got {dt}; astype "
                         f"an integer dtype first")
    if dt.kind == "b":
        return convert(x, np.uint8, "bitwise_count")
    u = np.dtype(f"u{dt.itemsize}")
    v = convert(x, u, "bitwise_count")
    if dt.kind == "i":                  # |x|, the minimum wrapping to itself as NumPy's
        v = where(less(x, 0), subtract(np.zeros((), u), v), v)

    def c(k):
        return np.array(k, u)
    bits = 8 * dt.itemsize
    m1, m2, m4 = (int("".join([p] * (bits // len(p))), 2) for p in ("01", "0011", "00001111"))
    v = subtract(v, bitwise_and(right_shift(v, c(1)), c(m1)))
    v = add(bitwise_and(v, c(m2)), bitwise_and(right_shift(v, c(2)), c(m2)))
    v = bitwise_and(add(v, right_shift(v, c(4))), c(m4))
    s = 8
    while s < bits:                      # every byte's count summed into the low byte
        v = add(v, right_shift(v, c(s)))
        s *= 2
    return convert(bitwise_and(v, c(0xFF)), np.uint8, "bitwise_count")


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind):
    """numpy.isdtype, where bfloat16 is a real floating dtype (as in JAX)."""
    if isinstance(dtype, Tracer) or (not isinstance(dtype, (np.dtype, type)) or
                                     isinstance(dtype, type) and not issubclass(
                                         dtype, np.generic)):
        raise ArgumentError(f"isdtype: dtype must be a dtype (e.g. x.dtype), got "
                            f"{type(dtype).__name__}")
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ArgumentValueError(f"isdtype: kind {k!r} is not one of "
                                         f"{sorted(_KINDS)} (or a dtype, or a tuple)")
            if dtype_kind(dt) in _KINDS[k]:
                return True
        elif _as_dtype(k) == dt:
            return True
    return False


def _as_dtype(kind):
    """A kind that is a dtype, as one; an abstract type (np.floating) is none: NumPy's
    isdtype is False for it (issubdtype answers that question)."""
    if isinstance(kind, type) and issubclass(kind, np.generic) and kind.__subclasses__():
        return None
    try:
        return np.dtype(kind)
    except TypeError:
        raise ArgumentError(f"isdtype: kind must be a dtype, a kind name or a tuple of "
                            f"them, got {kind!r}") from None

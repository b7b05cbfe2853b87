"""NumPy's ufunc keywords (out, where, casting, order, dtype, subok) on the tracer.numpy
functions whose NumPy counterpart is a ufunc, so `tnp.add(x, y, dtype=np.int16)` and
`np.sin(t, dtype=np.float64)` on a traced value compute what NumPy computes.

`dtype=` picks NumPy's loop as NumPy does (`ufunc.resolve_dtypes` with that output
dtype and `casting`, Python scalars weak): the inputs are converted to the loop's dtypes,
the function runs, and its results are converted to the loop's output dtypes, so
`add(int8, int8, dtype=int16)` adds in int16 and gradients flow through the converts.
`casting` alone only checks the inputs against NumPy's loop (a UFuncTypeError in NumPy, a
DTypeError here). `order` and `subok` change no value here (results are new C-ordered
arrays); `out` must be None and `where` True, since results are new values (as in JAX,
which refuses both too). Binary ones also have numpy's `.outer`, and those with a
reduction here `.reduce` and `.accumulate` (as jax.numpy's ufuncs).
"""
import functools
import inspect
import sys

import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, DTypeError
from tracer.numpy._base import (check_casting, convert, dtype_of, is_weak, no_out,
                                normalize_axis, shape, value)

ORDERS = ("K", "A", "C", "F")
_PYTHON_TYPES = {"b": np.dtype(bool), "i": int, "u": int, "f": float}  # NumPy: bools strong
_KEYWORDS = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
             for name, default in (("out", None), ("where", True), ("casting", "same_kind"),
                                   ("order", "K"), ("dtype", None), ("subok", True))]


def _loop_dtypes(ufunc, name, xs, dtype, casting):
    """NumPy's loop for inputs xs (weak ones as their Python type) with output `dtype`."""
    ins = tuple(_PYTHON_TYPES[np.dtype(dtype_of(x)).kind] if is_weak(x) else dtype_of(x)
                for x in xs)
    options = {} if dtype is None else {
        "signature": (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout}
    try:
        return ufunc.resolve_dtypes(ins + (None,) * ufunc.nout, casting=casting, **options)
    except TypeError as e:      # numpy's UFuncTypeError, or no loop for the signature
        raise DTypeError(f"{name}: NumPy has no loop for inputs "
                         f"{[getattr(d, '__name__', str(d)) for d in ins]}"
                         f"{'' if dtype is None else f' with dtype={np.dtype(dtype)}'} "
                         f"under casting={casting!r} ({e}); pass another dtype, "
                         f"casting='unsafe', or astype the inputs first") from None


def with_ufunc_keywords(fn, ufunc):
    """fn (a tracer.numpy function computing `ufunc`) that also takes the ufunc keywords;
    fn's own keywords (matmul's precision=, ...) pass through."""
    name = fn.__name__

    @functools.wraps(fn)
    def op(*args, out=None, where=True, casting="same_kind", order="K", dtype=None,
           subok=True, **options):
        if out is None and where is True and dtype is None and casting == "same_kind" \
                and order == "K":
            return fn(*args, **options)
        no_out(name, out)
        if where is not True:
            raise ArgumentValueError(f"{name}: where= leaves NumPy's unselected elements "
                                     f"uninitialized without out=; write tnp.where(mask, "
                                     f"{name}(...), fallback) instead")
        check_casting(name, casting)
        if order not in ORDERS:
            raise ArgumentValueError(f"{name}: order must be one of {ORDERS}, got {order!r}")
        if len(args) != ufunc.nin:
            raise ArgumentError(f"{name} takes {ufunc.nin} array arguments, got {len(args)}")
        xs = [value(x, name) for x in args]
        loop = _loop_dtypes(ufunc, name, xs, dtype, casting)
        if dtype is None:
            return fn(*xs, **options)
        outs = fn(*[convert(x, dt, name) for x, dt in zip(xs, loop)], **options)
        if ufunc.nout == 1:
            return convert(outs, loop[-1], name)
        return tuple(convert(o, dt, name) for o, dt in zip(outs, loop[ufunc.nin:]))

    if ufunc.nin == 2 and ufunc.signature is None:    # NumPy's gufuncs have no .outer
        op.outer = _outer(op)
    if ufunc.__name__ in REDUCTIONS:
        op.reduce, op.accumulate = _reduce(ufunc.__name__), _accumulate(ufunc.__name__)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.name not in {k.name for k in _KEYWORDS}]    # fn's own out= is shadowed
    op.__signature__ = inspect.Signature(params + _KEYWORDS)
    return op


def _outer(op):
    def outer(A, B, /, **keywords):
        """op of every element of A with every element of B: shape A.shape + B.shape, as
        numpy's ufunc.outer (the ufunc keywords pass through)."""
        from tracer.numpy.shape_ops import reshape
        a, b = value(A, op.__name__), value(B, op.__name__)
        return op(reshape(a, shape(a) + (1,) * len(shape(b))), b, **keywords)
    outer.__qualname__ = f"{op.__name__}.outer"
    return outer


# ufunc -> its reduction (tracer.numpy's) and its scan (tracer.numpy's cumsum/cumprod,
# which promote as NumPy's accumulate does, else tracer.lax's; the logical ones on bools)
REDUCTIONS = {"add": ("sum", "cumsum"), "multiply": ("prod", "cumprod"),
              "maximum": ("max", "cummax"), "minimum": ("min", "cummin"),
              "logical_and": ("all", "cummin"), "logical_or": ("any", "cummax")}
SCANS = {}      # "cummax"/"cummin" -> tracer.lax's, which registers them (lax builds on
                # tracer.numpy, so tracer.numpy does not import it)


def _reduce(name):
    def reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
        """numpy's ufunc.reduce: the reduction over `axis` (the first by default)."""
        import tracer.numpy as tnp
        given = {k: v for k, v in (("dtype", dtype), ("initial", initial)) if v is not None}
        if where is not True:
            given["where"] = where
        return getattr(tnp, REDUCTIONS[name][0])(array, axis=axis, out=out, keepdims=keepdims,
                                                 **given)
    reduce.__qualname__ = f"{name}.reduce"
    return reduce


def _accumulate(name):
    def accumulate(array, axis=0, dtype=None, out=None):
        """numpy's ufunc.accumulate: the running op along `axis` (the first by default)."""
        import tracer.numpy as tnp
        op, scan = f"{name}.accumulate", REDUCTIONS[name][1]
        if hasattr(tnp, scan):
            return getattr(tnp, scan)(array, axis=axis, dtype=dtype, out=out)
        no_out(op, out)
        x = value(array, op)
        if not shape(x):
            raise ArgumentValueError(f"{op}: a 0-d array has no axis to accumulate along")
        dt = np.bool_ if name.startswith("logical") else dtype
        x = x if dt is None else convert(x, dt, op)
        return SCANS[scan](x, axis=normalize_axis(op, axis, len(shape(x))))
    accumulate.__qualname__ = f"{name}.accumulate"
    return accumulate


def wrap_ufuncs(namespace):
    """Give every function of `namespace` (a module's globals) named after a NumPy ufunc
    the ufunc keywords; the module defining it exports the same function (so
    tracer.numpy.products.matmul is tracer.numpy.matmul)."""
    wrapped = {}        # id(fn) -> its wrapper, so aliases (abs/absolute) stay one function
    for name, fn in list(namespace.items()):
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc) and callable(fn) and not name.startswith("_"):
            op = wrapped.get(id(fn)) or with_ufunc_keywords(fn, ufunc)
            namespace[name] = wrapped[id(fn)] = op
            home = sys.modules.get(fn.__module__)
            if home is not None and getattr(home, name, None) is fn:
                setattr(home, name, op)

"""Exporter table (kernel name, format) -> exporter, and the built-in ONNX exporters.

Exporting a graph to another runtime's format is one more per-kernel table, like the
kernel and gradient registries: a user kernel becomes exportable by registering an
exporter, and a built-in one can be overridden the same way. An ONNX exporter is
`fn(g, inputs, attrs)`: `inputs` are ONNX value names, `g` is the builder of
`tracer.export` (`g.op`, `g.const`, `g.cast`, `g.ints`, `g.in_avals`, `g.out_avals`), and
it returns the name of the node's output (a tuple of names for several outputs).

The built-ins target opset 18 (reduction axes are inputs) and follow the kernels' NumPy
semantics where ONNX or ONNX Runtime differ: NaN propagates through max/min reductions,
argmax/argmin return the first NaN as NumPy does, log1p/expm1 stay accurate near 0, and
bool operands go through int32 where ONNX Runtime has no bool kernel. Exporters never
read a concrete dimension: shapes come from attrs via `g.ints` or from `Shape` at run
time, which is what lets `to_onnx(..., dynamic_batch=True)` work. Control flow's
exporters (regions as ONNX subgraphs) are in registry/onnx_control.py, those of scans
and sorts in registry/exporters_scans.py, rounding, bitwise, shift and bitcast kernels
in registry/exporters_math.py, conv and pooling in registry/exporters_nn.py;
NOT_EXPORTABLE lists the built-in kernels that have none.
"""
import numpy as np

from ir.errors import ArgumentError, KernelNotFoundError
from ir.types import dtype_kind
from registry.tables import _did_you_mean
from registry.versioned import VersionedTable

BOOL, INT32, INT64 = np.dtype(bool), np.dtype(np.int32), np.dtype(np.int64)
INT64_MIN = np.iinfo(np.int64).min


def _check_exporter(kernel, format, fn):
    for what, v in (("kernel", kernel), ("format", format)):
        if not isinstance(v, str) or not v:
            raise ArgumentError(f"register_exporter: {what} must be a non-empty string, "
                                f"got {v!r}")
    if not callable(fn):
        raise ArgumentError(f"register_exporter({kernel!r}, {format!r}): fn must be "
                            f"callable, got {type(fn).__name__}")


# Built-in kernels with no ONNX exporter, and why: models using them fail to export with
# this reason (a user may still register an exporter of their own).
NOT_EXPORTABLE = dict.fromkeys(
    ("cholesky", "eigh", "qr", "slogdet", "solve", "svd"),
    "ONNX has no matrix decompositions or solves (opset 18 has only Det), and an unrolled "
    "elimination would not give LAPACK's results")


def _missing_exporter(kernel, format):
    have = [k for k, f in list(_exporters) if f == format]
    why = f" It cannot be exported: {NOT_EXPORTABLE[kernel]}." if format == "onnx" \
        and kernel in NOT_EXPORTABLE else ""
    return KernelNotFoundError(
        f"no {format!r} exporter for kernel {kernel!r}."
        f"{why or _did_you_mean(kernel, have)} "
        f"Register one with registry.register_exporter({kernel!r}, {format!r}, fn), "
        f"where fn(g, inputs, attrs) builds the nodes with "
        f"g.op(op_type, *inputs, **attributes) and returns the name of each output "
        f"(see tracer.export).")


# (kernel, format) -> exporter; register_exporter adds or replaces how a kernel is written
# in a format (e.g. "onnx")
EXPORTERS = VersionedTable(_missing_exporter, _check_exporter)
_exporters = EXPORTERS.entries
register_exporter, unregister_exporter = EXPORTERS.register, EXPORTERS.unregister
get_exporter, has_exporter, exporters = EXPORTERS.get, EXPORTERS.has, EXPORTERS.keys


# ---- built-in ONNX exporters ----------------------------------------------------------

def _bool_via_int32(export, data_from=0):
    """ONNX Runtime has no bool kernels for arithmetic, ordering, reductions, MatMul and
    Where: compute on the data inputs (those from `data_from` on, all of one dtype) in
    int32 and cast a bool result back (nonzero -> True, as NumPy's bool add, multiply,
    max, min and any are)."""
    def wrapped(g, inputs, attrs):
        if g.in_avals[-1].dtype != BOOL:
            return export(g, inputs, attrs)
        ins = list(inputs[:data_from]) + [g.cast(x, INT32) for x in inputs[data_from:]]
        out = export(g, ins, attrs)
        return g.cast(out, BOOL) if g.out_avals[0].dtype == BOOL else out
    return wrapped


def where(g, cond, a, b, dtype):
    """Where(cond, a, b) of `dtype`, keeping the sign of a zero: ONNX Runtime's float Where
    returns +0.0 for a -0.0 in its first slot (it merges the two selections by testing
    the first against 0), and its optimizer swaps the slots (Not + Where), so no slot is
    safe. Only zeros go wrong, and a zero's reciprocal is an infinity, which survives:
    zero results are made +0.0, then multiplied by -1 where Where(cond, 1 / a, 1 / b) is
    -inf."""
    out = g.op("Where", cond, a, b)
    if dtype_kind(dtype) != "f":
        return out
    zero, one = g.const(np.zeros((), dtype)), g.const(np.ones((), dtype))
    inverse = g.op("Where", cond, g.op("Reciprocal", a), g.op("Reciprocal", b))
    is_zero = g.op("Equal", out, zero)
    negative = g.op("And", is_zero, g.op("Less", inverse, zero))
    return g.op("Mul", g.op("Where", is_zero, zero, out),
                g.op("Where", negative, g.const(-np.ones((), dtype)), one))


def _select(g, inputs, attrs):
    return where(g, *inputs, g.in_avals[-1].dtype)


def _op(op_type):
    return lambda g, inputs, attrs: g.op(op_type, *inputs)


def _is_float(g):
    return dtype_kind(g.in_avals[0].dtype) == "f"


def _abs(g, inputs, attrs):
    return g.op("Identity", *inputs) if g.in_avals[0].dtype == BOOL else g.op("Abs", *inputs)


def _log1p(g, inputs, attrs):
    """Goldberg's log1p: log(u) * x / (u - 1) with u = 1 + x (x itself where u rounds
    to 1): accurate near 0, where log(1 + x) loses every digit."""
    (x,) = inputs
    one = g.const(np.ones((), g.in_avals[0].dtype))
    u = g.op("Add", x, one)
    d = g.op("Sub", u, one)
    r = g.op("Div", g.op("Mul", g.op("Log", u), x), d)
    r = g.op("Where", g.op("IsInf", u, detect_negative=0), u, r)
    return where(g, g.op("Equal", d, g.const(np.zeros((), g.in_avals[0].dtype))), x, r,
                 g.in_avals[0].dtype)


def _expm1(g, inputs, attrs):
    """Kahan's expm1: (u - 1) * x / log(u) with u = exp(x) (x itself where u rounds
    to 1): accurate near 0, where exp(x) - 1 loses every digit."""
    (x,) = inputs
    dt = g.in_avals[0].dtype
    u = g.op("Exp", x)
    d = g.op("Sub", u, g.const(np.ones((), dt)))
    r = g.op("Div", g.op("Mul", d, x), g.op("Log", u))
    r = g.op("Where", g.op("IsInf", u, detect_negative=0), u, r)
    r = g.op("Where", g.op("Equal", d, g.const(np.array(-1, dt))), d, r)
    return where(g, g.op("Equal", u, g.const(np.ones((), dt))), x, r, dt)


def _div(g, inputs, attrs):
    """True division of floats; NumPy's floor division of integers, where x // 0 == 0
    and INT_MIN // -1 wraps to INT_MIN (ONNX's Div truncates, and would trap on both):
    truncate by a safe divisor, step down where the remainder's sign differs from the
    divisor's, then patch the two special divisors."""
    x, y = inputs
    dt = g.in_avals[0].dtype
    if dtype_kind(dt) == "f":
        return g.op("Div", x, y)
    if dtype_kind(dt) == "u":       # truncation is floor; x // 0 == 0 (no uint64 Where)
        by_zero = g.op("Equal", y, g.const(np.array(0, dt)))
        q = g.op("Div", x, g.op("Add", y, g.cast(by_zero, dt)))
        return g.op("Mul", q, g.cast(g.op("Not", by_zero), dt))
    zero, one, minus_one = (g.const(np.array(v, dt)) for v in (0, 1, -1))
    by_zero, by_minus_one = g.op("Equal", y, zero), g.op("Equal", y, minus_one)
    safe = g.op("Where", g.op("Or", by_zero, by_minus_one), one, y)
    q = g.op("Div", x, safe)
    r = g.op("Sub", x, g.op("Mul", q, safe))
    down = g.op("And", g.op("Not", g.op("Equal", r, zero)),
                g.op("Xor", g.op("Less", r, zero), g.op("Less", safe, zero)))
    q = g.op("Sub", q, g.cast(down, dt))
    q = g.op("Where", by_minus_one, g.op("Sub", zero, x), q)
    return g.op("Where", by_zero, zero, q)


def _ne(g, inputs, attrs):
    return g.op("Not", g.op("Equal", *inputs))


def _reduce(op_type):
    def export(g, inputs, attrs):
        (x,) = inputs
        if not attrs["axes"]:
            return g.op("Identity", x)
        axes = g.const(np.array(attrs["axes"], np.int64))
        out = g.op(op_type, x, axes, keepdims=0)
        if op_type in ("ReduceMax", "ReduceMin") and _is_float(g):
            # ONNX Runtime skips NaN here; NumPy propagates it. A sum of the NaNs is NaN
            # exactly when the reduced slice holds one.
            zero = g.const(np.zeros((), g.in_avals[0].dtype))
            isnan = g.op("IsNaN", x)
            nans = g.op("ReduceSum", g.op("Where", isnan, x, zero), axes, keepdims=0)
            out = g.op("Where", g.op("IsNaN", nans), nans, out)
        return out
    return export


def _arg_reduce(op_type):
    def export(g, inputs, attrs):
        (x,) = inputs
        axis = attrs["axis"]
        out = g.op(op_type, x, axis=axis, keepdims=0, select_last_index=0)
        if _is_float(g):   # NumPy returns the first NaN; ONNX Runtime ignores NaNs
            isnan = g.cast(g.op("IsNaN", x), INT32)
            first = g.op("ArgMax", isnan, axis=axis, keepdims=0, select_last_index=0)
            any_nan = g.op("ReduceMax", isnan, g.const(np.array([axis], np.int64)),
                           keepdims=0)
            out = g.op("Where", g.cast(any_nan, BOOL), first, out)
        return out
    return export


def _convert(g, inputs, attrs):
    """Cast; float -> int truncates and saturates as the kernels do (NaN -> 0, beyond the
    range its minimum or maximum; ONNX leaves those casts undefined): the bounds are
    powers of two, exact in any float dtype, and out-of-range values are cast as 0 and
    the bound added in the (widened) output dtype, where ONNX Runtime has Mul and Add."""
    (x,), to, wide = inputs, np.dtype(attrs["dtype"]), g.out_avals[0].dtype
    if dtype_kind(g.in_avals[0].dtype) != "f" or to.kind not in "iu":
        return g.cast(x, to)
    info, fdt = np.iinfo(to), g.in_avals[0].dtype
    below = g.op("Less", x, g.const(np.array(info.min, fdt)))
    above = g.op("GreaterOrEqual", x, g.const(np.array(float(info.max) + 1, fdt)))
    out_of_range = g.op("Or", g.op("Or", below, above), g.op("IsNaN", x))
    inside = g.op("Where", out_of_range, g.const(np.zeros((), fdt)), x)
    out = g.cast(g.cast(inside, to), wide) if to != wide else g.cast(inside, to)
    for hit, bound in ((above, info.max), (below, info.min)):
        if bound:
            out = g.op("Add", out, g.op("Mul", g.cast(hit, wide), g.const(np.array(bound, wide))))
    return out


def _broadcast_to(g, inputs, attrs):
    return g.op("Expand", inputs[0], g.ints("shape"))


def _reshape(g, inputs, attrs):
    return g.op("Reshape", inputs[0], g.ints("shape"), allowzero=1)


def _transpose(g, inputs, attrs):
    if not attrs["perm"]:       # a 0-d operand; ONNX cannot spell an empty perm
        return g.op("Identity", *inputs)
    return g.op("Transpose", *inputs, perm=list(attrs["perm"]))


def _slice(g, inputs, attrs):
    n = len(attrs["start"])
    return g.op("Slice", inputs[0], g.const(np.array(attrs["start"], np.int64)),
                g.ints("limit"), g.const(np.arange(n, dtype=np.int64)),
                g.const(np.array(attrs["step"], np.int64)))


def reverse_axis0(g, x):
    return _rev(g, [x], {"axes": (0,)})


def _rev(g, inputs, attrs):
    axes = attrs["axes"]
    if not axes:
        return g.op("Identity", inputs[0])
    k = len(axes)
    return g.op("Slice", inputs[0], g.const(np.full(k, -1, np.int64)),
                g.const(np.full(k, INT64_MIN, np.int64)), g.const(np.array(axes, np.int64)),
                g.const(np.full(k, -1, np.int64)))


def dims(g, x, start, stop):
    """Dims [start, stop) of x's run-time shape (None if empty)."""
    return g.op("Shape", x, start=start, end=stop) if stop > start else None


def dilate(g, x, axis, gap, ndim, fill=None):
    """`gap` zeros (or the scalar constant named `fill`) between neighbours along `axis`:
    give each element a trailing block of them on a new axis, merge the two axes, and
    drop the last block."""
    pads = np.zeros(2 * (ndim + 1), np.int64)
    pads[ndim + 1 + axis + 1] = gap
    y = g.op("Pad", g.op("Unsqueeze", x, g.const(np.array([axis + 1], np.int64))),
             g.const(pads), *[fill] if fill else [])
    merged = g.op("Mul", dims(g, x, axis, axis + 1), g.const(np.array([gap + 1], np.int64)))
    parts = [dims(g, x, 0, axis), merged, dims(g, x, axis + 1, ndim)]
    y = g.op("Reshape", y, g.op("Concat", *[p for p in parts if p], axis=0), allowzero=1)
    return g.op("Slice", y, g.const(np.zeros(1, np.int64)),
                g.const(np.array([-gap], np.int64)), g.const(np.array([axis], np.int64)))


def _pad(g, inputs, attrs):
    (x,) = inputs
    lo, hi, interior = attrs["lo"], attrs["hi"], attrs["interior"]
    for axis, gap in enumerate(interior):
        if gap:
            x = dilate(g, x, axis, gap, len(interior))
    if any(lo) or any(hi):
        x = g.op("Pad", x, g.const(np.array(lo + hi, np.int64)))
    return x if x is not inputs[0] else g.op("Identity", x)


def _concatenate(g, inputs, attrs):
    return g.op("Concat", *inputs, axis=attrs["axis"])


def _take(g, inputs, attrs):
    # indices are already in [0, size): the ops wrap negative ones before the kernel
    return g.op("Gather", *inputs, axis=attrs["axis"])


def _scatter_add(g, inputs, attrs):
    """ScatterND(reduction="add") into zeros, with the scattered axis moved to the front
    (ScatterND indexes leading axes): out[..., idx[j], ...] += upd[..., j, ...]."""
    upd, idx = inputs
    axis, r, n = attrs["axis"], g.in_avals[1].ndim, g.in_avals[0].ndim
    if axis:
        upd = g.op("Transpose", upd, perm=list(range(axis, axis + r)) + list(range(axis))
                   + list(range(axis + r, n)))
    parts = [g.ints("size"), dims(g, inputs[0], 0, axis), dims(g, inputs[0], axis + r, n)]
    shape = g.op("Concat", *[p for p in parts if p], axis=0)
    zeros = g.op("Expand", g.const(np.zeros((), g.in_avals[0].dtype)), shape)
    index = g.op("Unsqueeze", g.cast(idx, INT64), g.const(np.array([-1], np.int64)))
    out = g.op("ScatterND", zeros, index, upd, reduction="add")
    if axis:
        out = g.op("Transpose", out, perm=list(range(1, axis + 1)) + [0]
                   + list(range(axis + 1, n - r + 1)))
    return out


_ONNX = {
    **{k: _op(v) for k, v in [("neg", "Neg"), ("exp", "Exp"), ("log", "Log"),
                              ("sqrt", "Sqrt"), ("sin", "Sin"), ("cos", "Cos"),
                              ("tanh", "Tanh"), ("erf", "Erf"), ("sign", "Sign"),
                              ("sub", "Sub"), ("pow", "Pow"),
                              ("eq", "Equal")]},
    **{k: _bool_via_int32(_op(v)) for k, v in [
        ("add", "Add"), ("mul", "Mul"), ("max", "Max"), ("min", "Min"), ("gt", "Greater"),
        ("ge", "GreaterOrEqual"), ("lt", "Less"), ("le", "LessOrEqual"),
        ("matmul", "MatMul")]},
    "select": _bool_via_int32(_select, data_from=1),
    **{k: _bool_via_int32(_reduce(v)) for k, v in [
        ("reduce_sum", "ReduceSum"), ("reduce_max", "ReduceMax"),
        ("reduce_min", "ReduceMin"), ("reduce_prod", "ReduceProd")]},
    "argmax": _bool_via_int32(_arg_reduce("ArgMax")),
    "argmin": _bool_via_int32(_arg_reduce("ArgMin")),
    "abs": _abs, "log1p": _log1p, "expm1": _expm1, "div": _div, "ne": _ne,
    "convert": _convert,
    "broadcast_to": _broadcast_to, "reshape": _reshape,
    "transpose": _transpose,
    "slice": _slice, "rev": _rev, "pad": _pad, "concatenate": _concatenate, "take": _take,
    "scatter_add": _scatter_add,
}

for _name, _fn in _ONNX.items():
    register_exporter(_name, "onnx", _fn)

import registry.onnx_control  # noqa: E402,F401  (control flow's exporters, which use the above)
import registry.exporters_scans  # noqa: E402,F401  (cumsum, cumprod, argsort)
import registry.exporters_math  # noqa: E402,F401  (rounding, fmod, bitwise, shifts, atan)
import registry.exporters_nn  # noqa: E402,F401  (conv, reduce_window, tile_scatter)

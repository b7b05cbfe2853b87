"""What every op does before `run_kernel`: accept values, promote dtypes (NumPy 2 / NEP
50, Python scalars weak), and make broadcasting explicit with `broadcast_to` nodes."""
import numpy as np

from ir import ShapedArray, aval_of, check_dtype, weak_dtype
from ir.errors import (ArgumentError, ArgumentValueError, DTypeError, IntegerOverflowError,
                       ShapeError, ShapeMismatchError)
from ir.types import BFLOAT16, dtype_kind
from tracer.config import numpy_rank_promotion as RANK_PROMOTION
from tracer.core import Tracer, _stack, as_array, innermost_trace, run_kernel

SCALARS = (bool, int, float)
FLOAT16, FLOAT32, FLOAT64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
INT8 = np.dtype(np.int8)      # where NumPy's integer loops start: bool op bool -> int8
_promoted = {}       # ((dtype, weak), ...) -> result dtype: promotion is pure and hot
_broadcasted = {}    # (shape, ...) -> broadcast shape


def is_weak(x):
    """Python scalars are weakly typed, and so are traced values standing for them (a
    Python-scalar jit argument, operator arithmetic on those: see tracer.methods)."""
    if isinstance(x, Tracer):
        return x.aval.weak_type
    return isinstance(x, SCALARS) and not isinstance(x, np.generic)


def value(x, op):
    """Normalize an op argument: tracers and Python scalars pass, the rest -> ndarray."""
    if type(x) is Tracer or (isinstance(x, SCALARS) and not isinstance(x, np.generic)):
        return x
    if isinstance(x, (list, tuple)) and has_tracer(x):
        return _stacked([value(e, op) for e in x], op)
    if jax_array(x) is not x:
        return value(jax_array(x), op)
    return as_array(x, op)


def jax_array(x):
    """x.__jax_array__() for an object of JAX's protocol of array-like classes, else x
    (JAX's own tracers set the attribute to None)."""
    to_array = getattr(x, "__jax_array__", None)
    return to_array() if callable(to_array) else x


def _stacked(xs, op):
    """A sequence holding traced values as one array (numpy.stack's result, built from
    kernels here, below the ops that normalize their arguments with `value`)."""
    if len({shape(x) for x in xs}) > 1:
        raise ShapeError(f"{op}: a sequence of arrays must have one shape to become an array, "
                         f"got {[shape(x) for x in xs]}")
    dt = result_dtype(op, *xs)
    rows = [run_kernel("reshape", [convert(x, dt, op)], {"shape": (1,) + shape(x)})
            for x in xs]
    return rows[0] if len(rows) == 1 else run_kernel("concatenate", rows, {"axis": 0})


def no_out(name, out):
    """NumPy's `out=` writes into an array; results here are new values (as in JAX)."""
    if out is not None:
        raise ArgumentError(f"{name}: out= is not supported (arrays here are immutable); "
                            f"use the returned value")


CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def check_casting(op, casting, dtypes=(), to=None):
    """NumPy's `casting=` rule: a known name, and every dtype castable to `to` under it."""
    if casting not in CASTINGS:
        raise ArgumentValueError(f"{op}: casting must be one of {CASTINGS}, got {casting!r}")
    for dt in dtypes:
        if not np.can_cast(dt, to, casting):
            raise DTypeError(f"{op}: cannot cast {np.dtype(dt)} to {np.dtype(to)} under "
                             f"casting={casting!r}; pass casting='unsafe' or astype first")


def has_tracer(seq):
    return any(isinstance(e, Tracer) or isinstance(e, (list, tuple)) and has_tracer(e)
               for e in seq)


def aval(x):
    if isinstance(x, Tracer):
        return x.aval
    if is_weak(x):
        return aval_of(x)
    return ShapedArray(np.shape(x), x.dtype)


def shape(x):
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else ()


def dtype_of(x):
    return aval(x).dtype


def result_dtype(op, *xs):
    """NumPy 2 promotion; weak operands take part as Python scalars (NEP 50); bfloat16
    promotes as in JAX."""
    return _promote(op, tuple([(dtype_of(x), is_weak(x)) for x in xs]))


def _promote(op, key):
    """The result dtype of operands of (dtype, weak) `key`, memoized."""
    dt = _promoted.get(key)
    if dt is None:
        strong = [d for d, weak in key if not weak]
        weak = [_WEAK_AS[dtype_kind(d)] for d, w in key if w]
        try:
            if BFLOAT16 in strong:
                strong = [_with_bfloat16(strong)]
            # weak operands (any kind) leave a bfloat16 result as it is, as in JAX
            dt = BFLOAT16 if strong == [BFLOAT16] else np.result_type(*strong, *weak)
        except TypeError as e:
            raise DTypeError(f"{op}: cannot promote dtypes "
                             f"{[str(d) for d, _ in key]}: {e}") from None
        dt = _promoted[key] = check_dtype(dt, op)
    return dt


_WEAK_AS = {"b": False, "i": 0, "u": 0, "f": 0.0}   # a weak operand stands for a Python scalar


def _with_bfloat16(strong):
    """JAX's rule (NumPy has none): bfloat16 with bools or ints is bfloat16, with float16
    float32, with a wider float that float."""
    others = [d for d in strong if d != BFLOAT16]
    if not others:
        return BFLOAT16
    dt = np.result_type(*others)
    return BFLOAT16 if dtype_kind(dt) in "biu" else FLOAT32 if dt == FLOAT16 else dt


def float_dtype(dt):
    """The float dtype NumPy's float functions (exp, sqrt, arctan2, ...) compute `dt` in:
    floats themselves, else the smallest float holding its values (float16 for bool and
    8-bit ints, float32 for 16-bit ints, float64 for wider ones)."""
    return dt if dtype_kind(dt) == "f" else _promote("float", ((dt, False), (FLOAT16, False)))


def convert(x, dtype, op="astype"):
    """`x` as `dtype`: a convert node for traced/array values, a 0-d array for scalars."""
    dtype = np.dtype(dtype)
    if isinstance(x, SCALARS) and not isinstance(x, np.generic):
        try:
            return np.asarray(x, dtype=dtype)
        except OverflowError:
            raise IntegerOverflowError(f"{op}: Python scalar {x} does not fit in {dtype}") \
                from None
    if dtype_of(x) == dtype:
        return x
    check_dtype(dtype, op)
    return run_kernel("convert", [x], {"dtype": dtype})


def fresh(out, x):
    """`out`, copied if it is the eager array `x` itself: an op that leaves its argument's
    value unchanged (x ** 1, concatenate of one array, diff with n=0) still returns a new
    array, since results never alias arguments (NumPy's diff(a, n=0) returns a)."""
    return np.array(out) if out is x and isinstance(x, np.ndarray) else out


def broadcast_shapes(op, *shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*[(1,) * (ndim - len(s)) + tuple(s) for s in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            listed = ', '.join(str(tuple(s)) for s in shapes)
            raise ShapeMismatchError(f"{op} got incompatible shapes for broadcasting: "
                                     f"{listed}. {op}: operand shapes {listed} cannot be "
                                     f"broadcast together (NumPy rules)")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_rank_promotion(op, shapes):
    """jax_numpy_rank_promotion 'warn' or 'raise': JAX's warning or error when operands
    of different ranks (scalars aside) are broadcast together. Callers test
    RANK_PROMOTION.active first, so the default ('allow') costs one attribute read."""
    mode = RANK_PROMOTION.value
    if mode == "allow" or len({len(s) for s in shapes if len(s)}) < 2:
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "warn":
        import warnings
        warnings.warn(f"Following NumPy automatic rank promotion for {op} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to "
                      f"'allow' to disable this warning; for more information, see "
                      f"https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                      stacklevel=4)
        return
    raise ArgumentValueError(f"Operands could not be broadcast together for {op} on shapes "
                             f"{listed} and with the config option "
                             f"jax_numpy_rank_promotion='raise'. For more information, see "
                             f"https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def broadcast(x, shp, trace=None):
    """x broadcast to `shp`. A constant `x` is broadcast inside `trace` (the trace of the
    op's other operands) so the graph gets a node, not a baked-in array."""
    shp = tuple(shp)
    if shape(x) == shp:
        return x
    if trace is not None and not isinstance(x, Tracer):
        return trace.emit("broadcast_to", [x], {"shape": shp})
    if not isinstance(x, Tracer):
        return np.broadcast_to(x, shp)
    return run_kernel("broadcast_to", [x], {"shape": shp})


def mark_weak(out, *inputs):
    """Make a traced result of only weak inputs weak. Only the operators on traced values
    do this (Python arithmetic on Python scalars gives a Python scalar); tracer.numpy
    functions give strong results, as NumPy's do, so jit agrees with eager NumPy."""
    if isinstance(out, Tracer):
        for x in inputs:        # (a loop: all() of a generator costs a call every op)
            if not is_weak(x):
                return out
        out._var.aval = ShapedArray(out.shape, out.dtype, weak_type=True)
    return out


def _describe(x):
    """(shape, dtype, weak) of a `value`-normalized op argument."""
    if type(x) is Tracer:
        a = x._var.aval
        return a.shape, a.dtype, a.weak_type
    if isinstance(x, SCALARS) and not isinstance(x, np.generic):
        return (), weak_dtype(x), True
    return x.shape, x.dtype, False


def elementwise(kernel, op, xs, dtype=None):
    """Promote to one dtype (or `dtype`), broadcast to one shape, run `kernel`."""
    values, descs, types, shapes = [], [], [], []
    for x in xs:            # (loops: a comprehension costs a call, and ops have 1-3 operands)
        x = value(x, op)
        desc = _describe(x)
        values.append(x)
        descs.append(desc)
        types.append(desc[1:])
        shapes.append(desc[0])
    dt = dtype or _promote(op, tuple(types))
    shapes = tuple(shapes)
    if RANK_PROMOTION.active:
        check_rank_promotion(op, shapes)
    shp = _broadcasted.get(shapes)
    if shp is None:
        if len(_broadcasted) > 4096:
            _broadcasted.clear()
        shp = _broadcasted[shapes] = broadcast_shapes(op, *shapes)
    trace = innermost_trace(values)
    args = []
    for x, desc in zip(values, descs):
        args.append(_operand(x, desc, dt, shp, trace, op))
    # `trace` is also the innermost trace of `args`: emitting there is what run_kernel does
    return run_kernel(kernel, args) if trace is None else trace.emit(kernel, args, {})


def _operand(x, desc, dt, shp, trace, op):
    """Operand `x` (of `_describe` `desc`) as `dt` of shape `shp`. One already so passes as
    it is (a Python scalar always becomes a 0-d array of `dt`); a constant scalar traced
    is broadcast by a node its trace shares among the ops that need the same one."""
    s, d, weak = desc
    if s == shp and d == dt and (not weak or type(x) is Tracer):
        return x
    x = convert(x, dt, op)
    if trace is not None and shp and not s and type(x) is not Tracer:
        return trace.broadcast_scalar(x, shp)
    return broadcast(x, shp, trace)


def held(v):
    """v with a zero derivative: a value fix-up (a remainder's sign, a special case's
    constant), not a function of the inputs, whatever transform differentiates it."""
    return run_kernel("stop_gradient", [v]) if isinstance(v, Tracer) else v


def normalize_axis(op, axis, ndim):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ArgumentError(f"{op}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{op}: axis {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % ndim


def normalize_axes(op, axis, ndim):
    """None -> all axes; int or tuple -> sorted non-negative tuple (duplicates rejected)."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(normalize_axis(op, a, ndim) for a in
                 (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: duplicate value in 'axis': {axis} (an axis may appear once)")
    return tuple(sorted(axes))


def current_trace():
    return _stack[-1] if _stack else None


def named(name, doc):
    """Decorator giving a function made by a factory its public name and docstring."""
    def deco(op):
        op.__name__ = op.__qualname__ = name
        op.__doc__ = doc
        return op
    return deco


def complex_only(qualname, doc, arrays=None):
    """A NumPy or JAX name whose operand or result is complex (`doc` says which, e.g.
    "returns a complex array"): tracer has no complex dtypes, so calling it raises a
    DTypeError naming it and the dtypes of its first `arrays` arguments (all if None)."""
    def op(*args, **kwargs):
        dts = ", ".join(str(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype)
                        for a in args[:arrays])
        raise DTypeError(f"{qualname} {doc}, and tracer has no complex dtypes (got {dts})")
    return named(qualname.rpartition(".")[2], f"{qualname}: not supported; it {doc}.")(op)

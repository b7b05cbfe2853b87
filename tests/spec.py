"""The op spec table: one row per op, shared by the eager, jit, gradient and LLVM tests.

A row names the op, how to call it (`fn`, taking tracer.numpy as `tnp`), the NumPy
reference (`ref`, taking numpy as `np`), the input shape cases, the dtypes, the input
domain, and whether it is differentiable. Generic tests iterate over `cases()`.
Every op of API.md's tracer.numpy / tracer.nn lists and every traced-value operator and
method has at least one row; shape cases cover 0-d, size-1, broadcast and empty arrays.
The eight small/unsigned/half dtypes are a sample: each row also runs on one of them
(`with_new_dtypes`), so each is exercised on many rows without multiplying the suite.
bfloat16's reference is NumPy in float32 rounded to bfloat16 (`OpSpec.ref` does it).
"""
import math
import operator
from dataclasses import dataclass, field

import numpy as np

import tracer
from ir import dtype_kind
from spec_dtypes import (BF16, F16, NEW_FLOATS, NEW_INTS, bf16_ref, computed_in,  # noqa: F401
                         tolerance, with_new_dtypes)

F32, F64, I32, I64, B = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                         np.dtype(np.int64), np.dtype(np.bool_))
FLOATS = (F32, F64)
NUMERIC = (F32, F64, I32, I64)
ALL = (F32, F64, I32, I64, B)
SOME = (F32, I32, B)                # for rows whose dtype handling is not the point

UNARY_SHAPES = [((),), ((1,),), ((3,),), ((2, 3),), ((0,),), ((2, 0),)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((1,), (4,)),
                 ((2, 3), ()), ((0,), (0,)), ((0, 3), (1, 3))]
REDUCE_SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),), ((1,),)]
NONEMPTY_UNARY = [s for s in UNARY_SHAPES if 0 not in s[0]]
INDEX_SHAPES = [((4, 3),), ((2, 5, 3),)]


@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: object                      # fn(tnp, *xs)
    ref: object                     # ref(np, *xs)
    shapes: list                    # list of tuples of input shapes
    dtypes: tuple = ALL
    domain: str = "real"            # real | positive | unit | nonzero | index
    grad: bool = True               # differentiable (checked in float64)
    atol: float = 0.0               # extra absolute tolerance for this op
    tags: tuple = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "ref", bf16_ref(self.ref))


def _u(name, domain="real", dtypes=FLOATS, grad=True, np_name=None):
    return OpSpec(name, lambda t, x: getattr(t, name)(x),
                  lambda n, x: getattr(n, np_name or name)(x), UNARY_SHAPES, dtypes, domain, grad)


def _b(name, dtypes=NUMERIC, domain="real", grad=True):
    return OpSpec(name, lambda t, x, y: getattr(t, name)(x, y),
                  lambda n, x, y: getattr(n, name)(x, y), BINARY_SHAPES, dtypes, domain, grad)


def _same(name, f, shapes, dtypes=ALL, domain="real", grad=True):
    """A row whose tracer call and NumPy reference are the same expression `f(mod, *xs)`
    (operators, methods and indexing on the values themselves)."""
    return OpSpec(name, f, f, shapes, dtypes, domain, grad)


def _call(name, args="", row=None, **kw):
    """A row calling `tnp.<name>(*xs, <args>)` against `np.<name>(*xs, <args>)`."""
    f = eval(f"lambda m, *xs: m.{name}(*xs{', ' + args if args else ''})")  # noqa: S307
    return OpSpec(row or f"{name}({args})", f, f, **kw)


nn = tracer.nn
_erf = np.vectorize(math.erf)


def _np_softmax(n, x, axis=-1):
    e = n.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_logsumexp(n, x, axis=None, keepdims=False):
    m = x.max(axis, keepdims=True)
    out = n.log(n.sum(n.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else n.squeeze(out, axis)


SPECS = [
    # ---- elementwise -------------------------------------------------------------------
    _u("negative", dtypes=NUMERIC), _u("exp"), _u("log", "positive"), _u("log1p", "positive"),
    _u("expm1"), _u("sqrt", "positive"), _u("sin"), _u("cos"), _u("tanh"),
    _u("abs", "nonzero", dtypes=ALL), _u("sign", dtypes=NUMERIC, grad=False),
    OpSpec("exp_int", lambda t, x: t.exp(x), lambda n, x: n.exp(x), UNARY_SHAPES, (I32, I64),
           grad=False),
    OpSpec("erf", lambda t, x: t.erf(x), lambda n, x: _erf(x).astype(x.dtype), NONEMPTY_UNARY,
           FLOATS),
    _b("add", ALL), _b("subtract"), _b("multiply", ALL), _b("divide", NUMERIC, "nonzero"),
    _b("power", FLOATS, "positive"), _b("maximum", ALL), _b("minimum", ALL),
    *[_b(c, ALL, grad=False) for c in ("greater", "greater_equal", "less", "less_equal",
                                      "equal", "not_equal")],
    OpSpec("where", lambda t, x, y: t.where(x > 0, x, y), lambda n, x, y: n.where(x > 0, x, y),
           BINARY_SHAPES, NUMERIC, "nonzero"),
    _same("where_scalars", lambda m, x: m.where(x > 0, 1, 2.5) + m.where(x > 0, x, 0),
          UNARY_SHAPES, NUMERIC, "nonzero"),
    _same("where_bool", lambda m, x, y: m.where(x, y, m.not_equal(y, True)), BINARY_SHAPES[:4],
          (B,), grad=False),
    OpSpec("clip", lambda t, x: t.clip(x, -0.5, 0.5), lambda n, x: n.clip(x, -0.5, 0.5),
           UNARY_SHAPES, FLOATS, "nonzero"),
    _same("clip_one_sided", lambda m, x: m.clip(x, None, 1) * m.clip(x, -1, None),
          UNARY_SHAPES, NUMERIC, "nonzero", grad=False),
    _same("clip_array_bounds", lambda m, x, y: m.clip(x, y, y + 1), BINARY_SHAPES, NUMERIC,
          "nonzero"),
    OpSpec("scalar_ops", lambda t, x: 2.0 * x - 1 + x / 3, lambda n, x: 2.0 * x - 1 + x / 3,
           UNARY_SHAPES, NUMERIC),
    _same("weak_scalars", lambda m, x: m.add(m.multiply(x, 2), m.subtract(3, x)) + True,
          UNARY_SHAPES, NUMERIC),
    _same("int_power", lambda m, x: m.power(x, 2) + m.power(x, 3) - m.power(x, 1),
          UNARY_SHAPES, NUMERIC),
    _same("scalar_power", lambda m, x: m.power(x, 0.5) + m.power(2.0, x), UNARY_SHAPES, FLOATS,
          "positive"),
    # ---- traced-value operators and methods (eagerly they are NumPy's own) ---------------
    *[_same(f"operator_{f.__name__}", (lambda f: lambda m, x, y: f(x, y))(f), BINARY_SHAPES,
            dtypes, domain, grad=False)
      for f, dtypes, domain in [(operator.add, SOME, "real"), (operator.sub, (F32, I32), "real"),
                                (operator.mul, SOME, "real"),
                                (operator.truediv, (F32, I32), "nonzero"),
                                (operator.pow, (F32,), "positive"), (operator.lt, SOME, "real"),
                                (operator.le, SOME, "real"), (operator.gt, SOME, "real"),
                                (operator.ge, SOME, "real"), (operator.eq, SOME, "real"),
                                (operator.ne, SOME, "real")]],
    _same("operator_reflected", lambda m, x: (2 - x) * (3 / x) + 2.0 ** x - (-x),
          UNARY_SHAPES, (F32, F64, I32), "nonzero"),
    _same("operator_matmul", lambda m, x, y: x @ y, [((2, 3), (3, 4)), ((3,), (3,)),
                                                     ((2, 2, 3), (3,))], (F32, I32), grad=False),
    _same("methods_reduce", lambda m, x: x.sum() + x.mean(axis=-1).max() + x.T.max(0).sum(),
          [((3,),), ((2, 3),), ((1, 2, 3),)], NUMERIC),
    _same("methods_shape", lambda m, x: x.reshape(-1).astype(np.float32) * x.ndim + x.shape[0],
          [((3,),), ((2, 3),), ((0, 2),)], ALL, grad=False),
    _same("methods_reshape_args", lambda m, x: x.reshape(x.shape[-1], -1).T,
          [((2, 3),), ((4, 1, 2),)], SOME, grad=False),
    # ---- reductions ----------------------------------------------------------------------
    *[OpSpec(f"{r}_axis{ax}_keep{k}", f, f, REDUCE_SHAPES, dt, "nonzero", g)
      for r, dt, g in [("sum", ALL, True), ("mean", NUMERIC, True), ("max", NUMERIC, True),
                       ("min", NUMERIC, True), ("prod", NUMERIC, True)]
      for ax, k in [(None, False), (-1, False), (0, True)]
      for f in [(lambda r, ax, k: lambda m, x: getattr(m, r)(x, axis=ax, keepdims=k))(r, ax, k)]],
    *[_call(r, "axis=(0, -1), keepdims=True", shapes=[((2, 3),), ((2, 3, 4),), ((1, 0),)],
            dtypes=dt, domain="nonzero")
      for r, dt in [("sum", ALL), ("mean", (F32, F64, I32)), ("prod", (F32, F64, I32))]],
    *[_call(r, "axis=(-1, 0)", shapes=[((2, 3),), ((2, 3, 4),)], dtypes=(F32, F64, I32, B),
            domain="nonzero", grad=r == "max") for r in ("max", "min")],
    _call("sum", "axis=()", shapes=UNARY_SHAPES, dtypes=(F32, I32, B), grad=False),
    _call("sum", "dtype=np.float64", shapes=REDUCE_SHAPES, dtypes=(F32, I32, B)),
    _call("sum", "axis=0, dtype=np.int32", shapes=REDUCE_SHAPES, dtypes=(I32, I64, B), grad=False),
    _call("mean", "dtype=np.float32", shapes=REDUCE_SHAPES, dtypes=(F64, I32, I64, B)),
    _call("mean", "axis=-1, dtype=np.float64", shapes=REDUCE_SHAPES, dtypes=(F32, I32)),
    _call("mean", "axis=0, dtype=np.int32", shapes=REDUCE_SHAPES, dtypes=(F64, I32, B),
          grad=False),
    _call("mean", "dtype=bool", shapes=REDUCE_SHAPES, dtypes=(F32, I32, B), grad=False),
    _call("mean", "axis=0", row="mean_empty", shapes=[((0,),), ((0, 3),)], dtypes=(F32, I32),
          grad=False),
    _call("prod", "axis=0", row="prod_empty", shapes=[((0,),), ((0, 3),)], dtypes=(F32, I32, B),
          grad=False),
    OpSpec("sum_empty", lambda t, x: t.sum(x, axis=0), lambda n, x: n.sum(x, axis=0),
           [((0,),), ((0, 3),)], ALL),
    *[OpSpec(f"{r}_axis{ax}", (lambda r, ax: lambda t, x: getattr(t, r)(x, axis=ax))(r, ax),
             (lambda r, ax: lambda n, x: getattr(n, r)(x, axis=ax))(r, ax),
             REDUCE_SHAPES, NUMERIC, grad=False)
      for r in ("argmax", "argmin") for ax in (None, -1)],
    *[_call(r, "axis=0, keepdims=True", shapes=REDUCE_SHAPES, dtypes=(F32, I32, B), grad=False)
      for r in ("argmax", "argmin")],
    _call("argmax", "keepdims=True", shapes=REDUCE_SHAPES + [((),)], dtypes=(F32,), grad=False),
    # ---- linear algebra ------------------------------------------------------------------
    OpSpec("matmul", lambda t, a, b: t.matmul(a, b), lambda n, a, b: n.matmul(a, b),
           [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)),
            ((2, 2, 3), (3, 4)), ((1, 3), (3, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))], NUMERIC),
    _call("matmul", row="matmul_batch_broadcast",
          shapes=[((1, 2, 3), (4, 3, 2)), ((2, 3), (4, 3, 2)), ((4, 2, 3), (3,)),
                  ((3,), (2, 3, 4)), ((2, 1, 2, 3), (5, 3, 1))], dtypes=(F32, F64, I32)),
    _call("matmul", row="matmul_bool", shapes=[((2, 3), (3, 4)), ((3,), (3,))], dtypes=(B,),
          grad=False),
    OpSpec("dot", lambda t, a, b: t.dot(a, b), lambda n, a, b: n.dot(a, b),
           [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (4, 3, 2))], NUMERIC),
    _call("dot", row="dot_more", shapes=[((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3,)),
                                         ((0, 3), (3, 2))], dtypes=(F32, I32)),
    _same("dot_scalar", lambda m, x: m.dot(x, 2) + m.dot(3.0, x), UNARY_SHAPES, SOME),
    # ---- shape ops -----------------------------------------------------------------------
    OpSpec("reshape", lambda t, x: t.reshape(x, (-1,)), lambda n, x: n.reshape(x, (-1,)),
           UNARY_SHAPES, ALL),
    _same("reshape_shapes", lambda m, x: m.reshape(x, x.shape[::-1] + (1,)) * 1,
          UNARY_SHAPES, SOME),
    _call("reshape", "(-1, 1, 3)", shapes=[((3,),), ((2, 3),), ((0, 3),)], dtypes=SOME),
    OpSpec("transpose", lambda t, x: t.transpose(x), lambda n, x: n.transpose(x),
           UNARY_SHAPES + [((2, 3, 4),)], ALL),
    _call("transpose", "(1, -1, 0)", shapes=[((2, 3, 4),), ((1, 0, 2),)], dtypes=SOME),
    _call("swapaxes", "0, -1", shapes=[((3,),), ((2, 3),), ((2, 3, 4),), ((0, 2),)],
          dtypes=SOME),
    OpSpec("broadcast_to", lambda t, x: t.broadcast_to(x, (2,) + x.shape),
           lambda n, x: n.broadcast_to(x, (2,) + x.shape), UNARY_SHAPES, ALL),
    _call("broadcast_to", "(2, 3)", shapes=[((),), ((1,),), ((3,),), ((2, 1),), ((1, 3),)],
          dtypes=SOME),
    OpSpec("expand_squeeze", lambda t, x: t.squeeze(t.expand_dims(x, 0), 0),
           lambda n, x: n.squeeze(n.expand_dims(x, 0), 0), UNARY_SHAPES, ALL),
    _call("expand_dims", "(0, -1)", shapes=UNARY_SHAPES, dtypes=SOME),
    _call("expand_dims", "-2", shapes=UNARY_SHAPES[1:], dtypes=SOME),
    _call("squeeze", "(0, -1)", shapes=[((1, 3, 1),), ((1, 1),), ((1, 0, 1),)], dtypes=SOME),
    _call("squeeze", shapes=[((),), ((1,),), ((1, 3, 1),), ((2, 0, 1),)], dtypes=SOME),
    OpSpec("concatenate", lambda t, x, y: t.concatenate([x, y], axis=0),
           lambda n, x, y: n.concatenate([x, y], axis=0),
           [((3,), (2,)), ((2, 3), (1, 3)), ((0, 3), (2, 3))], ALL),
    _same("concatenate_axes", lambda m, x, y: m.concatenate([x, y, x], axis=-1),
          [((3,), (2,)), ((3, 2), (3, 1)), ((2, 0), (2, 3))], SOME),
    _same("concatenate_flat", lambda m, x, y: m.concatenate((x, y), axis=None),
          [((2, 3), (4,)), ((1,), (0, 2))], SOME),
    OpSpec("stack", lambda t, x, y: t.stack([x, y], axis=-1),
           lambda n, x, y: n.stack([x, y], axis=-1),
           [((), ()), ((3,), (3,)), ((2, 3), (2, 3))], ALL),
    _same("stack_axes", lambda m, x, y: m.stack((x, y, x)) + m.stack([y, x, y], axis=1)[:, 0],
          [((2,), (2,)), ((2, 3), (2, 3)), ((0, 2), (0, 2))], SOME),
    # ---- indexing ------------------------------------------------------------------------
    OpSpec("take", lambda t, x: t.take(x, np.array([0, -1, 1, 0]), axis=0),
           lambda n, x: n.take(x, n.array([0, -1, 1, 0]), axis=0), [((3,),), ((2, 3),)], ALL),
    _call("take", "np.array([[2, -1], [0, 0]]), axis=-1", row="take_2d_index",
          shapes=[((3,),), ((2, 3),), ((0, 3),)], dtypes=SOME),
    _call("take", "[4, 0, -2]", row="take_flat", shapes=[((5,),), ((2, 3),)], dtypes=SOME),
    OpSpec("getitem_basic", lambda t, x: x[1:, ::2][None, ..., -1],
           lambda n, x: x[1:, ::2][None, ..., -1], [((3, 4),), ((2, 5, 3),)], ALL),
    OpSpec("getitem_reverse", lambda t, x: x[::-2], lambda n, x: x[::-2], [((5,),), ((4, 2),)],
           ALL),
    OpSpec("getitem_array", lambda t, x: x[:, np.array([2, 0])], lambda n, x: x[:, n.array([2, 0])],
           [((2, 3),), ((1, 3, 2),)], ALL),
    OpSpec("getitem_int", lambda t, x: x[1], lambda n, x: x[1], [((3,),), ((2, 3),)], ALL),
    *[_same(f"getitem{key}", eval(f"lambda m, x: x{key}"), shapes, SOME)   # noqa: S307
      for shapes, keys in [
          (INDEX_SHAPES, ["[-1, ::-1]", "[..., None, 1:-1]", "[::-3, None]", "[-10:10, 3:1]",
                          "[()]", "[1:2, ..., ::2]", "[[0, -1, 0]]", "[None, [1, 0], ..., 2]",
                          "[1, ..., [0, 1]]", "[::-1, ::2][..., -2]"]),
          (INDEX_SHAPES[1:], ["[1, :, [0, 2]]", "[:, 1, [[0], [-1]]]", "[1, None, :, [2]]"])]
      for key in keys],
    _same("getitem_empty", lambda m, x: x[1:1, ..., ::-1], [((3, 2),), ((0, 2),)], SOME,
          grad=False),
    # ---- creation and conversion ---------------------------------------------------------
    _same("zeros", lambda m, x: m.zeros(x.shape, x.dtype), UNARY_SHAPES, ALL, grad=False),
    _same("ones", lambda m, x: m.ones(x.shape, x.dtype), UNARY_SHAPES, ALL, grad=False),
    _same("zeros_ones_default_dtype", lambda m, x: m.zeros(x.shape) + m.ones(3),
          [((),), ((3,),), ((2, 3),)], (F32,), grad=False),
    _same("full", lambda m, x: m.full(x.shape, 2.5) * m.full((2,) + x.shape, 3, x.dtype),
          UNARY_SHAPES, SOME, grad=False),
    _same("full_traced_fill", lambda m, x: m.full((2,) + x.shape, x), UNARY_SHAPES, SOME),
    _same("zeros_like", lambda m, x: m.zeros_like(x), UNARY_SHAPES, ALL, grad=False),
    _same("ones_like", lambda m, x: m.ones_like(x), UNARY_SHAPES, ALL, grad=False),
    _same("like_dtype", lambda m, x: m.ones_like(x, dtype=np.float32) + m.zeros_like(x, int),
          UNARY_SHAPES, SOME, grad=False),
    _same("arange", lambda m, x: m.arange(x.size) * m.arange(1, 2 * x.size + 1, 2, dtype=x.dtype),
          UNARY_SHAPES, NUMERIC, grad=False),
    _same("arange_float", lambda m, x: m.arange(0.5, 2.0, 0.25)[:3] + m.arange(3.0) * x,
          [((),)], (F64,), grad=False),
    _same("asarray", lambda m, x: m.asarray(x), UNARY_SHAPES, ALL),
    _same("asarray_dtype", lambda m, x: m.asarray(x, dtype=np.float64), UNARY_SHAPES, SOME),
    _same("asarray_list", lambda m, x: m.asarray([[x, x], [x, x]]), UNARY_SHAPES, SOME),
    *[OpSpec(f"astype_{dt}", (lambda dt: lambda t, x: t.astype(x, dt))(dt),
             (lambda dt: lambda n, x: saturating_astype(x, dt))(dt), UNARY_SHAPES[:4], ALL,
             "nonzero",
             grad=dt in FLOATS) for dt in ALL + NEW_FLOATS + NEW_INTS],
    OpSpec("astype", lambda t, x: t.astype(x, np.float32) * 2,
           lambda n, x: x.astype(np.float32) * 2,
           UNARY_SHAPES, ALL, "nonzero"),
    # ---- tracer.nn -----------------------------------------------------------------------
    OpSpec("relu", lambda t, x: nn.relu(x), lambda n, x: n.maximum(x, 0),
           UNARY_SHAPES, FLOATS, "nonzero"),
    OpSpec("relu_int", lambda t, x: nn.relu(x), lambda n, x: n.maximum(x, 0),
           UNARY_SHAPES, (I32, I64), grad=False),
    OpSpec("sigmoid", lambda t, x: nn.sigmoid(x),
           lambda n, x: 1 / (1 + n.exp(-x)), UNARY_SHAPES, FLOATS),
    OpSpec("softmax", lambda t, x: nn.softmax(x), _np_softmax, REDUCE_SHAPES, FLOATS),
    OpSpec("softmax_axis0", lambda t, x: nn.softmax(x, axis=0),
           lambda n, x: _np_softmax(n, x, 0), REDUCE_SHAPES + [((2, 0),)], FLOATS),
    OpSpec("log_softmax", lambda t, x: nn.log_softmax(x, axis=0),
           lambda n, x: x - _np_logsumexp(n, x, 0, True),
           REDUCE_SHAPES, FLOATS),
    OpSpec("logsumexp", lambda t, x: nn.logsumexp(x),
           lambda n, x: n.log(n.sum(n.exp(x - x.max()))) + x.max(), REDUCE_SHAPES, FLOATS),
    OpSpec("logsumexp_keepdims", lambda t, x: nn.logsumexp(x, axis=-1, keepdims=True),
           lambda n, x: _np_logsumexp(n, x, -1, True), REDUCE_SHAPES, FLOATS),
    OpSpec("logsumexp_axes", lambda t, x: nn.logsumexp(x, axis=(0, -1)),
           lambda n, x: _np_logsumexp(n, x, (0, -1)), REDUCE_SHAPES[1:3], FLOATS),
    OpSpec("gelu", lambda t, x: nn.gelu(x),
           lambda n, x: 0.5 * x * (1 + n.tanh(float(n.sqrt(2 / n.pi)) * (x + 0.044715 * x ** 3))),
           UNARY_SHAPES, FLOATS),
    OpSpec("gelu_exact", lambda t, x: nn.gelu(x, approximate=False),
           lambda n, x: 0.5 * x * (1 + _erf(x / n.sqrt(2))).astype(x.dtype),
           NONEMPTY_UNARY, FLOATS),
]

# ---- elementwise names, products, operators ---------------------------------------------
INTS = (I32, I64)
SPECS += [
    *[_u(n) for n in ("exp2", "tan", "sinh", "cosh", "arcsinh", "deg2rad", "rad2deg",
                      "degrees", "radians")],
    *[_u(n, "positive") for n in ("log2", "log10")],
    *[_u(n, "nonzero") for n in ("cbrt", "sinc", "fabs", "reciprocal", "positive")],
    _same("arccosh", lambda m, x: m.arccosh(1 + x), UNARY_SHAPES, FLOATS, "positive"),
    _same("arctanh", lambda m, x: m.arctanh(x / 2), UNARY_SHAPES, FLOATS),
    _u("arctan"), _b("arctan2", FLOATS, "nonzero"),
    *[_same(n, (lambda n: lambda m, x: getattr(m, n)(x / 2))(n), UNARY_SHAPES, FLOATS)
      for n in ("arcsin", "arccos")],
    _same("float_funcs_of_ints", lambda m, x: m.exp2(x) + m.log2(m.abs(x) + 1) + m.cbrt(x) +
          m.sinh(x) + m.log10(x * x + 2) + m.arctanh(x / 8) + m.fabs(x) + m.sinc(x) +
          m.arctan(x) + m.arcsin(x / 4) + m.arctan2(x, 2),
          UNARY_SHAPES, INTS, grad=False),
    *[_u(n, "nonzero", NUMERIC, grad=False) for n in ("reciprocal", "positive", "rint")],
    *[_u(n, dtypes=ALL) for n in ("floor", "ceil", "trunc", "fix")],
    _u("rint"),
    *[_call(n, a, shapes=UNARY_SHAPES, dtypes=NUMERIC)
      for n in ("round", "around") for a in ("", "1", "decimals=-1")],
    *[_b(n, NUMERIC, "nonzero") for n in ("floor_divide", "mod", "remainder", "fmod")],
    _same("divmod", lambda m, x, y: m.divmod(x, y)[0] + m.divmod(x, y)[1] * 3, BINARY_SHAPES,
          NUMERIC, "nonzero"),
    _same("mod_scalars", lambda m, x: m.mod(x, 2.5) + m.floor_divide(-7, x) + m.fmod(x, -2),
          UNARY_SHAPES, NUMERIC, "nonzero"),
    *[_b(n, FLOATS, "nonzero") for n in ("logaddexp", "logaddexp2", "hypot", "copysign",
                                         "heaviside")],
    _same("hypot_copysign_ints", lambda m, x, y: m.hypot(x, y) + m.copysign(x, y) +
          m.heaviside(x, y) + m.logaddexp(x, y), BINARY_SHAPES, INTS, grad=False),
    *[_b(n, ALL, "nonzero") for n in ("fmax", "fmin")],
    _b("float_power", NUMERIC, "positive"),
    *[_b(n, INTS + (B,), grad=False) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    *[_b(n, INTS, grad=False) for n in ("left_shift", "right_shift")],
    *[_b(n, ALL, grad=False) for n in ("logical_and", "logical_or", "logical_xor")],
    *[_u(n, dtypes=INTS + (B,), grad=False) for n in ("invert", "bitwise_not")],
    *[_u(n, dtypes=ALL, grad=False) for n in ("logical_not", "isnan", "isinf", "isfinite",
                                              "isposinf", "isneginf", "signbit")],
    _same("isnan_isinf_specials", lambda m, x: m.stack([
        m.isnan(x / 0.0), m.isinf(x / 0.0), m.isfinite(1 / x), m.isposinf(1 / x),
        m.isneginf(1 / x), m.signbit(-x), m.signbit(x * 0.0)]), UNARY_SHAPES, FLOATS,
        grad=False),
    _u("nan_to_num", dtypes=ALL),
    _same("nan_to_num_specials", lambda m, x: m.nan_to_num(1 / x * (x / x)) +
          m.nan_to_num(-1 / x, nan=2.0, posinf=3.0, neginf=-4.0), UNARY_SHAPES, FLOATS,
          grad=False),
    *[_u(n, dtypes=ALL) for n in ("real", "imag")],
    *[_u(n, dtypes=NUMERIC) for n in ("conj", "conjugate")],
    _same("select", lambda m, x, y: m.select([x > 0.5, y > 0], [x, y * 2], -1),
          BINARY_SHAPES, NUMERIC, "nonzero"),
    _same("select_default", lambda m, x: m.select([x > 0], [x]), UNARY_SHAPES, NUMERIC,
          "nonzero"),
    _same("isclose", lambda m, x, y: m.isclose(x, x + y * 1e-6) + m.isclose(x, y, atol=1.5) +
          m.isclose(x * 0.0, 0.0, equal_nan=True), BINARY_SHAPES, NUMERIC, grad=False),
    _same("allclose_array_equal", lambda m, x, y: m.stack([
        m.allclose(x, x + y * 1e-9), m.allclose(x, y), m.array_equal(x, x),
        m.array_equal(x, y), m.array_equal(x, x, equal_nan=True)]), BINARY_SHAPES, ALL,
        grad=False),
    # products
    *[_same(f"einsum_{sub}", (lambda sub: lambda m, *xs: m.einsum(sub, *xs))(sub), shapes,
            NUMERIC)
      for sub, shapes in [("ij,jk->ik", [((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]),
                          ("ij,jk", [((1, 3), (3, 1))]), ("bij,bjk->bik", [((2, 3, 4), (2, 4, 5))]),
                          ("ii->i", [((3, 3),)]), ("ii", [((3, 3),), ((0, 0),)]),
                          ("ij->ji", [((2, 3),)]), ("i,i", [((3,), (3,)), ((0,), (0,))]),
                          ("i,j->ij", [((2,), (3,))]), ("ijk,kj->i", [((2, 3, 4), (4, 3))]),
                          ("...ij,...j->...i", [((2, 3, 4), (2, 4)), ((3, 4), (4,))]),
                          ("ij,ij->ij", [((2, 3), (2, 3))]), ("iij->j", [((2, 2, 3),)]),
                          ("i->", [((4,),), ((0,),)])]],
    _same("einsum_three", lambda m, x, y, z: m.einsum("ij,jk,kl->il", x, y, z),
          [((2, 3), (3, 4), (4, 2))], NUMERIC),
    _same("einsum_bool", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [((2, 3), (3, 4))], (B,),
          grad=False),
    *[_same(f"tensordot_{ax}", (lambda ax: lambda m, x, y: m.tensordot(x, y, axes=ax))(ax),
            shapes, NUMERIC)
      for ax, shapes in [(2, [((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4))]),
                         (1, [((2, 3), (3, 4)), ((0, 3), (3,))]), (0, [((2,), (3,)), ((), ())]),
                         (([1, 0], [0, 2]), [((3, 2, 4), (2, 5, 3))])]],
    _same("vdot", lambda m, x, y: m.vdot(x, y), [((3,), (3,)), ((2, 3), (3, 2)), ((0,), (0,))],
          NUMERIC),
    _same("inner", lambda m, x, y: m.inner(x, y), [((3,), (3,)), ((2, 3), (4, 3)), ((), (2,)),
                                                   ((2, 0), (0,))], NUMERIC),
    _same("kron", lambda m, x, y: m.kron(x, y), [((2,), (3,)), ((2, 3), (2, 2)), ((3,), (2, 2)),
                                                 ((), (2,)), ((0, 2), (2, 1))], ALL),
    _same("cross", lambda m, x, y: m.cross(x, y), [((3,), (3,)), ((4, 3), (3,)), ((0, 3), (3,))],
          NUMERIC),
    _same("cross_axes", lambda m, x, y: m.cross(x, y, axisa=0, axisb=0, axisc=0) +
          m.cross(x.T, y.T, axis=-1).T, [((3, 4), (3, 4))], FLOATS),
    # operators on traced values (eagerly: NumPy's own)
    *[_same(f"operator_{f.__name__}", (lambda f: lambda m, x, y: f(x, y))(f), BINARY_SHAPES,
            dtypes, "nonzero", grad=False)
      for f, dtypes in [(operator.floordiv, (F32, I32)), (operator.mod, (F32, F64, I32)),
                        (operator.and_, (I32, B)), (operator.or_, (I32, B)),
                        (operator.xor, (I64, B)), (operator.lshift, (I32,)),
                        (operator.rshift, (I64,))]],
    _same("operator_int_reflected", lambda m, x: (7 // x) + (5 % x) + (1 << abs(x)) +
          (-9 >> abs(x)) + (3 & x) + (1 | x) + (2 ^ x) + ~x + divmod(x, 2)[0] +
          divmod(11, x)[1], UNARY_SHAPES, INTS, "nonzero", grad=False),
    _same("operator_float_reflected", lambda m, x: (7.5 // x) + (5 % x) + divmod(x, 0.75)[1]
          + divmod(2.5, x)[0] + abs(x), UNARY_SHAPES, FLOATS, "nonzero"),
    _same("operator_bool", lambda m, x: ~x ^ (x & True) | False, UNARY_SHAPES, (B,),
          grad=False),
]


def saturating_astype(x, dtype):
    """x.astype(dtype), but float -> int as JAX's (truncated, clamped to the range): NumPy's
    out-of-range values (negative to unsigned) depend on the platform."""
    if dtype_kind(x.dtype) == "f" and dtype_kind(np.dtype(dtype)) in "iu":
        info = np.iinfo(dtype)
        x = np.clip(x.astype(np.float64), info.min, info.max)
    return x.astype(dtype)


def make_input(shape, dtype, domain, rng):
    """Random input in the op's domain, away from kinks for float gradients."""
    if dtype == B:
        return rng.random(shape) > 0.5
    if dtype_kind(dtype) in "iu":
        x = rng.integers(-3 if dtype_kind(dtype) == "i" else 0, 4, shape)
        if domain in ("positive", "nonzero"):
            x = np.where(x == 0, 1, np.abs(x) if domain == "positive" else x)
        return x.astype(dtype)
    x = rng.uniform(-1.5, 1.5, shape)
    if domain == "positive":
        x = np.abs(x) + 0.5
    elif domain == "nonzero":
        x = np.where(np.abs(x) < 0.2, 0.7, x)
    return x.astype(dtype)


def cases(specs=SPECS):
    """(spec, shapes, dtype) triples for parametrized tests, with readable ids."""
    out = []
    for s in specs:
        for shapes in s.shapes:
            for dt in s.dtypes:
                out.append((s, shapes, dt))
    return out


def case_id(case):
    s, shapes, dt = case
    return f"{s.name}-{'x'.join(str(list(sh)) for sh in shapes)}-{dt}"

# ---- reductions, scans, shapes, assembly, sorting, creation (spec_reductions_and_shapes.py) --
from spec_reductions_and_shapes import ROWS as _REDUCTION_AND_SHAPE_ROWS  # noqa: E402

SPECS.extend(_REDUCTION_AND_SHAPE_ROWS)
SPECS[:] = with_new_dtypes(SPECS)       # and a sample of the eight newer dtypes

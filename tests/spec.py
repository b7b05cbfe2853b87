"""The op spec table: one row per op, shared by the eager, jit, gradient and LLVM tests.

A row names the op, how to call it (`fn`, taking tracer.numpy as `tnp`), the NumPy
reference (`ref`, taking numpy as `np`), the input shape cases, the dtypes, the input
domain, and whether it is differentiable. Generic tests iterate over `cases()`.
"""
from dataclasses import dataclass, field

import numpy as np

F32, F64, I32, I64, B = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                         np.dtype(np.int64), np.dtype(np.bool_))
FLOATS = (F32, F64)
NUMERIC = (F32, F64, I32, I64)
ALL = (F32, F64, I32, I64, B)

UNARY_SHAPES = [((),), ((1,),), ((3,),), ((2, 3),), ((0,),), ((2, 0),)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((1,), (4,)),
                 ((2, 3), ()), ((0,), (0,)), ((0, 3), (1, 3))]
REDUCE_SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),), ((1,),)]
NONEMPTY_UNARY = [s for s in UNARY_SHAPES if 0 not in s[0]]


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


def _u(name, domain="real", dtypes=FLOATS, grad=True, np_name=None):
    return OpSpec(name, lambda t, x: getattr(t, name)(x),
                  lambda n, x: getattr(n, np_name or name)(x), UNARY_SHAPES, dtypes, domain, grad)


def _b(name, dtypes=NUMERIC, domain="real", grad=True):
    return OpSpec(name, lambda t, x, y: getattr(t, name)(x, y),
                  lambda n, x, y: getattr(n, name)(x, y), BINARY_SHAPES, dtypes, domain, grad)


SPECS = [
    _u("negative", dtypes=NUMERIC), _u("exp"), _u("log", "positive"), _u("log1p", "positive"),
    _u("expm1"), _u("sqrt", "positive"), _u("sin"), _u("cos"), _u("tanh"),
    _u("abs", "nonzero", dtypes=ALL), _u("sign", dtypes=NUMERIC, grad=False),
    OpSpec("exp_int", lambda t, x: t.exp(x), lambda n, x: n.exp(x), UNARY_SHAPES, (I32, I64),
           grad=False),
    _b("add", ALL), _b("subtract"), _b("multiply", ALL), _b("divide", NUMERIC, "nonzero"),
    _b("power", FLOATS, "positive"), _b("maximum", ALL), _b("minimum", ALL),
    *[_b(c, ALL, grad=False) for c in ("greater", "greater_equal", "less", "less_equal",
                                      "equal", "not_equal")],
    OpSpec("where", lambda t, x, y: t.where(x > 0, x, y), lambda n, x, y: n.where(x > 0, x, y),
           BINARY_SHAPES, NUMERIC, "nonzero"),
    OpSpec("clip", lambda t, x: t.clip(x, -0.5, 0.5), lambda n, x: n.clip(x, -0.5, 0.5),
           UNARY_SHAPES, FLOATS, "nonzero"),
    OpSpec("scalar_ops", lambda t, x: 2.0 * x - 1 + x / 3, lambda n, x: 2.0 * x - 1 + x / 3,
           UNARY_SHAPES, NUMERIC),
    *[OpSpec(f"{r}_axis{ax}_keep{k}", (lambda r, ax, k: lambda t, x: getattr(t, r)(x, axis=ax, keepdims=k))(r, ax, k),
             (lambda r, ax, k: lambda n, x: getattr(n, r)(x, axis=ax, keepdims=k))(r, ax, k),
             REDUCE_SHAPES, dt, "nonzero", g)
      for r, dt, g in [("sum", ALL, True), ("mean", NUMERIC, True), ("max", NUMERIC, True),
                       ("min", NUMERIC, True), ("prod", NUMERIC, True)]
      for ax, k in [(None, False), (-1, False), (0, True)]],
    OpSpec("sum_empty", lambda t, x: t.sum(x, axis=0), lambda n, x: n.sum(x, axis=0),
           [((0,),), ((0, 3),)], ALL),
    *[OpSpec(f"{r}_axis{ax}", (lambda r, ax: lambda t, x: getattr(t, r)(x, axis=ax))(r, ax),
             (lambda r, ax: lambda n, x: getattr(n, r)(x, axis=ax))(r, ax),
             REDUCE_SHAPES, NUMERIC, grad=False)
      for r in ("argmax", "argmin") for ax in (None, -1)],
    OpSpec("matmul", lambda t, a, b: t.matmul(a, b), lambda n, a, b: n.matmul(a, b),
           [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)),
            ((2, 2, 3), (3, 4)), ((1, 3), (3, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))], NUMERIC),
    OpSpec("dot", lambda t, a, b: t.dot(a, b), lambda n, a, b: n.dot(a, b),
           [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (4, 3, 2))], NUMERIC),
    OpSpec("reshape", lambda t, x: t.reshape(x, (-1,)), lambda n, x: n.reshape(x, (-1,)),
           UNARY_SHAPES, ALL),
    OpSpec("transpose", lambda t, x: t.transpose(x), lambda n, x: n.transpose(x),
           UNARY_SHAPES + [((2, 3, 4),)], ALL),
    OpSpec("broadcast_to", lambda t, x: t.broadcast_to(x, (2,) + x.shape),
           lambda n, x: n.broadcast_to(x, (2,) + x.shape), UNARY_SHAPES, ALL),
    OpSpec("expand_squeeze", lambda t, x: t.squeeze(t.expand_dims(x, 0), 0),
           lambda n, x: n.squeeze(n.expand_dims(x, 0), 0), UNARY_SHAPES, ALL),
    OpSpec("concatenate", lambda t, x, y: t.concatenate([x, y], axis=0),
           lambda n, x, y: n.concatenate([x, y], axis=0),
           [((3,), (2,)), ((2, 3), (1, 3)), ((0, 3), (2, 3))], ALL),
    OpSpec("stack", lambda t, x, y: t.stack([x, y], axis=-1), lambda n, x, y: n.stack([x, y], axis=-1),
           [((), ()), ((3,), (3,)), ((2, 3), (2, 3))], ALL),
    OpSpec("take", lambda t, x: t.take(x, np.array([0, -1, 1, 0]), axis=0),
           lambda n, x: n.take(x, n.array([0, -1, 1, 0]), axis=0), [((3,),), ((2, 3),)], ALL),
    OpSpec("getitem_basic", lambda t, x: x[1:, ::2][None, ..., -1],
           lambda n, x: x[1:, ::2][None, ..., -1], [((3, 4),), ((2, 5, 3),)], ALL),
    OpSpec("getitem_reverse", lambda t, x: x[::-2], lambda n, x: x[::-2], [((5,),), ((4, 2),)], ALL),
    OpSpec("getitem_array", lambda t, x: x[:, np.array([2, 0])], lambda n, x: x[:, n.array([2, 0])],
           [((2, 3),), ((1, 3, 2),)], ALL),
    OpSpec("getitem_int", lambda t, x: x[1], lambda n, x: x[1], [((3,),), ((2, 3),)], ALL),
    OpSpec("astype", lambda t, x: t.astype(x, np.float32) * 2, lambda n, x: x.astype(np.float32) * 2,
           UNARY_SHAPES, ALL, "nonzero"),
    OpSpec("relu", lambda t, x: __import__("tracer").nn.relu(x), lambda n, x: n.maximum(x, 0),
           UNARY_SHAPES, FLOATS, "nonzero"),
    OpSpec("sigmoid", lambda t, x: __import__("tracer").nn.sigmoid(x),
           lambda n, x: 1 / (1 + n.exp(-x)), UNARY_SHAPES, FLOATS),
    OpSpec("softmax", lambda t, x: __import__("tracer").nn.softmax(x),
           lambda n, x: n.exp(x - x.max(-1, keepdims=True)) / n.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True),
           REDUCE_SHAPES, FLOATS),
    OpSpec("log_softmax", lambda t, x: __import__("tracer").nn.log_softmax(x, axis=0),
           lambda n, x: x - x.max(0, keepdims=True) - n.log(n.exp(x - x.max(0, keepdims=True)).sum(0, keepdims=True)),
           REDUCE_SHAPES, FLOATS),
    OpSpec("logsumexp", lambda t, x: __import__("tracer").nn.logsumexp(x),
           lambda n, x: n.log(n.sum(n.exp(x - x.max()))) + x.max(), REDUCE_SHAPES, FLOATS),
    OpSpec("gelu", lambda t, x: __import__("tracer").nn.gelu(x),
           lambda n, x: 0.5 * x * (1 + n.tanh(float(n.sqrt(2 / n.pi)) * (x + 0.044715 * x ** 3))),
           UNARY_SHAPES, FLOATS),
    OpSpec("gelu_exact", lambda t, x: __import__("tracer").nn.gelu(x, approximate=False),
           lambda n, x: 0.5 * x * (1 + n.vectorize(__import__("math").erf)(x / n.sqrt(2))).astype(x.dtype),
           NONEMPTY_UNARY, FLOATS),
]


def make_input(shape, dtype, domain, rng):
    """Random input in the op's domain, away from kinks for float gradients."""
    if dtype == B:
        return rng.random(shape) > 0.5
    if dtype.kind == "i":
        x = rng.integers(-3, 4, shape)
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

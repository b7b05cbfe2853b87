"""tracer.export.to_onnx: every built-in kernel, the spec ops, the MLP and its gradient,
user exporters and dynamic batch, each run in ONNX Runtime against tracer.jit."""
import os
import sys

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from registry.exporters import (exporters, get_exporter, has_exporter, register_exporter,
                                unregister_exporter)
from tracer.kernels import BUILTIN_KERNELS
from spec import BF16, FLOATS, SPECS, case_id, make_input
from tracer.export import to_onnx
from tracer.pytree import flatten

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

F32, F64, I32, I64, B = map(np.dtype, ("float32", "float64", "int32", "int64", "bool"))
NUMERIC = (F32, F64, I32, I64)
ALL = NUMERIC + (B,)


def run_onnx(model, *args):
    """ONNX Runtime's Python API takes bfloat16 only as OrtValues of its bits and returns
    none: bfloat16 outputs are read through a Cast to float32 added here."""
    bf16 = onnx.TensorProto.BFLOAT16
    outs = [o for o in model.graph.output if o.type.tensor_type.elem_type == bf16]
    for o in outs:
        model.graph.node.append(onnx.helper.make_node("Cast", [o.name], [o.name + "_f32"],
                                                      to=onnx.TensorProto.FLOAT))
        o.name, o.type.tensor_type.elem_type = o.name + "_f32", onnx.TensorProto.FLOAT
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    leaves = [np.asarray(x) for x in flatten(list(args))[0]]
    feed = {i.name: ort.OrtValue.ortvalue_from_numpy(x) if x.dtype != BF16 else
            ort.OrtValue.ortvalue_from_numpy_with_onnx_type(x.view(np.uint16), bf16)
            for i, x in zip(sess.get_inputs(), leaves)}
    got = [r.numpy() for r in sess.run_with_ort_values(None, feed)]
    return [r.astype(BF16) if o.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
            and o in outs else r for r, o in zip(got, model.graph.output)]


def assert_same(got, want, dtype=None):
    """Exact for ints and bools; ONNX Runtime's float32 transcendentals round a little."""
    want = flatten(want)[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        tol = {"f": dict(rtol=3e-6, atol=1e-6) if w.dtype == F32 else dict(rtol=1e-12)}
        np.testing.assert_allclose(g, w, **tol.get(w.dtype.kind, dict(rtol=0)))


def check(fun, *args):
    """ONNX Runtime agrees with jit on the numpy backend (NumPy's semantics, no compile)."""
    with np.errstate(all="ignore"):
        want = tracer.jit(fun, backend="numpy")(*args)
    assert_same(run_onnx(to_onnx(fun, *args), *args), want)


# ---- every built-in kernel, called directly (0-d, size-1, empty, several attrs) --------

def _data(rng, shape, dt, domain="real"):
    return make_input(shape, dt, domain, rng)


def _index(shape, size, dt=I64):
    return (np.arange(int(np.prod(shape))) * 7 % size).reshape(shape).astype(dt)


UNARY_SHAPES = [(), (1,), (2, 3), (0,)]
DOMAIN = {"log": "positive", "sqrt": "positive", "log1p": "positive", "abs": "nonzero"}


def _unary(k):
    return lambda rng, dt: [([_data(rng, s, dt, DOMAIN.get(k, "real"))], {})
                            for s in UNARY_SHAPES]


def _binary(k):
    domain = {"div": "nonzero", "pow": "positive"}.get(k, "real")

    def cases(rng, dt):
        out = [([_data(rng, s, dt, domain), _data(rng, s, dt, domain)], {})
               for s in UNARY_SHAPES]
        if k == "pow" and dt.kind == "i":
            out = [([x, np.abs(y)], {}) for (x, y), _ in out]
        if k == "div" and dt.kind == "i":     # floor division, x // 0 == 0, wrapping
            lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
            out.append(([np.array([7, -7, 7, -7, 0, lo, lo, hi, hi, 1, -5, 6, lo], dt),
                         np.array([2, 2, -2, -2, 0, -1, 1, -1, -2, 0, 0, 3, 0], dt)], {}))
        return out
    return cases


def _reduce(rng, dt):
    x = _data(rng, (2, 3), dt, "nonzero")
    return [([x], {"axes": a}) for a in [(), (0,), (1,), (0, 1)]] + [
        ([_data(rng, (), dt)], {"axes": ()}), ([_data(rng, (1, 4, 2), dt)], {"axes": (0, 2)})]


def _reduce_with_empty(rng, dt):
    return _reduce(rng, dt) + [([_data(rng, (0, 3), dt)], {"axes": (0,)})]


def _arg_reduce(rng, dt):
    x = _data(rng, (3, 4), dt)
    return [([x], {"axis": 0}), ([x], {"axis": 1}), ([_data(rng, (1,), dt)], {"axis": 0})]


KERNEL_CASES = {
    **{k: (_unary(k), FLOATS) for k in ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos",
                                         "tanh")},
    "erf": (_unary("erf"), (F32,)),          # ONNX Runtime has no float64 Erf kernel
    **{k: (_unary(k), NUMERIC) for k in ("neg", "sign")},
    "abs": (_unary("abs"), ALL),
    **{k: (_binary(k), ALL) for k in ("add", "mul", "max", "min", "gt", "ge", "lt", "le",
                                       "eq", "ne")},
    "sub": (_binary("sub"), NUMERIC), "div": (_binary("div"), NUMERIC),
    "pow": (_binary("pow"), NUMERIC),
    "reduce_sum": (_reduce_with_empty, ALL), "reduce_prod": (_reduce_with_empty, ALL),
    "reduce_max": (_reduce, ALL), "reduce_min": (_reduce, ALL),
    "argmax": (_arg_reduce, ALL), "argmin": (_arg_reduce, ALL),
    **{k: (_arg_reduce, NUMERIC) for k in ("cumsum", "cumprod", "argsort")},
    "select": (lambda rng, dt: [([_data(rng, s, B), _data(rng, s, dt), _data(rng, s, dt)], {})
                                for s in UNARY_SHAPES], ALL),
    "convert": (lambda rng, dt: [([_data(rng, (2, 3), dt, "nonzero")], {"dtype": to})
                                 for to in ALL], ALL),
    "broadcast_to": (lambda rng, dt: [([_data(rng, s, dt)], {"shape": t}) for s, t in [
        ((), (2, 3)), ((1,), (4,)), ((3,), (2, 3)), ((2, 1), (2, 3)), ((1,), (0,))]], ALL),
    "reshape": (lambda rng, dt: [([_data(rng, s, dt)], {"shape": t}) for s, t in [
        ((2, 3), (3, 2)), ((2, 3), (6,)), ((2, 3), (1, 6, 1)), ((), (1, 1)),
        ((0, 3), (3, 0))]], ALL),
    "transpose": (lambda rng, dt: [([_data(rng, s, dt)], {"perm": p}) for s, p in [
        ((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((), ()), ((0, 2), (1, 0))]], ALL),
    "slice": (lambda rng, dt: [([_data(rng, (5, 4), dt)], dict(start=s, limit=e, step=k))
                               for s, e, k in [((0, 0), (5, 4), (1, 1)),
                                               ((1, 0), (5, 3), (2, 2)),
                                               ((4, 1), (4, 4), (1, 3))]], ALL),
    "rev": (lambda rng, dt: [([_data(rng, s, dt)], {"axes": a}) for s, a in [
        ((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2,), ()), ((0, 2), (0,))]], ALL),
    "pad": (lambda rng, dt: [([_data(rng, s, dt)], dict(lo=lo, hi=hi, interior=i))
                             for s, lo, hi, i in [((2, 3), (1, 0), (0, 2), (0, 0)),
                                                  ((3,), (0,), (0,), (2,)),
                                                  ((2, 3), (1, 2), (0, 1), (1, 2)),
                                                  ((1, 0), (0, 1), (1, 0), (3, 1)),
                                                  ((), (), (), ())]], ALL),
    "concatenate": (lambda rng, dt: [
        ([_data(rng, (2, 3), dt)], {"axis": 0}),
        ([_data(rng, (2, 3), dt), _data(rng, (2, 1), dt)], {"axis": 1}),
        ([_data(rng, (1, 2), dt), _data(rng, (0, 2), dt), _data(rng, (3, 2), dt)],
         {"axis": 0})], ALL),
    "take": (lambda rng, dt: [([_data(rng, (4, 3), dt), _index(i, n, idt)], {"axis": a})
                              for i, n, a, idt in [((), 4, 0, I64), ((5,), 3, 1, I32),
                                                   ((2, 2), 4, 0, I64)]], ALL),
    "scatter_add": (lambda rng, dt: [
        ([_data(rng, u, dt), _index(i, n, idt)], {"axis": a, "size": n})
        for u, i, n, a, idt in [((5, 3), (5,), 2, 0, I64), ((2, 6), (6,), 4, 1, I32),
                                ((2, 2, 2, 3), (2, 2), 3, 1, I64), ((2, 3), (), 4, 1, I64)]],
        ALL),
    "matmul": (lambda rng, dt: [([_data(rng, a, dt), _data(rng, b, dt)], {}) for a, b in [
        ((2, 3), (3, 4)), ((2, 2, 3), (2, 3, 1)), ((1, 1), (1, 1)), ((2, 0), (0, 3))]],
        NUMERIC),
    **{k: (_unary(k), FLOATS) for k in ("floor", "ceil", "trunc", "rint", "signbit", "atan")},
    "fmod": (_binary("fmod"), FLOATS), "not": (_unary("not"), (I32, I64, B)),
    **{k: (_binary(k), (I32, I64, B)) for k in ("and", "or", "xor")},
    **{k: (_binary(k), (I32, I64)) for k in ("shl", "shr")},
}


def test_every_builtin_kernel_has_an_exporter_and_a_case():
    assert set(KERNEL_CASES) == set(BUILTIN_KERNELS)
    assert [k for k in BUILTIN_KERNELS if not has_exporter(k, "onnx")] == []


@pytest.mark.parametrize("kernel,dtype", [(k, dt) for k, (_, dts) in KERNEL_CASES.items()
                                          for dt in dts], ids=str)
def test_kernel(kernel, dtype):
    cases = KERNEL_CASES[kernel][0](np.random.default_rng(0), dtype)
    splits = np.cumsum([0] + [len(ins) for ins, _ in cases])
    args = [x for ins, _ in cases for x in ins]

    def fun(*xs):
        return tuple(tracer.run_kernel(kernel, list(xs[a:b]), attrs)
                     for (_, attrs), a, b in zip(cases, splits, splits[1:]))
    check(fun, *args)


# ---- the spec table's ops: broadcasting, promotion, indexing, nn. All shapes of a row and
# ---- dtype in one model; compared with the numpy backend (no compile: the file stays fast)

def _spec_groups():
    groups = {}
    for s in SPECS:
        for dt in s.dtypes:
            groups[(s.name, dt)] = (s, dt)
    return groups


@pytest.mark.parametrize("spec,dtype", list(_spec_groups().values()),
                         ids=[f"{n}-{dt}" for n, dt in _spec_groups()])
def test_spec_op(spec, dtype):
    rng = np.random.default_rng(1)
    shapes = [sh for sh in spec.shapes]
    args = [make_input(s, dtype, spec.domain, rng) for sh in shapes for s in sh]
    splits = np.cumsum([0] + [len(sh) for sh in shapes])

    def fun(*xs):
        return tuple(spec.fn(tnp, *xs[a:b]) for a, b in zip(splits, splits[1:]))
    kernels = tracer.make_graph(fun)(*args).kernels()
    if dtype == F64 and "erf" in kernels:
        pytest.skip("ONNX Runtime has no float64 Erf kernel")
    check(fun, *args)


# ---- NumPy semantics where ONNX Runtime differs ---------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_and_edge_values_follow_numpy(dtype):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, 2.0, np.inf, 0.5]], dtype)
    tiny = np.array([1e-30, -1e-25, 1e-9, -3e-8, 0.0, 40.0, -40.0, np.inf, -np.inf, np.nan,
                     -1.0, 1e30], dtype)

    def fun(x, t):
        return (tnp.max(x, axis=1), tnp.min(x, axis=0), tnp.argmax(x, axis=1),
                tnp.argmin(x, axis=1), tnp.maximum(x, 2.0), tnp.sign(x), x.astype(bool),
                tnp.log1p(t), tnp.expm1(t))
    with np.errstate(all="ignore"):
        check(fun, x, tiny)


def test_small_unsigned_and_half_dtypes_compute_as_the_numpy_backend():
    """ONNX Runtime lacks many kernels for them: nodes compute widened and cast back
    (wrap-around kept), uint64 on int64 bits (order through a flipped top bit)."""
    big = np.array([2 ** 63 + 5, 7, 0, 2 ** 64 - 1], np.uint64)
    check(lambda a, b: (tnp.maximum(a, b), tnp.sort(a), tnp.argmin(a), tnp.max(a), a < b,
                        a // b, a % (b + np.uint64(1)), tnp.power(a, 2), tnp.cumsum(a)),
          big, big[::-1].copy())
    small = np.array([200, 255, 3, 0], np.uint8)
    check(lambda a: (a + np.uint8(100), a * a, -a.astype(np.int8), tnp.max(a), tnp.sort(a),
                     a.astype(np.int16) - 300, tnp.sum(a)), small)
    for dt in (np.float16, BF16):
        x = np.linspace(-2, 2, 12).astype(dt).reshape(3, 4)
        check(lambda a: (tnp.sum(a, axis=0), tnp.exp(a) @ a.T, tnp.max(a), tnp.sort(a),
                         tracer.nn.softmax(a), a * 2.5), x)


# ---- models ---------------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import mlp  # noqa: E402


@pytest.fixture(scope="module")
def mlp_data():
    rng = np.random.default_rng(0)
    x, y = mlp.spirals(16, rng)
    return mlp.init_params([2, 16, 16, 2], rng), x, np.eye(2, dtype=np.float32)[y]


def test_mlp_forward_and_value_and_grad_round_trip(mlp_data, tmp_path):
    params, x, onehot = mlp_data
    step = tracer.value_and_grad(mlp.loss)
    path = tmp_path / "step.onnx"
    model = to_onnx(step, params, x, onehot, path=str(path))
    assert onnx.load(str(path)) == model
    assert_same(run_onnx(model, params, x, onehot), tracer.jit(step)(params, x, onehot))
    forward = to_onnx(mlp.predict, params, x)
    assert [i.name for i in forward.graph.input] == [f"params_{i}" for i in range(6)] + ["x"]
    assert_same(run_onnx(forward, params, x), tracer.jit(mlp.predict)(params, x))


def test_custom_vjp_is_inlined():
    @tracer.custom_vjp
    def softclip(x):
        return tnp.tanh(x) * 2
    softclip.defvjp(lambda x: (softclip(x), x), lambda x, dy: (dy,))
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    check(lambda x: softclip(x) + 1, x)
    check(tracer.grad(lambda x: tnp.sum(softclip(x) * x)), x)


# ---- user exporters and errors --------------------------------------------------------

@pytest.fixture
def softplus_kernel():
    registry.register_shape_rule("test_softplus", lambda x: x)
    registry.register_kernel("test_softplus", "numpy", lambda x: np.logaddexp(x, 0))
    yield "test_softplus"
    registry.unregister_kernel("test_softplus", "numpy")
    registry.unregister_shape_rule("test_softplus")
    if has_exporter("test_softplus", "onnx"):
        unregister_exporter("test_softplus", "onnx")


def test_user_kernel_with_a_registered_exporter(softplus_kernel):
    x = np.linspace(-3, 3, 7, dtype=np.float32)

    def fun(x):
        return tracer.run_kernel("test_softplus", [x * 2]) + 1
    with pytest.raises(tracer.KernelNotFoundError) as e:
        to_onnx(fun, x)
    msg = str(e.value)
    assert "'test_softplus'" in msg and "test_onnx_kernels.py" in msg
    assert "registry.register_exporter('test_softplus', 'onnx', fn)" in msg
    register_exporter("test_softplus", "onnx", lambda g, inputs, attrs: g.op("Softplus", *inputs))
    model = to_onnx(fun, x)
    assert "Softplus" in [n.op_type for n in model.graph.node]
    np.testing.assert_allclose(run_onnx(model, x)[0], tracer.jit(fun, backend="numpy")(x),
                               rtol=1e-6)


def test_exporter_table_errors():
    with pytest.raises(tracer.KernelNotFoundError, match="register_exporter"):
        get_exporter("add", "tflite")
    with pytest.raises(tracer.KernelNotFoundError):
        unregister_exporter("no_such_kernel", "onnx")
    for bad in [("", "onnx", abs), ("add", "", abs), ("add", "onnx", 3)]:
        with pytest.raises(tracer.ArgumentError):
            register_exporter(*bad)
    assert ("matmul", "onnx") in exporters()


def test_a_failing_exporter_is_named(softplus_kernel):
    register_exporter("test_softplus", "onnx", lambda g, inputs, attrs: (inputs[0], inputs[0]))
    with pytest.raises(tracer.KernelError, match="2 names for 1 outputs"):
        to_onnx(lambda x: tracer.run_kernel("test_softplus", [x]), np.ones(2, np.float32))
    register_exporter("test_softplus", "onnx", lambda g, inputs, attrs: 1 / 0)
    with pytest.raises(tracer.KernelError, match="test_softplus.*ZeroDivisionError"):
        to_onnx(lambda x: tracer.run_kernel("test_softplus", [x]), np.ones(2, np.float32))
    register_exporter("test_softplus", "onnx",      # an int32 result for a float32 output
                      lambda g, inputs, attrs: g.cast(inputs[0], I32))
    with pytest.raises(tracer.KernelError, match="fails onnx.checker"):
        to_onnx(lambda x: tracer.run_kernel("test_softplus", [x]), np.ones(2, np.float32))


# ---- dynamic batch ---------------------------------------------------------------------

def _dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def test_dynamic_batch_runs_with_other_batch_sizes(mlp_data):
    params, x, onehot = mlp_data

    def fun(x, onehot):     # predictions per row, and the mean loss over the batch
        logits = mlp.predict(params, x)
        return logits, -tnp.mean(tnp.sum(tracer.nn.log_softmax(logits) * onehot, axis=-1))
    model = to_onnx(fun, x, onehot, dynamic_batch=True)
    assert [_dims(v) for v in model.graph.input] == [["batch", 2], ["batch", 2]]
    assert [_dims(v) for v in model.graph.output] == [["batch", 2], []]
    rng = np.random.default_rng(3)
    for n in (1, 5, 50):
        xb, yb = rng.normal(size=(n, 2)).astype(np.float32), rng.integers(0, 2, n)
        args = xb, np.eye(2, dtype=np.float32)[yb]
        assert_same(run_onnx(model, *args), tracer.jit(fun, backend="numpy")(*args))


def test_dynamic_batch_shape_attrs_follow_the_batch():
    def fun(x):
        y = tnp.broadcast_to(x[:, None, :], (x.shape[0], 3, x.shape[1]))
        return tnp.reshape(y, (x.shape[0], -1))[1:, ::2], tnp.take(x, np.array([0, 0]), axis=1)
    model = to_onnx(fun, np.ones((4, 2), np.float32), dynamic_batch=True)
    for n in (2, 7):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        assert_same(run_onnx(model, x), tracer.jit(fun, backend="numpy")(x))


@pytest.mark.parametrize("how", ["set", "add"])
def test_dynamic_batch_scatter_reads_its_sizes_at_run_time(how):
    from tracer.lax.scatters import scatter

    def fun(x, v, i):
        return scatter(x, v, i, how)
    model = to_onnx(fun, np.zeros((4, 2), np.float32), np.ones((4, 2), np.float32),
                    np.array([3, 1, 1, 0]), dynamic_batch=True)
    for i in ([5, 1, 1, 0, 5, 2], [0]):
        n = len(i)
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        args = x, -x - 1, np.array(i)
        assert_same(run_onnx(model, *args), tracer.jit(fun, backend="numpy")(*args))


@pytest.mark.parametrize("axis", [0, 1])
def test_dynamic_batch_cumprod_follows_the_batch(axis):
    def fun(x):
        return tnp.cumprod(x, axis=axis), tnp.cumprod(x > 0, axis=axis)
    model = to_onnx(fun, np.full((2, 3), 2.0, np.float32), dynamic_batch=True)
    for n in (1, 5, 9):
        x = np.arange(3 * n, dtype=np.float32).reshape(n, 3) % 5 - 1
        assert_same(run_onnx(model, x), tracer.jit(fun, backend="numpy")(x))


def test_dynamic_batch_errors(softplus_kernel):
    x = np.ones((4, 3), np.float32)
    with pytest.raises(tracer.ShapeError, match=r"reshape\(f32\[4,3\]\).*shape=\(12,\)"):
        to_onnx(lambda x: tnp.reshape(x, (-1,)), x, dynamic_batch=True)
    with pytest.raises(tracer.ShapeError, match="mean over the batch axis and another"):
        to_onnx(lambda x: tnp.mean(x), x, dynamic_batch=True)
    with pytest.raises(tracer.ArgumentError, match="lead with the batch"):
        to_onnx(lambda x, w: x @ w, x, np.ones((3, 2), np.float32), dynamic_batch=True)
    # a user kernel whose exporter bakes its shape attr cannot follow the batch
    registry.register_shape_rule("test_softplus", lambda x, *, shape: _Aval(shape, x.dtype))
    register_exporter("test_softplus", "onnx", lambda g, inputs, attrs: g.op(
        "Expand", inputs[0], g.const(np.array(attrs["shape"], np.int64))))

    def fun(x):
        return tracer.run_kernel("test_softplus", [x[0]], {"shape": x.shape})
    to_onnx(fun, x)         # with a fixed batch it exports
    with pytest.raises(tracer.ShapeError, match=r"attr shape=\(4, 3\).*g.ints\('shape'\)"):
        to_onnx(fun, x, dynamic_batch=True)


class _Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

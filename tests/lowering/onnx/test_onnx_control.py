"""tracer.export.to_onnx of control flow: scan, while, cond/switch, checkpoint,
stop_gradient and dynamic indexing (forward and differentiated, nested, the RNN example),
each model run in ONNX Runtime against tracer.jit, on several inputs per model."""
import os
import sys

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from registry.exporters import has_exporter
from tracer import lax
from tracer.export import to_onnx

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from test_onnx_kernels import assert_same, run_onnx, softplus_kernel  # noqa: E402,F401

CONTROL_KERNELS = ("scan", "while", "cond", "remat", "custom_call", "stop_gradient",
                   "dynamic_index", "dynamic_update_index")
F32 = np.float32


def check(fun, *arg_sets, kernels=(), **options):
    """Export fun at the first argument tuple; every tuple runs in ONNX Runtime as in jit.
    The traced graph must hold `kernels` (the control flow under test survived tracing)."""
    model = to_onnx(fun, *arg_sets[0], **options)
    graph = tracer.make_graph(fun)(*arg_sets[0])
    assert set(kernels) <= graph.kernels(), graph
    for args in arg_sets:
        with np.errstate(all="ignore"):
            want = tracer.jit(fun, backend="numpy")(*args)
        assert_same(run_onnx(model, *args), want)
    return model


def _ops(model):
    """The ONNX op types of the model, subgraphs included."""
    def walk(graph):
        for n in graph.node:
            yield n.op_type
            for a in n.attribute:
                if a.g.node:
                    yield from walk(a.g)
    return set(walk(model.graph))


X = np.linspace(-1, 1, 12, dtype=F32).reshape(4, 3)


def test_every_control_flow_kernel_has_an_exporter():
    assert [k for k in CONTROL_KERNELS if not has_exporter(k, "onnx")] == []


# ---- scan ------------------------------------------------------------------------------

@pytest.mark.parametrize("reverse", [False, True])
def test_scan_with_pytree_carry_several_xs_and_ys(reverse):
    w = np.array([0.5, -1.0, 2.0], F32)

    def fun(xs, n):
        def step(c, x):
            h = tnp.tanh(c["h"] * w + x[0]) + x[1]
            return {"h": h, "k": c["k"] + n}, (h * 2, c["k"])
        return lax.scan(step, {"h": xs[0][0], "k": n}, xs, reverse=reverse)
    model = check(fun, ((X, X[:, ::-1] * 3), np.int32(2)), ((X * 2, X), np.int32(-1)),
                  kernels=["scan"])
    assert "Loop" in _ops(model)


def test_scan_of_length_zero_and_without_xs():
    check(lambda x: lax.scan(lambda c, r: (c + r, c * r), x[0], x[:0]), (X,), kernels=["scan"])
    check(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x), (X,), (X * 3,),
          kernels=["scan"])
    check(lambda x: lax.fori_loop(0, 0, lambda i, c: c * 0.5 + i, x), (X,))


def test_scan_gradients_run_reverse_scans():
    def loss(w, xs):
        return tnp.sum(lax.scan(lambda h, x: (tnp.sin(h * w + x), h * h), xs[0], xs)[1])
    g = tracer.value_and_grad(loss, argnums=(0, 1))
    graph = tracer.make_graph(g)(X[0], X)
    assert [n.attrs["reverse"] for n in graph.nodes if n.kernel == "scan"] == [False, True]
    check(g, (X[0], X), (X[1] * 3, X * 2))


# ---- while -----------------------------------------------------------------------------

def test_while_loop_with_pytree_carry_and_zero_trips():
    def fun(x, limit):
        def body(c):
            return {"x": c["x"] * 1.5 + 0.1, "n": c["n"] + 1}
        return lax.while_loop(lambda c: tnp.sum(c["x"]) < limit, body, {"x": x, "n": 0})
    check(fun, (np.abs(X), F32(40)), (np.abs(X), F32(-1)), (np.abs(X) + 1, F32(1e4)),
          kernels=["while"])


def test_fori_loop_with_traced_bounds():
    def fun(x, n):
        return lax.fori_loop(0, n, lambda i, c: c + i.astype(np.float32) * x, x)
    check(fun, (X, np.int64(4)), (X, np.int64(0)), (X, np.int64(-3)), kernels=["while"])


def test_while_gradient_counts_its_trips():
    def loss(x, limit):
        c = lax.while_loop(lambda c: c[1] < limit, lambda c: (tnp.sin(c[0]) * 1.1, c[1] + 1),
                           (x, 0))
        return tnp.sum(c[0])
    g = tracer.grad(loss)
    graph = tracer.make_graph(g)(X, np.int64(3))
    assert any(n.kernel == "while" and n.attrs.get("count") for n in graph.nodes)
    check(g, (X, np.int64(3)), (X, np.int64(0)), (X * 2, np.int64(7)))


# ---- cond and switch -------------------------------------------------------------------

def test_cond_runs_each_branch():
    def fun(x, p):
        return lax.cond(p, lambda a, b: (a * 2, b + 1), lambda a, b: (-a, b), x, np.int32(3))
    model = check(fun, (X, True), (X, False), kernels=["cond"])
    assert "If" in _ops(model)


def test_switch_clamps_its_index_over_nested_ifs():
    branches = [lambda a: a + 1, lambda a: a * tnp.sum(a), lambda a: tnp.exp(a), lambda a: -a]
    check(lambda x, i: lax.switch(i, branches, x), *[(X, np.int32(i)) for i in range(-2, 6)],
          kernels=["cond"])
    check(tracer.grad(lambda x, i: tnp.sum(lax.switch(i, branches, x))),
          *[(X, np.int32(i)) for i in range(4)])


# ---- nesting, remat, stop_gradient, dynamic indexing ----------------------------------

def nested(x):
    """A scan whose body runs a fori_loop whose body branches."""
    def outer(c, r):
        inner = lax.fori_loop(0, 3, lambda i, a: lax.cond(
            tnp.sum(a) > 2.0, lambda a: a * 0.5, lambda a: a + r, a), c)
        return inner, tnp.sum(inner * r)
    return lax.scan(outer, x[0], x)


def test_nested_loops_and_their_gradient():
    check(nested, (X,), (X * 4,), kernels=["scan", "cond"])
    check(tracer.grad(lambda x: tnp.sum(nested(x)[1])), (X,), (X * 4,))


def test_checkpoint_and_stop_gradient():
    f = tracer.checkpoint(lambda x: tnp.sin(x) * tnp.cos(x))
    loss = tracer.value_and_grad(lambda x: tnp.sum(f(x) * lax.stop_gradient(x * x)))
    check(loss, (X,), (X * 3,), kernels=["remat", "stop_gradient"])


def test_dynamic_index_and_update_clamp_the_index():
    def fun(x, i):
        return (lax.dynamic_index(x, i), lax.dynamic_update_index(x, i, x[0] * 7),
                lax.dynamic_update_index(x > 0, i.astype(np.int64), x[1] > 0))
    check(fun, *[(X, np.int32(i)) for i in (-5, 0, 2, 3, 9)],
          kernels=["dynamic_index", "dynamic_update_index"])


def test_a_kernel_without_exporter_inside_a_region_is_named(softplus_kernel):
    def fun(x):
        return lax.fori_loop(0, 3, lambda i, c: tracer.run_kernel(softplus_kernel, [c]), x)
    with pytest.raises(tracer.KernelNotFoundError, match=r"'test_softplus'.*f32\[4,3\]"):
        to_onnx(fun, X)


# ---- the RNN example -------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import rnn  # noqa: E402


def test_rnn_loss_and_value_and_grad_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    params = rnn.init_params(8, rng)
    xs, targets = rnn.waves(5, 12, rng)
    xs2, targets2 = rnn.waves(5, 12, rng)
    check(rnn.loss, (params, xs, targets), (params, xs2, targets2), kernels=["scan"])
    step = tracer.value_and_grad(rnn.loss)
    model = check(step, (params, xs, targets), (params, xs2, targets2))
    to_onnx(step, params, xs, targets, path=str(tmp_path / "rnn_step.onnx"))
    assert (tmp_path / "rnn_step.onnx").stat().st_size > 0
    assert "Loop" in _ops(model)


# ---- dynamic batch ---------------------------------------------------------------------

def test_dynamic_batch_through_regions():
    w = np.array([[0.5, -1.0, 2.0]], F32)

    def fun(x):
        rows = lax.map(lambda r: r * tnp.sum(r), x)           # scans over the batch
        c = lax.while_loop(lambda c: tnp.max(tnp.abs(c)) < 10, lambda c: c * 2 + w, x)
        return rows, c, lax.fori_loop(0, 3, lambda i, c: tnp.tanh(c + w), x)
    model = to_onnx(fun, X, dynamic_batch=True)
    for n in (1, 3, 9):
        x = np.linspace(-1, 2, 3 * n, dtype=F32).reshape(n, 3)
        assert_same(run_onnx(model, x), tracer.jit(fun, backend="numpy")(x))


def test_dynamic_batch_error_inside_a_region_names_it():
    def fun(x):
        return lax.fori_loop(0, 2, lambda i, c: c + tnp.mean(tnp.reshape(c, (-1,))), x)
    with pytest.raises(tracer.ShapeError, match="in a region of scan"):
        to_onnx(fun, X, dynamic_batch=True)

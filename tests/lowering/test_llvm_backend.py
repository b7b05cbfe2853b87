"""The llvm backend's contract beyond single ops: fusion visible in .graph and the IR,
user kernels in all three forms, numpy fallback, missing kernels, inlined custom calls,
eager dispatch, and the dump directory."""
import os
import re
import warnings

import numpy as np
import pytest

import registry
import tracer
from tracer.kernels import BUILTIN_KERNELS
import tracer.numpy as tnp
from ir import ShapedArray
from lowering.llvm import IndexMap, KernelEmitter, ScalarKernel, compile_graph


def llvm(f):
    return tracer.jit(f, backend="llvm")


@pytest.fixture
def kernel_name(request):
    """A fresh kernel name, unregistered from every table afterwards."""
    name = "test_" + re.sub(r"\W", "_", request.node.name)
    yield name
    for backend in ("llvm", "numpy"):
        if registry.has_kernel(name, backend):
            registry.unregister_kernel(name, backend)
    registry.unregister_shape_rule(name)


def _group_functions(text):
    """The group functions a module defines (not their entries `<g>.a`)."""
    return re.findall(r'^define [^@]*@"?(g\d+)"?\(', text, flags=re.M)


def test_elementwise_chain_with_broadcasts_is_one_loop_without_temporaries():
    x, y = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    prog = llvm(lambda x, y: tnp.tanh(x * 2 - y) + tnp.transpose(x)[::-1].T * y).lower(x, y)
    assert [n.kernel for n in prog.graph.nodes] == ["fusion"] and prog.steps == ["segment"]
    body = prog.graph.nodes[0].attrs["body"]
    assert {"tanh", "broadcast_to", "transpose", "rev", "mul", "sub", "add"} <= body.kernels()
    text = prog.as_text()
    assert len(_group_functions(text)) == 1
    assert "alloca float" not in text and "call ptr @malloc" not in text
    assert "fusion[" in str(prog.graph) and "body=" in str(prog.graph)


def test_reduction_fuses_its_elementwise_producers():
    x = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
    prog = llvm(lambda x: tnp.sum(tnp.exp(x) * 3.0, axis=1)).lower(x)
    (node,) = prog.graph.nodes
    assert node.kernel == "fusion" and node.attrs["kind"] == "reduce_sum"
    assert {"exp", "mul", "reduce_sum"} <= node.attrs["body"].kernels()
    np.testing.assert_allclose(prog.run([x])[0], (np.exp(x) * 3).sum(1), rtol=1e-5)


def test_user_scalar_kernel_fuses_into_its_neighbours_loop(kernel_name):
    registry.register_shape_rule(kernel_name, lambda x: x)
    registry.register_kernel(kernel_name, "numpy", lambda x: x * x + 1)
    registry.register_kernel(kernel_name, "llvm", ScalarKernel(
        lambda ctx, x: ctx.b.fadd(ctx.b.fmul(x, x, name="user_square"), ctx.const(1.0))))
    x = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4)
    f = llvm(lambda x: tnp.exp(tracer.run_kernel(kernel_name, [x + 1.0])) * 2.0)
    np.testing.assert_allclose(f(x), np.exp((x + 1) ** 2 + 1) * 2, rtol=1e-5)
    text = f.lower(x).as_text()
    (group,) = _group_functions(text)
    body = text[text.index(f'@"{group}"'):]
    body = body[:body.index("\n}")]
    # the user's body sits in the same loop as its producer (add) and consumers (exp, mul)
    assert "user_square" in body and "fadd" in body and "tracer.exp.f32" in body
    assert body.count("store float") == 1


def test_user_index_map_and_kernel_emitter(kernel_name):
    """A gather (every other element, reversed) and a whole kernel (row sums of squares)."""
    registry.register_shape_rule(kernel_name, lambda x: ShapedArray((x.shape[0] // 2,), x.dtype))
    registry.register_kernel(kernel_name, "llvm", IndexMap(
        lambda ctx, index, read: read(0, ctx.index(ctx.in_avals[0].shape, multi=[
            ctx.b.sub(ctx.const(ctx.in_avals[0].shape[0] - 1, np.int64),
                      ctx.b.mul(index.multi[0], ctx.const(2, np.int64)))]))))
    x = np.arange(10, dtype=np.float64)
    np.testing.assert_array_equal(llvm(lambda x: tracer.run_kernel(kernel_name, [x * 2]) + 1)(x),
                                  (x * 2)[::-1][::2] + 1)

    def rowsq(ctx, ins, outs):
        (x,), (out,), b = ins, outs, ctx.b
        with ctx.nest(out.aval.shape, parallel=True) as om:
            acc = ctx.slot(ctx.const(0.0))
            with ctx.loop(0, x.aval.shape[1]) as j:
                v = x.read(om + [j])
                b.store(b.fadd(b.load(acc), b.fmul(v, v)), acc)
            out.store(om, b.load(acc))
    name2 = kernel_name + "_rows"
    registry.register_shape_rule(name2, lambda x: ShapedArray(x.shape[:1], x.dtype))
    registry.register_kernel(name2, "llvm", KernelEmitter(
        rowsq, parallel=lambda ins, outs: outs[0].shape[0]))
    try:
        m = np.arange(12.0).reshape(3, 4)
        np.testing.assert_allclose(llvm(lambda m: tracer.run_kernel(name2, [m - 1.0]))(m),
                                   ((m - 1) ** 2).sum(1))
    finally:
        registry.unregister_kernel(name2, "llvm")
        registry.unregister_shape_rule(name2)


def test_kernel_without_llvm_impl_runs_numpy_inside_the_program_and_warns_once(kernel_name):
    calls = []

    def cumsum(x):
        calls.append(x.shape)
        return np.cumsum(x, axis=-1).astype(x.dtype)
    registry.register_shape_rule(kernel_name, lambda x: x)
    registry.register_kernel(kernel_name, "numpy", cumsum)
    x = np.random.default_rng(0).uniform(size=(3, 5)).astype(np.float32)
    f = llvm(lambda x: tnp.exp(tracer.run_kernel(kernel_name, [x * 2.0])) + 1.0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = f(x)
        f(x + 1)
        llvm(lambda x: tracer.run_kernel(kernel_name, [x]))(x)
    np.testing.assert_allclose(got, np.exp(np.cumsum(x * 2, -1)) + 1, rtol=1e-5)
    mine = [str(m.message) for m in w if kernel_name in str(m.message)]
    assert len(mine) == 1 and "numpy" in mine[0]
    assert len(calls) == 3
    prog = f.lower(x)
    assert [n.kernel for n in prog.graph.nodes] == ["fusion", kernel_name, "fusion"]
    assert prog.steps == ["segment", "python", "segment"]


def test_exception_in_fallback_kernel_propagates(kernel_name):
    def boom(x):
        raise ValueError("boom from the user kernel")
    registry.register_shape_rule(kernel_name, lambda x: x)
    registry.register_kernel(kernel_name, "numpy", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(tracer.KernelError, match="boom from the user kernel"):
            llvm(lambda x: tracer.run_kernel(kernel_name, [x]) + 1)(np.ones(3))


def test_kernel_no_backend_has_fails_before_anything_runs(kernel_name):
    ran = []
    registry.register_shape_rule(kernel_name, lambda x: x)
    registry.register_shape_rule(kernel_name + "_spy", lambda x: x)
    registry.register_kernel(kernel_name + "_spy", "numpy", lambda x: ran.append(1) or x)
    try:
        f = llvm(lambda x: tracer.run_kernel(
            kernel_name, [tracer.run_kernel(kernel_name + "_spy", [x])]))
        with pytest.raises(tracer.KernelNotFoundError, match=kernel_name):
            f(np.ones(3))
        assert ran == []
    finally:
        registry.unregister_kernel(kernel_name + "_spy", "numpy")
        registry.unregister_shape_rule(kernel_name + "_spy")


def test_custom_vjp_is_inlined_and_differentiates():
    @tracer.custom_vjp
    def f(x):
        return tnp.sin(x) * 2.0

    f.defvjp(lambda x: (tnp.sin(x) * 2.0, x), lambda x, g: (g * 2.0 * tnp.cos(x),))
    x = np.linspace(0, 1, 7)
    prog = llvm(lambda x: f(x) + 1.0).lower(x)
    assert "custom_call" not in prog.graph.kernels()
    np.testing.assert_allclose(prog.run([x])[0], np.sin(x) * 2 + 1, rtol=1e-12)
    g = llvm(tracer.grad(lambda x: tnp.sum(f(x) * x)))(x)
    np.testing.assert_allclose(g, 2 * np.cos(x) * x + 2 * np.sin(x), rtol=1e-12)


def test_eager_llvm_backend():
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    old = tracer.get_backend()
    tracer.set_backend("llvm")
    try:
        got = (tnp.exp(x), tnp.sum(x, axis=0), tnp.argmax(x, axis=1), x @ x.T, x[1:, ::2])
    finally:
        tracer.set_backend(old)
    want = (np.exp(x), x.sum(0), x.argmax(1), x @ x.T, x[1:, ::2])
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_compile_graph_program_interface():
    graph = tracer.make_graph(lambda x, y: (x * y, tnp.sum(x)))(np.ones(3), np.ones(3))
    prog = compile_graph(graph)
    assert prog.backend == "llvm" and prog.as_text().startswith("; ModuleID")
    a, s = prog.run([np.arange(3.0), np.full(3, 2.0)])
    np.testing.assert_array_equal(a, [0, 2, 4])
    assert s == 3.0


def test_dump_dir_gets_ir_optimized_ir_and_assembly(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    x = np.arange(5, dtype=np.float32) + np.float32(0.25)   # a module no other test builds
    llvm(lambda x: tnp.sqrt(x) * 7.0 - 0.125)(x)
    files = sorted(p.name for p in tmp_path.iterdir())
    exts = {f.split(".", 1)[1] for f in files}
    assert exts == {"ll", "opt.ll", "s"}
    asm = next(p for p in tmp_path.iterdir() if p.name.endswith(".s")).read_text()
    assert "sqrt" in asm
    assert os.path.getsize(next(tmp_path.glob("*.opt.ll"))) > 0


def test_every_builtin_kernel_has_an_llvm_impl():
    assert [k for k in BUILTIN_KERNELS if not registry.has_kernel(k, "llvm")] == []


def test_plain_callable_is_a_scalar_body_and_bad_bodies_fail_clearly(kernel_name):
    registry.register_shape_rule(kernel_name, lambda x: x)
    registry.register_kernel(kernel_name, "llvm", lambda ctx, x: ctx.b.fsub(x, ctx.const(0.5)))
    x = np.arange(4.0)
    np.testing.assert_array_equal(llvm(lambda x: tracer.run_kernel(kernel_name, [x]))(x), x - 0.5)
    registry.register_kernel(kernel_name, "llvm", lambda ctx, x: ctx.b.fcmp_ordered(">", x, x))
    with pytest.raises(tracer.CodegenError, match=f"{kernel_name}.*expected double"):
        llvm(lambda x: tracer.run_kernel(kernel_name, [x]))(x)


def test_inline_calls_pass_handles_repeated_and_nested_calls_and_consts():
    from ir.passes import inline_calls
    from lowering.interpreter import evaluate

    @tracer.custom_vjp
    def inner(x):
        return x * np.arange(3.0)                       # a const inside the sub-graph

    inner.defvjp(lambda x: (x * np.arange(3.0), None), lambda r, g: (g * np.arange(3.0),))

    @tracer.custom_vjp
    def outer(x):
        return inner(x) + inner(x * 2.0)

    outer.defvjp(lambda x: (inner(x) + inner(x * 2.0), None), lambda r, g: (g * 3.0,))
    graph = tracer.make_graph(lambda x: outer(x) * outer(x + 1.0))(np.ones(3))
    flat = inline_calls(graph)
    assert "custom_call" in graph.kernels() and "custom_call" not in flat.kernels()
    flat.verify()
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(evaluate(flat, [x]), evaluate(graph, [x]))
    np.testing.assert_allclose(llvm(lambda x: outer(x) * outer(x + 1.0))(x),
                               evaluate(graph, [x])[0], rtol=1e-12)

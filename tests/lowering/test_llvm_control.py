"""Control flow compiled natively by the llvm backend (lowering.llvm.control): every
region primitive against the numpy interpreter on the same graph, with no Python step
in the program; the fallback when a body needs one; errors from inside a body; compile
output independent of the trip count; no stale graph-cache hits across bodies."""
import gc
import re
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import registry
from ir import Graph
import tracer
import tracer.numpy as tnp
from lowering.llvm import compile_graph, control, graph_cache
from lowering.settings import settings
from tracer import lax

RNG = np.random.default_rng(0)
V = RNG.standard_normal(8).astype(np.float32)
W = (RNG.standard_normal((8, 8)) / 4).astype(np.float32)
XS = RNG.standard_normal((5, 8)).astype(np.float32)


def check(f, *args, rtol=1e-5):
    """f under jit on llvm equals f on the numpy backend; the program has no Python
    step; returns the llvm Program."""
    fast, ref = tracer.jit(f, backend="llvm"), tracer.jit(f, backend="numpy")
    got, want = fast(*args), ref(*args)
    for g, w in zip(_leaves(got), _leaves(want)):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)
    prog = fast.lower(*args)
    assert "python" not in prog.steps, prog.steps
    return prog


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytree_carry_and_xs_forward_and_reverse(reverse):
    def f(v, xs, w):
        def step(c, x):
            h = tnp.tanh(c["h"] @ w + x["a"]) * 0.5 + x["b"]
            return {"h": h, "n": c["n"] + 1}, (h.sum(), h * 2)
        return lax.scan(step, {"h": v, "n": 0}, {"a": xs, "b": xs[::-1]}, reverse=reverse)
    check(f, V, XS, W)


def test_fori_loop_and_nested_loops_and_fusion_inside_the_body():
    prog = check(lambda x, w: lax.fori_loop(0, 50, lambda i, v: tnp.tanh(v @ w) + x, x), V, W)
    assert prog.steps == ["segment"]

    def nested(v, xs):
        def outer(c, x):
            inner = lax.fori_loop(0, 3, lambda i, u: tnp.sin(u * 1.5 + x) - u * 0.25, c)
            return inner, inner.sum()
        return lax.scan(outer, v, xs)
    check(nested, V, XS)
    # an elementwise chain in a body is one fused loop: one group function in the region
    text = tracer.jit(lambda v: lax.scan(lambda u, _: (tnp.exp(u * 2 + 1) * 3 - u, None), v,
                                         length=4)[0], backend="llvm").lower(V).as_text()
    assert len(re.findall(r"^define [^@]*@\"?g\d+\.body\.g\d+\"?\(", text, re.M)) == 1


def test_while_with_data_dependent_trip_count_including_zero_trips():
    def f(x, limit):
        return lax.while_loop(lambda c: c[1] < limit,
                              lambda c: (c[0] * 1.5 + 1, c[1] + c[0].sum()),
                              (x, np.float32(0)))
    for limit in (np.float32(-1), np.float32(0), np.float32(40.0)):
        check(f, np.abs(V), limit)
    check(lambda lo, x: lax.fori_loop(lo, 7, lambda i, v: v * 0.5 + tnp.astype(i, np.float32), x),
          np.int64(2), V)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_and_switch_take_each_branch(pred):
    check(lambda p, x: lax.cond(p, lambda a: tnp.sin(a) * 2, lambda a: a - 1, x),
          np.bool_(pred), V)
    for k in (-3, 0, 1, 2, 9):
        check(lambda i, x: lax.switch(i, [lambda a: a + 1, lambda a: tnp.exp(a), lambda a: a @ W],
                                      x), np.int32(k), V)


def test_grad_of_scan_and_of_while_run_natively():
    def loss(w, v):
        c, ys = lax.scan(lambda c, x: (tnp.tanh(c @ w + x), (c * x).sum()), v, XS)
        return c.sum() + ys.sum()
    check(tracer.grad(loss), W, V, rtol=1e-4)

    def wloss(v):
        return lax.while_loop(lambda c: c[1] < 4, lambda c: (tnp.sin(c[0]) * 1.1, c[1] + 1),
                              (v, 0))[0].sum()
    check(tracer.grad(wloss), V, rtol=1e-4)


def test_empty_and_zero_d_carries_and_zero_length_scan():
    check(lambda s: lax.fori_loop(0, 6, lambda i, c: c * 2.0 + 1.0, s), np.float64(0.5))
    check(lambda e, v: lax.scan(lambda c, x: ((c[0] + 1, c[1]), x * 2), (e, v), XS),
          np.zeros((0, 3)), V)
    check(lambda v, xs: lax.scan(lambda c, x: (c + x, c * x), v, xs), V, XS[:0])


def test_remat_stop_gradient_and_dynamic_index_compile_natively():
    f = tracer.checkpoint(lambda x, w: tnp.tanh(x @ w) * 2)
    check(tracer.grad(lambda x, w: f(x, w).sum() + lax.stop_gradient(x).sum()), V, W)
    check(lambda xs, i, v: (lax.dynamic_index(xs, i) * 2,
                            lax.dynamic_update_index(xs, i, v)), XS, np.int32(3), V)
    for i in (-4, 12):      # clamped into range, as the numpy kernels do
        check(lambda xs, i, v: lax.dynamic_update_index(xs, i, lax.dynamic_index(xs, i) + v),
              XS, np.int64(i), V)


def test_threaded_groups_inside_a_body_run_single_threaded(monkeypatch):
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    monkeypatch.setattr(settings, "parallel_ns", 0)
    big = RNG.standard_normal((64, 64)).astype(np.float32)
    prog = check(lambda m: lax.fori_loop(0, 3, lambda i, a: tnp.tanh(a @ m) + a.sum(0), m), big,
                 rtol=1e-4)
    assert prog.steps == ["segment"]


def test_body_with_a_python_only_kernel_falls_back_with_a_warning():
    name = "test_control_numpy_only"
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", lambda x: x[::-1] * 2)
    try:
        f = lambda v: lax.fori_loop(0, 3, lambda i, u: tracer.run_kernel(name, [u]) + 1, v)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prog = tracer.jit(f, backend="llvm").lower(V)
        assert any(name in str(w.message) for w in caught)
        assert prog.steps == ["python"]
        np.testing.assert_allclose(tracer.jit(f, backend="llvm")(V), tracer.jit(
            f, backend="numpy")(V), rtol=1e-6)
    finally:
        registry.unregister_kernel(name, "numpy")
        registry.unregister_shape_rule(name)


def test_errors_inside_a_body_reach_the_user():
    def f(x, i):
        return lax.fori_loop(0, 3, lambda k, c: c + tnp.take(x, i + k, axis=0).sum(0), x[0])
    f = tracer.jit(f, backend="llvm")
    np.testing.assert_allclose(f(XS, np.array([0, 1])), XS[0] + XS[[0, 1]].sum(0) +
                               XS[[1, 2]].sum(0) + XS[[2, 3]].sum(0))
    with pytest.raises(IndexError, match=r"take: index 5 is out of bounds for axis 0 of size 5"):
        f(XS, np.array([0, 3]))


def test_module_text_does_not_depend_on_the_trip_count():
    def text(n):
        g = lambda x, w: lax.fori_loop(0, n, lambda i, v: tnp.tanh(v @ w) + x, x)  # noqa: E731
        return tracer.jit(g, backend="llvm").lower(V, W).as_text()
    short, long = text(10).split("\n"), text(100_000).split("\n")
    changed = [(a, b) for a, b in zip(short, long) if a != b]
    assert len(short) == len(long) and 1 <= len(changed) <= 2
    assert all(a.endswith(", 10") and b == a[:-2] + "100000" for a, b in changed)


def test_region_graphs_are_graph_cached_by_their_bodies_which_never_mix():
    a = tracer.jit(lambda v: lax.fori_loop(0, 3, lambda i, u: u * 2, v), backend="llvm")
    b = tracer.jit(lambda v: lax.fori_loop(0, 3, lambda i, u: u + 2, v), backend="llvm")
    np.testing.assert_allclose(a(V), V * 8, rtol=1e-6)
    np.testing.assert_allclose(b(V), V + 6, rtol=1e-6)
    keys = {graph_cache.key_of(tracer.make_graph(
        lambda v: lax.fori_loop(0, 3, body, v))(V)) for body in (lambda i, u: u * 2,
                                                                lambda i, u: u + 2)}
    assert None not in keys and len(keys) == 2


def test_eager_llvm_runs_region_nodes_and_concurrent_calls_keep_their_own_carries():
    tracer.set_backend("llvm")
    try:
        c, ys = lax.scan(lambda c, x: (c * 0.5 + x, c.sum()), V, XS)
    finally:
        tracer.set_backend("numpy")
    want = lax.scan(lambda c, x: (c * 0.5 + x, c.sum()), V, XS)
    np.testing.assert_allclose(c, want[0], rtol=1e-6)
    np.testing.assert_allclose(ys, want[1], rtol=1e-5)
    f = tracer.jit(lambda v: lax.fori_loop(0, 200, lambda i, u: tnp.sin(u) + v, v), backend="llvm")
    inputs = [V * k for k in range(8)]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(f, inputs * 4))
    for g, v in zip(got, inputs * 4):
        np.testing.assert_array_equal(g, f(v))


def test_bodies_returning_literals_inputs_constants_and_one_value_twice():
    table = np.arange(8.0, dtype=np.float32)

    def f(v, xs):
        def step(c, x):
            h = c[0] * 0.5 + x + table
            return (h, c[0] > 0), (h, h, np.float32(1), x, table, c[1])
        return lax.scan(step, (v, v > 0), xs)
    check(f, V, XS)
    check(lambda v: lax.while_loop(lambda c: c[1], lambda c: (c[0] + 1, c[0].sum() < 20),
                                   (v, True)), V)


def test_a_loop_writes_one_slot_of_a_carried_buffer_in_place():
    def f(buf, n):
        def body(i, c):
            b, s = c
            new = lax.dynamic_update_index(b, i, lax.dynamic_index(b, i - 1) * 2 + s)
            return new, s + b.sum()         # reads the buffer before this iteration's write
        return lax.fori_loop(1, n, body, (buf, np.float32(0)))
    tape = RNG.standard_normal((6, 3)).astype(np.float32)
    for n in (np.int64(0), np.int64(4), np.int64(9)):
        check(f, tape, n)
    check(lambda buf: f(buf, 5), tape)      # static bounds: a scan
    loop = [n for n in tracer.make_graph(f)(tape, np.int64(3)).nodes if n.kernel == "while"][0]
    assert control.loop_body(loop.attrs["body"], loop.attrs["n_body"], 3)[1] == [1]


def test_compiled_regions_are_freed_with_their_graph():
    def graphs():
        gc.collect()
        return sum(isinstance(o, Graph) for o in gc.get_objects())
    before = graphs()
    for k in range(10):
        g = tracer.make_graph(lambda v: lax.fori_loop(0, 3, lambda i, u: u * k, v))(V)
        np.testing.assert_allclose(compile_graph(g).run([V])[0], V * k ** 3, rtol=1e-6)
    del g
    assert graphs() - before < 5, graphs() - before


def test_dynamic_index_of_an_empty_axis_raises_instead_of_reading_out_of_bounds():
    f = tracer.jit(lambda x, i: lax.dynamic_index(x, i), backend="llvm")
    with pytest.raises(tracer.TracerError, match=r"dynamic_index: axis 0 of f32\[0,3\] is empty"):
        f(np.zeros((0, 3), np.float32), np.int32(0))

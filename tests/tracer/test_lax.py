"""tracer.lax: each control-flow primitive eagerly, under jit on both backends, under
grad/vjp/jvp and their nests, against unrolled Python references and finite differences."""
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import grad, jit, jvp, lax, make_graph, vjp
from tracer.lax import loops

X = np.array([0.3, 1.2, -0.7])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.2, 0.6]])
XS = np.stack([X, 2 * X, X * X, -X])


def rnn_step(c, x):
    return tnp.tanh(W @ c + x), c * x


def f_scan(x):
    return tnp.sum(lax.scan(rnn_step, x, XS * x)[0])


def ref_scan(x):
    c = x
    for xi in XS * x:
        c = np.tanh(W @ c + xi)
    return np.sum(c)


def f_scan_ys(x):
    return tnp.sum(lax.scan(rnn_step, x, XS, reverse=True)[1] ** 2)


def ref_scan_ys(x):
    c, ys = x, [None] * len(XS)
    for k in reversed(range(len(XS))):
        c, ys[k] = np.tanh(W @ c + XS[k]), c * XS[k]
    return np.sum(np.stack(ys) ** 2)


def f_cond(x):
    return tnp.sum(lax.cond(tnp.sum(x) > 0, lambda a: tnp.sin(a) * a, tnp.cos, x))


def ref_cond(x):
    return np.sum(np.sin(x) * x if np.sum(x) > 0 else np.cos(x))


def f_switch(x):
    branches = [tnp.sin, lambda a: a * x[0], lambda a: tnp.exp(a) * W[0]]
    return tnp.sum(lax.switch(tnp.argmax(x), branches, x))


def ref_switch(x):
    return np.sum([np.sin(x), x * x[0], np.exp(x) * W[0]][int(np.argmax(x))])


def f_fori(x):
    return tnp.sum(lax.fori_loop(0, 4, lambda i, v: tnp.sin(v) * (i + 1.0) + x, x))


def ref_fori(x):
    v = x
    for i in range(4):
        v = np.sin(v) * (i + 1.0) + x
    return np.sum(v)


def f_while(x):
    def body(v):
        return tnp.sin(v[0]) + x * v[0], v[1] + 1
    return tnp.sum(lax.while_loop(lambda v: v[1] < 5, body, (x, 0))[0])


def ref_while(x):
    v = x
    for _ in range(5):
        v = np.sin(v) + x * v
    return np.sum(v)


def f_fori_traced(x):
    n = tnp.astype(tnp.sum(x > 0) + 2, np.int32)       # a data-dependent trip count
    return tnp.sum(lax.fori_loop(1, n, lambda i, v: v * tnp.cos(v) + i * 0.1, x))


def ref_fori_traced(x):
    v = x
    for i in range(1, int(np.sum(x > 0)) + 2):
        v = v * np.cos(v) + i * 0.1
    return np.sum(v)


CASES = [(f_scan, ref_scan), (f_scan_ys, ref_scan_ys), (f_cond, ref_cond),
         (f_switch, ref_switch), (f_fori, ref_fori), (f_while, ref_while),
         (f_fori_traced, ref_fori_traced)]
IDS = [f.__name__ for f, _ in CASES]


def llvm(f):
    g = jit(f)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "no llvm impl: runs through its numpy kernel"
            return g(*args)
    return run


@pytest.mark.parametrize("f, ref", CASES, ids=IDS)
def test_value_eager_jit_numpy_and_llvm(f, ref):
    for x in (X, -X):
        want = ref(x)
        np.testing.assert_allclose(f(x), want, rtol=1e-12)
        np.testing.assert_allclose(jit(f, backend="numpy")(x), want, rtol=1e-12)
        np.testing.assert_allclose(llvm(f)(x), want, rtol=1e-12)


@pytest.mark.parametrize("f, ref", CASES, ids=IDS)
def test_gradients_match_finite_differences_to_second_order(f, ref):
    """Forward mode is reverse mode transposed twice, so for a while loop (whose gradient
    is three nested loops) jvp of jvp nests that four deep: its second order is checked
    in reverse mode only, which is quick (both modes agree at first order)."""
    slow = f in (f_while, f_fori_traced)
    for x in (X, -X):
        tracer.check_grads(f, (x,), order=1)
        tracer.check_grads(f, (x,), order=2, modes=("rev",) if slow else ("fwd", "rev"))


@pytest.mark.parametrize("f, ref", CASES, ids=IDS)
def test_nested_transforms(f, ref):
    g = grad(f)(X)
    np.testing.assert_allclose(jit(grad(f), backend="numpy")(X), g, rtol=1e-12)
    np.testing.assert_allclose(llvm(grad(f))(X), g, rtol=1e-12)
    np.testing.assert_allclose(grad(jit(f, backend="numpy"))(X), g, rtol=1e-12)
    out, vjp_fn = vjp(f, X)
    np.testing.assert_allclose(vjp_fn(1.0)[0], g, rtol=1e-12)
    v = np.array([0.2, -0.5, 1.0])
    np.testing.assert_allclose(jvp(f, (X,), (v,))[1], g @ v, rtol=1e-10)
    hv = jvp(grad(f), (X,), (v,))[1]                    # forward over reverse
    hv2 = grad(lambda x: tnp.sum(grad(f)(x) * v))(X)    # reverse over reverse
    np.testing.assert_allclose(hv, hv2, rtol=1e-9, atol=1e-12)


def test_eager_loops_trace_their_body_once():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, c
    carry, ys = lax.scan(body, 0.0, np.arange(100.0))
    assert carry == 4950.0 and ys[-1] == 4851.0 and len(calls) == 1
    calls.clear()
    assert lax.fori_loop(0, 1000, lambda i, v: (calls.append(1), v + i)[1], 0) == 499500
    assert len(calls) == 1


def test_scan_pytrees_length_and_weak_carry():
    xs = {"a": np.ones((4, 2), np.float32), "b": (np.arange(4.0, dtype=np.float32),)}
    carry, ys = lax.scan(lambda c, x: ((c[0] + x["a"], c[1] * 2), x["b"][0] + c[1]),
                         (np.zeros(2, np.float32), 1), xs)
    assert carry[0].dtype == np.float32 and carry[1] == 16
    np.testing.assert_array_equal(ys, [1, 3, 6, 11])
    # a Python-float carry takes the body's dtype (as in JAX), not float64
    c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, np.ones(3, np.float32))
    assert c.dtype == np.float32 and c == 3
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=5)
    assert c == 32 and list(ys) == [1, 2, 4, 8, 16]
    assert lax.map(lambda x: x["a"].sum(), xs).shape == (4,)
    assert make_graph(lambda x: lax.scan(lambda c, x: (c, x), 0.0, x, unroll=2))(
        X).nodes[0].attrs["unroll"] == 2


def test_fori_loop_static_bounds_scan_and_traced_bounds_while():
    static = make_graph(lambda x: lax.fori_loop(0, 10, lambda i, v: v + i, x))(X)
    assert [n.kernel for n in static.nodes] == ["scan"]
    traced = make_graph(lambda x, n: lax.fori_loop(0, n, lambda i, v: v + i, x))(X, 10)
    assert "while" in traced.kernels() and "scan" not in traced.kernels()
    assert lax.fori_loop(5, 2, lambda i, v: v + i, 1.0) == 1.0     # empty range
    f = jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2, x), backend="numpy")
    assert f(1.0, 10) == 1024.0 and f(1.0, 0) == 1.0


def test_type_errors_show_both_types_and_the_line():
    with pytest.raises(tracer.DTypeError, match=r"cond: false_fun's output has type "
                       r"\(f64\[3\],\) but true_fun's output has type \(f64\[3\], f64\[3\]\)"
                       r".*test_lax.py:\d+"):
        lax.cond(True, lambda a: (a, a), lambda a: (a,), X)
    with pytest.raises(tracer.DTypeError, match=r"scan: the carry f returns has type "
                       r"f64\[2\] but its input carry has type f64\[3\].*test_lax.py"):
        lax.scan(lambda c, x: (c[:2], x), X, XS)
    with pytest.raises(tracer.DTypeError, match=r"while_loop: cond_fun must return a "
                       r"boolean scalar, got \['f64\[3\]'\]"):
        lax.while_loop(lambda v: v, lambda v: v, X)
    with pytest.raises(tracer.ShapeError, match=r"length"):
        lax.scan(lambda c, x: (c, x), X, XS, length=7)


def test_if_on_a_traced_value_suggests_lax_cond():
    with pytest.raises(tracer.ConcretizationError, match=r"tracer.lax.cond"):
        jit(lambda x: x if x.sum() > 0 else -x, backend="numpy")(X)


def test_stop_gradient():
    f = lambda x: tnp.sum(x * lax.stop_gradient(x * x))      # noqa: E731
    np.testing.assert_allclose(grad(f)(X), X * X)
    np.testing.assert_allclose(lax.stop_gradient({"a": X})["a"], X)
    np.testing.assert_allclose(llvm(grad(f))(X), X * X)


def test_dynamic_index_and_update():
    buf = np.zeros((4, 3))
    np.testing.assert_array_equal(lax.dynamic_update_index(buf, 9, X)[3], X)   # clamped
    np.testing.assert_array_equal(lax.dynamic_index(XS, -2), XS[-2])   # as jax
    f = lambda b, v: tnp.sum(lax.dynamic_update_index(b, 1, v) ** 2 * lax.dynamic_index(  # noqa
        b, 2)[0])
    tracer.check_grads(f, (XS, X), order=2)


def test_while_reverse_mode_recomputes_segments_beyond_the_checkpoints(monkeypatch):
    """With room for 3 checkpoints a 10-step loop is split into segments of 4 steps,
    each recomputed from its checkpoint: the gradient is still exact."""
    monkeypatch.setattr(loops, "MAX_CHECKPOINTS", 3)

    def f(x):
        return tnp.sum(lax.while_loop(lambda v: v[1] < 10,
                                      lambda v: (tnp.sin(v[0]) * 1.1 + x, v[1] + 1),
                                      (x, 0))[0])

    def unrolled(x):
        v = x
        for _ in range(10):
            v = tnp.sin(v) * 1.1 + x
        return tnp.sum(v)
    np.testing.assert_allclose(grad(f)(X), grad(unrolled)(X), rtol=1e-12)
    tracer.check_grads(f, (X,), order=1)


def test_eager_on_the_llvm_backend():
    tracer.set_backend("llvm")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_allclose(f_scan(X), ref_scan(X), rtol=1e-12)
            np.testing.assert_allclose(grad(f_while)(X), grad(ref_while_traced)(X), rtol=1e-12)
    finally:
        tracer.set_backend("numpy")


def ref_while_traced(x):
    v = x
    for _ in range(5):
        v = tnp.sin(v) + x * v
    return tnp.sum(v)


def test_a_kernel_without_gradient_fails_before_running_unless_a_custom_rule_covers_it():
    from grad_helpers import registry_snapshot
    with registry_snapshot() as reg:
        reg.register_shape_rule("test_nograd", lambda x: x)
        reg.register_kernel("test_nograd", "numpy", lambda x: x * 3)
        raw = lambda x: tracer.run_kernel("test_nograd", [x])     # noqa: E731

        @tracer.custom_vjp
        def triple(x):
            return raw(x)
        triple.defvjp(lambda x: (triple(x), None), lambda _, dy: (dy * 3,))
        f = lambda x: tnp.sum(lax.scan(lambda c, _: (triple(c) * c, None), x, None,  # noqa
                                       length=2)[0])
        np.testing.assert_allclose(grad(f)(X), 4 * 27 * X ** 3)
        g = lambda x: tnp.sum(lax.scan(lambda c, _: (raw(c), None), x, None,  # noqa
                                       length=2)[0])
        with pytest.raises(tracer.GradientNotFoundError, match="test_nograd"):
            grad(g)(X)


def test_reverse_mode_runs_one_forward_scan_that_stores_the_carries():
    scans = [n for n in make_graph(grad(f_scan))(X).nodes if n.kernel == "scan"]
    assert [n.attrs["reverse"] for n in scans] == [False, True]
    # its carry and the stacked carries: the ys nothing reads were pruned with their work
    assert [str(o.aval) for o in scans[0].outputs] == ["f64[3]", "f64[4,3]"]
    body = scans[0].attrs["body"]
    assert body.outvars[1] is body.invars[0]
    kernels = [n.kernel for n in body.nodes]
    assert kernels.count("matmul") == 1 and "mul" not in kernels  # W @ c; c * x is gone


def test_llvm_compiles_region_nodes_natively():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no numpy fallback, no warning
        program = jit(lambda x: f_while(x) + f_cond(x)).lower(X)
    assert program.steps == ["segment"]


def test_a_loop_updates_its_buffer_in_place_without_changing_inputs_or_views():
    buf = np.zeros((4, 2))

    def body(c):
        i, b, before = c
        return i + 1, lax.dynamic_update_index(b, i, lax.dynamic_index(b, i - 1) + 1), \
            tnp.reshape(b, (8,))                 # a view of the buffer before the write
    for f in (lambda b: lax.while_loop(lambda c: c[0] < 4, body, (0, b, tnp.zeros(8))),
              jit(lambda b: lax.while_loop(lambda c: c[0] < 4, body, (0, b, tnp.zeros(8))),
                  backend="numpy")):
        i, b, before = f(buf)
        np.testing.assert_array_equal(b[:, 0], [1, 2, 3, 4])
        np.testing.assert_array_equal(before, [1, 1, 2, 2, 3, 3, 0, 0])
        assert not buf.any()


def test_checkpoint_recomputes_in_the_backward_instead_of_storing():
    def block(x):
        return tnp.sin(tnp.exp(x) * W[0])
    f = lambda x: tnp.sum(tracer.checkpoint(block)(x) * x)     # noqa: E731
    plain = lambda x: tnp.sum(block(x) * x)                    # noqa: E731
    np.testing.assert_allclose(grad(f)(X), grad(plain)(X), rtol=1e-12)
    np.testing.assert_allclose(f(X), plain(X))
    tracer.check_grads(f, (X,), order=2)
    g = make_graph(grad(f))(X)
    (node,) = [n for n in g.nodes if n.kernel == "remat"]
    assert len(node.outputs) == 1                  # stores nothing for the backward
    assert [n.kernel for n in g.nodes].count("exp") == 1       # the recomputation
    np.testing.assert_allclose(llvm(grad(f))(X), grad(plain)(X), rtol=1e-12)


def test_a_function_given_as_several_branches_is_traced_once():
    traces = []

    def double(x):
        traces.append(1)
        return x * 2
    x = np.ones(2)
    np.testing.assert_array_equal(lax.cond(True, double, double, x), 2 * x)
    np.testing.assert_array_equal(lax.switch(2, [double, lambda v: v, double], x), 2 * x)
    np.testing.assert_array_equal(tracer.jit(lambda p, v: lax.cond(p, double, double, v))(
        False, x), 2 * x)
    assert len(traces) == 3


def test_eager_control_flow_sees_the_values_its_functions_read_now():
    """A function given to an eager cond or while_loop is traced at each call, so a value
    it reads (a rebound global, an array changed in place) is the current one. JAX caches
    the trace and returns the first call's result (5.0 and 2.0 twice, jax 0.10.2)."""
    state = {"data": np.zeros(3), "k": 1.0}

    def body(c):
        return c + state["data"].sum() + 1

    def branch(x):
        return x * state["k"]
    assert lax.while_loop(lambda c: c < 5, body, 0.0) == 5.0
    assert lax.cond(True, branch, branch, 2.0) == 2.0
    state["data"][:] = 10.0
    state["k"] = 5.0
    assert lax.while_loop(lambda c: c < 5, body, 0.0) == 31.0
    assert lax.cond(True, branch, branch, 2.0) == 10.0

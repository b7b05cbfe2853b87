"""vmap of the control-flow primitives (each rule declared with its kernel in tracer.lax):
each rule against a Python loop over the batch, eagerly and under jit on both backends,
with batched / unbatched predicates, operands and carries; composed with grad (both
orders) and jit; and batched as one node of its kind, never by the loop fallback (no
warning, no extra `scan`)."""
import warnings
from unittest import mock

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import grad, jit, lax, make_graph, vmap
from tracer.pytree import flatten

B = 3
RNG = np.random.default_rng(1)


def no_fallback():
    """vmap's loop fallback made an error (its warning is given once per process)."""
    return mock.patch("tracer.vmap.loop_rule", side_effect=AssertionError("loop fallback"))


def run_quiet(f, *args):
    """f(*args) with the llvm backend's "runs through its numpy kernel" notes ignored,
    and vmap's loop fallback an error."""
    with warnings.catch_warnings(), no_fallback():
        warnings.simplefilter("ignore")
        return f(*args)


def loop(fun, args, in_axes):
    """The leaves of fun's output, each stacked over the batch."""
    outs = [flatten(fun(*[a if ax is None else np.take(a, i, axis=ax)
                          for a, ax in zip(args, in_axes)]))[0] for i in range(B)]
    return [np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0]))]


def check(got, want):
    """got (a pytree) leaf by leaf against the list of leaves `want`."""
    got = flatten(got)[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def check_against_loop(fun, args, in_axes):
    want = loop(fun, args, in_axes)
    f = vmap(fun, in_axes=in_axes)
    for b in ("eager", "numpy", "llvm"):
        check(run_quiet(f if b == "eager" else jit(f, backend=b), *args), want)


def batched(shape, axis=0, lo=-1.0, hi=1.0):
    x = RNG.uniform(lo, hi, (B,) + shape)
    return np.moveaxis(x, 0, axis)


def fallback_free_graph(fun, *args, in_axes=0):
    """make_graph(vmap(fun)): no vmap warning may be raised while building it."""
    with warnings.catch_warnings(), no_fallback():
        warnings.simplefilter("error")
        return make_graph(vmap(fun, in_axes=in_axes))(*args)


def top(graph):
    """The kernels of the graph's own nodes (not its regions'), in order."""
    return [n.kernel for n in graph.nodes]


# ---- cond / switch ------------------------------------------------------------------------

def f_cond(p, x):
    return lax.cond(p > 0, lambda a: tnp.sin(a) * a, lambda a: tnp.cos(a) - p, x)


def f_switch(k, x):
    return lax.switch(k, [tnp.sin, lambda a: a * x[0], lambda a: tnp.exp(a) * 2.0], x)


def f_cond_mixed(p, x):
    """One branch returns an unbatched constant, the other a batched value; a pytree."""
    return lax.cond(p > 0, lambda a: (a * 2, tnp.sum(a)), lambda a: (tnp.ones(4), a[1]), x)


P = np.array([0.5, -0.5, 2.0])
K = np.array([0, 2, 1])


@pytest.mark.parametrize("fun,first", [(f_cond, P), (f_switch, K), (f_cond_mixed, P)],
                         ids=["cond", "switch", "mixed"])
@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (None, 1), (0, -1)])
def test_cond_against_a_loop(fun, first, in_axes):
    p = first if in_axes[0] is not None else first[0]
    if in_axes[1] is None:
        x = RNG.uniform(-1, 1, 4)
    else:
        x = batched((4,), in_axes[1] % 2)
    check_against_loop(fun, [p, x], in_axes)


def test_cond_graph_unbatched_index_is_one_cond_batched_index_is_a_select():
    x = batched((4,))
    g = fallback_free_graph(f_cond, 0.5, x, in_axes=(None, 0))
    assert top(g).count("cond") == 1 and "select" not in g.kernels()
    g = fallback_free_graph(f_cond, P, x)
    assert "cond" not in g.kernels() and "scan" not in g.kernels()
    assert "select" in g.kernels()


def test_cond_gradients_both_orders():
    xs = batched((4,))

    def g(p, x):
        return tnp.sum(f_switch(p, x) ** 2) + tnp.sum(f_cond(p - 1, x))
    for ps, axes in ((K, (0, 0)), (1, (None, 0))):
        want = [loop(grad(g, argnums=1), [ps, xs], axes)[0]]
        check(run_quiet(vmap(grad(g, argnums=1), in_axes=axes), ps, xs), want)
        total = grad(lambda v: tnp.sum(vmap(g, in_axes=axes)(ps, v)))
        check(run_quiet(total, xs), want)
        check(run_quiet(jit(total, backend="llvm"), xs), want)


# ---- while_loop ---------------------------------------------------------------------------

def f_while(limit, x):
    """Trip counts differ per lane when `limit` (the predicate) is batched."""
    def body(c):
        i, v = c
        return i + 1, v * 1.5 + tnp.sin(v) / limit     # limit: a cond and a body const
    return lax.while_loop(lambda c: tnp.sum(c[1]) < limit, body, (0, x))


def f_fori_traced(n, x, w=0.5):
    """Batched w alone (a body const) makes the carry batched; the predicate is not."""
    return lax.fori_loop(0, n, lambda i, v: v * 0.9 + tnp.cos(v) * i * w, x)


LIMITS = np.array([3.0, 10.0, 40.0])


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (None, 1), (0, -1)])
def test_while_against_a_loop(in_axes):
    lim = LIMITS if in_axes[0] is not None else 7.0
    x = (RNG.uniform(0.5, 1.0, 2) if in_axes[1] is None else
         batched((2,), in_axes[1] % 2, 0.5, 1.0))
    check_against_loop(f_while, [lim, x], in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0, None), (0, None, None), (None, 0, None),
                                     (None, None, 0), (0, None, 0)])
def test_fori_loop_with_traced_bounds_against_a_loop(in_axes):
    n = np.array([1, 4, 0]) if in_axes[0] is not None else np.array(3)
    x = RNG.uniform(-1, 1, 3) if in_axes[1] is None else batched((3,))
    w = 0.5 if in_axes[2] is None else np.array([0.5, -1.0, 2.0])
    check_against_loop(f_fori_traced, [n, x, w], in_axes)


def test_while_graph_is_one_while_that_selects_per_lane():
    g = fallback_free_graph(f_while, LIMITS, batched((2,)))
    assert top(g).count("while") == 1 and "scan" not in g.kernels()
    (node,) = [n for n in g.nodes if n.kernel == "while"]
    assert "select" in node.attrs["body"].kernels()
    g = fallback_free_graph(f_fori_traced, np.array(3), batched((3,)), in_axes=(None, 0))
    (node,) = [n for n in g.nodes if n.kernel == "while"]
    assert "select" not in node.attrs["body"].kernels()   # unbatched predicate


def g_while(limit, x):
    return tnp.sum(f_while(limit, x)[1] ** 2)


def test_while_gradients_both_orders():
    xs = batched((2,), 0, 0.5, 1.0)
    want = [np.stack([grad(g_while, argnums=1)(lim, x) for lim, x in zip(LIMITS, xs)])]
    per_example = vmap(grad(g_while, argnums=1))
    check(run_quiet(per_example, LIMITS, xs), want)
    check(run_quiet(jit(per_example, backend="numpy"), LIMITS, xs), want)
    total = grad(lambda v: tnp.sum(vmap(g_while)(LIMITS, v)))
    check(run_quiet(total, xs), want)
    check(run_quiet(jit(total, backend="llvm"), xs), want)


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0)])
def test_fori_loop_with_traced_bounds_gradients(in_axes):
    """Unbatched bounds: the trip count autodiff asks for stays one scalar; batched: one
    per lane."""
    n = np.array([1, 4, 0]) if in_axes[0] is not None else np.array(3)
    xs = batched((3,))

    def g(k, x):
        return tnp.sum(f_fori_traced(k, x) ** 2)
    want = loop(grad(g, argnums=1), [n, xs], in_axes)
    check(run_quiet(jit(vmap(grad(g, argnums=1), in_axes=in_axes), backend="numpy"), n, xs),
          want)
    check(run_quiet(grad(lambda v: tnp.sum(vmap(g, in_axes=in_axes)(n, v))), xs), want)


# ---- scan ---------------------------------------------------------------------------------

W = RNG.uniform(-0.5, 0.5, (3, 3))


def f_scan(h, xs, w):
    return lax.scan(lambda c, x: (tnp.tanh(w @ c + x), c * x[0]), h, xs)


def f_scan_reverse_fixed_point(h, xs, w):
    """Carry b only becomes batched through carry a (which a batched x reaches)."""
    def step(c, x):
        a, b = c
        return (a + x, b * 0.5 + a[0]), w[0] * 2.0
    return lax.scan(step, (h, 1.0), xs, reverse=True)


@pytest.mark.parametrize("fun", [f_scan, f_scan_reverse_fixed_point], ids=["rnn", "fixed"])
@pytest.mark.parametrize("in_axes", [(0, 0, None), (None, 0, None), (0, None, None),
                                     (None, None, 0), (None, 1, 0), (-1, -1, None)])
def test_scan_against_a_loop(fun, in_axes):
    shapes = [(3,), (4, 3), (3, 3)]
    defaults = [RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, (4, 3)), W]
    args = [d if ax is None else batched(s, ax % (len(s) + 1))
            for d, s, ax in zip(defaults, shapes, in_axes)]
    check_against_loop(fun, args, in_axes)


def test_scan_graph_is_one_scan_and_unbatched_ys_stay_unbatched():
    xs = batched((4, 3))
    g = fallback_free_graph(f_scan_reverse_fixed_point, np.zeros(3), xs, W,
                            in_axes=(None, 0, None))
    (node,) = [n for n in g.nodes if n.kernel == "scan"]
    assert [str(o.aval) for o in node.outputs] == ["f64[3,3]", "f64[3]", "f64[4,3]"]


def g_scan(h, xs, w):
    return tnp.sum(f_scan(h, xs, w)[0] ** 2)


def test_scan_gradients_both_orders():
    hs, xs = batched((3,)), batched((4, 3))
    want = np.stack([grad(g_scan, argnums=2)(h, x, W) for h, x in zip(hs, xs)])
    check(run_quiet(vmap(grad(g_scan, argnums=2), in_axes=(0, 0, None)), hs, xs, W), [want])
    total = grad(lambda w: tnp.sum(vmap(g_scan, in_axes=(0, 0, None))(hs, xs, w)))
    check(run_quiet(jit(total, backend="numpy"), W), [want.sum(0)])


# ---- dynamic_index / dynamic_update_index / remat / stop_gradient -------------------------

def f_index(x, i):
    return lax.dynamic_index(x, i) * 2.0


def f_update(x, i, v):
    return lax.dynamic_update_index(x, i, tnp.sin(v))


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (-1, 0), (None, 0), (0, None),
                                     (1, None)])
def test_dynamic_index_against_a_loop(in_axes):
    x = RNG.uniform(-1, 1, (5, 2)) if in_axes[0] is None else batched((5, 2), in_axes[0] % 3)
    i = np.array([4, -1, 7]) if in_axes[1] is not None else np.array(2)   # clamped
    check_against_loop(f_index, [x, i], in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (1, 0, None), (None, 0, 0), (-1, None, 0), (1, None, 0),
                                     (None, None, 1), (0, None, None), (None, 0, None)])
def test_dynamic_update_index_against_a_loop(in_axes):
    shapes = [(5, 2), (), (2,)]
    defaults = [RNG.uniform(-1, 1, (5, 2)), np.array(3), RNG.uniform(-1, 1, 2)]
    args = [d if ax is None else (np.array([0, 9, -2]) if s == () else
                                  batched(s, ax % (len(s) + 1)))
            for d, s, ax in zip(defaults, shapes, in_axes)]
    check_against_loop(f_update, args, in_axes)


def test_dynamic_ops_gradients_both_orders():
    xs, idx = batched((5, 2)), np.array([1, 4, 0])

    def g(x, i):
        return tnp.sum(f_update(x, i, f_index(x, i + 1)) ** 2)
    want = [np.stack([grad(g)(x, i) for x, i in zip(xs, idx)])]
    check(run_quiet(vmap(grad(g)), xs, idx), want)
    check(run_quiet(grad(lambda v: tnp.sum(vmap(g)(v, idx))), xs), want)
    kernels = fallback_free_graph(g, xs, idx).kernels()
    assert "scan" not in kernels and "dynamic_update_index" not in kernels


def test_remat_and_stop_gradient():
    def block(x, w):
        return tnp.sin(tnp.exp(x) * w)

    def g(x, w):
        return tnp.sum(tracer.checkpoint(block)(x, w) * lax.stop_gradient(x))
    xs, w = batched((3,)), RNG.uniform(-1, 1, 3)
    check_against_loop(g, [xs, w], (0, None))
    want = [np.stack([grad(g)(x, w) for x in xs])]
    check(run_quiet(vmap(grad(g), in_axes=(0, None)), xs, w), want)
    check(run_quiet(grad(lambda v: tnp.sum(vmap(g, in_axes=(0, None))(v, w))), xs), want)
    assert top(fallback_free_graph(g, xs, w, in_axes=(0, None))).count("remat") == 1


# ---- nesting ------------------------------------------------------------------------------

def test_nested_vmap_of_a_while_and_jit_inside():
    lim = np.stack([LIMITS, LIMITS * 2])
    x = RNG.uniform(0.5, 1.0, (2, B, 2))
    per_row = [loop(f_while, [lim[k], x[k]], (0, 0)) for k in range(2)]
    want = [np.stack(leaves, axis=1) for leaves in zip(*per_row)]
    check(run_quiet(vmap(vmap(jit(f_while, backend="numpy")), in_axes=1), lim, x), want)


def test_while_jvp_both_orders():
    xs, tangents = batched((2,), 0, 0.5, 1.0), batched((2,))
    want = [np.stack([tracer.jvp(lambda v: f_while(lim, v)[1], (x,), (t,))[1]
                      for lim, x, t in zip(LIMITS, xs, tangents)])]
    check(run_quiet(lambda: tracer.jvp(lambda v: vmap(f_while)(LIMITS, v)[1], (xs,),
                                       (tangents,))[1]), want)
    check(run_quiet(vmap(lambda lim, v, t: tracer.jvp(lambda u: f_while(lim, u)[1], (v,),
                                                       (t,))[1]), LIMITS, xs, tangents), want)

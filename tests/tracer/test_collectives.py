"""Collectives over a named axis (tracer.lax.psum...) inside vmap(axis_name=): values
against NumPy (the semantics of jax.lax under jax.vmap), nested names, pytrees, jit on
both backends, gradients against finite differences, errors, and effect nodes."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import cse, dce
from ir.errors import GradientError, KernelError
from tracer import lax

N = 3
RNG = np.random.default_rng(0)
X = RNG.standard_normal((N, 3, 6))          # 3 positions, each a (3, 6) block


def vmap(f, **kw):
    return tracer.vmap(f, axis_name="i", **kw)


def each(n, f):
    """NumPy oracle: the result of position i is f(i), stacked."""
    return np.stack([f(i) for i in range(n)])


def split(x, n, axis):
    return np.split(x, n, axis=axis)


# op, oracle(X) -> per-position results stacked (X: positions on axis 0)
CASES = {
    "psum": (lambda v: lax.psum(v, "i"), lambda X: each(N, lambda i: X.sum(0))),
    "pmean": (lambda v: lax.pmean(v, "i"), lambda X: each(N, lambda i: X.mean(0))),
    "pmax": (lambda v: lax.pmax(v, "i"), lambda X: each(N, lambda i: X.max(0))),
    "pmin": (lambda v: lax.pmin(v, "i"), lambda X: each(N, lambda i: X.min(0))),
    "all_gather": (lambda v: lax.all_gather(v, "i", axis=1),
                   lambda X: each(N, lambda i: np.moveaxis(X, 0, 1))),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                         lambda X: each(N, lambda i: np.concatenate(list(X), axis=1))),
    "psum_scatter": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=0),
                     lambda X: each(N, lambda i: X.sum(0)[i])),
    "psum_scatter_tiled": (
        lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
        lambda X: each(N, lambda i: split(X.sum(0), N, 1)[i])),
    "ppermute": (lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
                 lambda X: X[[2, 0, 1]]),
    "ppermute_partial": (lambda v: lax.ppermute(v, "i", [(0, 2), (2, 1)]),
                         lambda X: np.stack([np.zeros_like(X[0]), X[2], X[0]])),
    "all_to_all": (lambda v: lax.all_to_all(v, "i", 0, 1),
                   lambda X: each(N, lambda i: np.stack([X[j][i] for j in range(N)], 1))),
    "all_to_all_tiled": (
        lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
        lambda X: each(N, lambda i: np.concatenate([split(X[j], N, 1)[i]
                                                    for j in range(N)], 0))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name):
    op, oracle = CASES[name]
    np.testing.assert_allclose(vmap(op)(X), oracle(X), rtol=1e-12)


@pytest.mark.parametrize("name", ["psum", "all_gather_tiled", "psum_scatter",
                                  "ppermute_partial", "all_to_all_tiled"])
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_under_jit_both_orders(name, backend):
    op, oracle = CASES[name]
    want = oracle(X)
    np.testing.assert_allclose(tracer.jit(vmap(op), backend=backend)(X), want, rtol=1e-12)
    np.testing.assert_allclose(vmap(tracer.jit(op, backend=backend))(X), want, rtol=1e-12)


def test_jit_inside_vmaps_of_two_sizes_retraces():
    f = tracer.jit(lambda v: lax.all_gather(v, "i"))
    a, b = np.arange(3.0), np.arange(5.0)
    np.testing.assert_array_equal(vmap(f)(a), np.broadcast_to(a, (3, 3)))
    np.testing.assert_array_equal(vmap(f)(b), np.broadcast_to(b, (5, 5)))


def test_axis_index_and_constants():
    got = vmap(lambda v: (lax.axis_index("i"), lax.psum(1, "i"), lax.pmean(v, "i")))(X)
    np.testing.assert_array_equal(got[0], np.arange(N))
    assert got[0].dtype == np.int32
    np.testing.assert_array_equal(got[1], [N] * N)


def test_axis_size_is_a_python_int_of_each_axis_and_their_product():
    sizes = []

    def f(v):
        sizes.append((lax.axis_size("i"), lax.axis_size("j"), lax.axis_size(("i", "j"))))
        return v * lax.axis_size("j")
    Y = RNG.standard_normal((2, 3, 4))
    got = tracer.jit(tracer.vmap(tracer.vmap(f, axis_name="j"), axis_name="i"))(Y)
    np.testing.assert_allclose(got, 3 * Y)
    assert sizes == [(2, 3, 6)] and all(type(n) is int for n in sizes[0])
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        tracer.vmap(lambda v: lax.axis_size("k"), axis_name="i")(X)


def test_unbatched_operand_reduces_over_the_axis():
    c = np.arange(4.0)
    got = vmap(lambda v: lax.psum(c, "i") + 0 * v[0, 0], in_axes=0)(X)
    np.testing.assert_allclose(got, np.broadcast_to(N * c, (N, 4)))


def test_nested_names_reduce_over_their_own_axes():
    Y = RNG.standard_normal((2, 3, 4))

    def f(v):
        return (lax.psum(v, "i"), lax.psum(v, "j"), lax.psum(v, ("i", "j")),
                lax.axis_index(("i", "j")))
    got = tracer.vmap(tracer.vmap(f, axis_name="j"), axis_name="i")(Y)
    shape = Y.shape
    np.testing.assert_allclose(got[0], np.broadcast_to(Y.sum(0), shape))
    np.testing.assert_allclose(got[1], np.broadcast_to(Y.sum(1, keepdims=True), shape))
    np.testing.assert_allclose(got[2], np.broadcast_to(Y.sum((0, 1), keepdims=True), shape))
    np.testing.assert_array_equal(got[3], np.arange(6).reshape(2, 3))


def test_a_collective_over_an_outer_axis_maps_over_an_inner_unnamed_vmap():
    Y = RNG.standard_normal((2, 3, 4))
    got = vmap(tracer.vmap(lambda v: lax.all_gather(v, "i", axis=1)))(Y)
    want = np.broadcast_to(np.moveaxis(Y, 0, 2)[None], (2, 3, 4, 2))
    np.testing.assert_allclose(got, want)


def test_pytrees():
    got = vmap(lambda v: lax.psum({"a": v, "b": (v, 2 * v)}, "i"))(X)
    np.testing.assert_allclose(got["b"][1], 2 * each(N, lambda i: X.sum(0)))
    assert sorted(got) == ["a", "b"]


def test_unbound_axis_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: 'k'.*bound here: 'i'"):
        vmap(lambda v: lax.psum(v, "k"))(X)
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        lax.axis_index("i")


def test_bad_parameters_name_the_op_and_shape():
    with pytest.raises(tracer.ShapeError, match=r"psum_scatter: scatter_dimension 1 .*"
                                                r"\(3, 6\).*axis size 3, got 6"):
        vmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))(X)
    with pytest.raises(tracer.ArgumentError, match="ppermute: perm"):
        vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]))(X)
    with pytest.raises(tracer.ShapeError, match="all_gather: axis 4"):
        vmap(lambda v: lax.all_gather(v, "i", axis=4))(X)


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", ["psum", "pmean", "all_gather", "all_gather_tiled",
                                  "psum_scatter", "psum_scatter_tiled", "ppermute_partial",
                                  "all_to_all", "all_to_all_tiled"])
def test_per_position_gradients_are_the_transposes(name):
    """As in JAX, the gradient at each position (the collectives' own gradient rules) is
    the derivative of the sum over positions of every position's loss."""
    op = CASES[name][0]
    x = X[:, :, :3]
    w = RNG.standard_normal(np.shape(vmap(op)(x)))

    def loss(v, wv):
        return tnp.sum(tnp.sin(op(tnp.cos(v))) * wv)
    per_position = vmap(tracer.grad(loss))(x, w)
    total = lambda xx: float(np.sum(vmap(loss)(xx, w)))  # noqa: E731
    np.testing.assert_allclose(per_position, _fd_grad(total, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tracer.grad(lambda xx: tnp.sum(vmap(loss)(xx, w)))(x),
                               per_position, rtol=1e-10, atol=1e-12)


def test_pmax_has_no_gradient():
    with pytest.raises(GradientError, match="pmax over axis 'i' has no gradient"):
        vmap(tracer.grad(lambda v: tnp.sum(lax.pmax(v, "i"))))(X)


def test_collectives_are_effects_that_survive_dce_and_cse():
    seen = {}

    def body(v):
        def f(u):
            lax.psum(u, "i")                      # result unused
            return lax.psum(u, "i") + lax.psum(u, "i")
        seen["g"] = dce(cse(tracer.make_graph(f)(v)))
        return v
    vmap(body)(X)
    assert [n.kernel for n in seen["g"].nodes] == ["psum", "psum", "psum", "add"]
    assert all(registry.has_effects(k) for k in ("psum", "all_gather", "ppermute"))


def test_onnx_export_is_a_clear_error():
    with pytest.raises(KernelError, match="psum over axis 'i' is a collective"):
        registry.get_exporter("psum", "onnx")(None, ["x"], {"axis_name": "i"})


def test_collectives_inside_regions_reduce_over_the_vmapped_axis():
    def f(v):
        total, top = lax.scan(lambda c, x: (c + lax.psum(x, "i"), lax.pmax(x, "i")), 0.0, v)
        ring = lax.fori_loop(0, 2, lambda k, u: lax.ppermute(u, "i", [(0, 1), (1, 2), (2, 0)]),
                             v)
        return total, top, ring
    x = X[:, 0]
    total, top, ring = vmap(f)(x)
    np.testing.assert_allclose(total, [x.sum()] * N)
    np.testing.assert_allclose(top, np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_allclose(ring, x[[1, 2, 0]])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_jitted_function_reading_an_axis_size_is_not_cached_across_sizes(backend):
    """axis_size is a Python number read while tracing: a jitted function reading it under
    vmap of one size must not serve its graph to a vmap of another (JAX's jax#9187)."""
    g = tracer.jit(lambda: tracer.lax.axis_size("i"), backend=backend)
    h = tracer.jit(lambda x: x * tracer.lax.axis_size("i"), backend=backend)
    for n in (2, 3, 2):
        assert tracer.vmap(g, axis_name="i", axis_size=n, out_axes=None)() == n
        np.testing.assert_array_equal(tracer.vmap(h, axis_name="i")(np.ones(n)), [n] * n)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_jitted_collective_on_unbatched_arguments_stays_in_the_vmap(backend):
    """A jitted function reading the axis, called inside vmap on values that are not
    batched (or none), runs in the vmap's trace: eagerly there is no axis to read."""
    index = tracer.jit(lambda: tracer.lax.axis_index("i"), backend=backend)
    np.testing.assert_array_equal(tracer.vmap(lambda _: index(), axis_name="i")(np.zeros(3)),
                                  [0, 1, 2])
    shift = tracer.jit(lambda x: x + tracer.lax.axis_index("i"), backend=backend)
    np.testing.assert_array_equal(
        tracer.vmap(lambda _, x: shift(x), axis_name="i", in_axes=(0, None))(np.zeros(3), 5),
        [5, 6, 7])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_control_flow_reading_the_axis_on_unbatched_values_is_batched(backend):
    """A loop, scan or cond whose regions read the vmap's axis (lax.axis_index) differs
    per position even when none of its inputs is batched, or all are constants: it is
    batched, not run once (JAX's testWhileLoopAxisIndexBatched)."""
    lax = tracer.lax

    def climb(x):
        return lax.while_loop(lambda v: v < lax.axis_index("i"), lambda v: v + 2, x)
    for f in (climb, tracer.jit(climb, backend=backend)):
        np.testing.assert_array_equal(
            tracer.vmap(lambda _, x: f(x), axis_name="i", in_axes=(0, None))(
                np.zeros(4), 0), [0, 2, 2, 4])
    pick = tracer.vmap(lambda _: lax.cond(True, lambda: lax.axis_index("i"),
                                          lambda: 0 * lax.axis_index("i")), axis_name="i")
    np.testing.assert_array_equal(pick(np.zeros(3)), [0, 1, 2])
    total = tracer.vmap(lambda _: lax.scan(lambda c, x: (c + lax.axis_index("i"), c), 0,
                                           None, length=3)[0], axis_name="i")
    np.testing.assert_array_equal(total(np.zeros(3)), [0, 3, 6])

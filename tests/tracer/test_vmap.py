"""vmap: every built-in kernel's batching rule against a Python loop over the batch
(eagerly and under jit on both backends, with in_axes 0, 1, -1 and None mixes); the
vmap API; nesting with grad/jvp/vjp/jit; the rule registry; the loop fallback."""
import warnings

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError, KernelNotFoundError, ShapeError, TracerError
from registry import batching, families
from tracer import run_kernel
from tracer.kernels import BUILTIN_KERNELS
from tracer.kernels.elementwise import ELEMENTWISE
from tracer.vmap import FAMILY_RULES, vmap

B = 3
RNG = np.random.default_rng(0)


def f32(*shape):
    return ("f", shape)


def boolean(*shape):
    return ("b", shape)


def index(high, *shape):
    return ("i", shape, high)


def sample(spec, shape):
    kind = spec[0]
    if kind == "f":
        return RNG.uniform(0.5, 2.0, shape).astype(np.float32)
    if kind == "b":
        return RNG.random(shape) > 0.5
    return RNG.integers(0, spec[2], shape).astype(np.int64)


def kernel(name, **attrs):
    return lambda *xs: run_kernel(name, list(xs), attrs)


INT_ONLY = {r.name for r in ELEMENTWISE if r.kinds and "f" not in r.kinds}  # bitwise
ALONG_AXIS = [k for k in ("cumsum", "cumprod", "argsort") if k in registry.shape_rules()]


def operand(k, *shape):
    return index(5, *shape) if k in INT_ONLY else f32(*shape)


# (id, per-example function, per-example argument specs)
CASES = (
    [(r.name, kernel(r.name), [operand(r.name, 3, 4)] * r.arity) for r in ELEMENTWISE]
    + [(f"{k}{ax}", kernel(k, axis=ax), [f32(3, 4)]) for k in ALONG_AXIS for ax in (0, 1)]
    + [("select", kernel("select"), [boolean(3, 4), f32(3, 4), f32(3, 4)]),
       ("convert", kernel("convert", dtype=np.dtype(np.float64)), [f32(3, 4)]),
       ("reduce_sum01", kernel("reduce_sum", axes=(0, 1)), [f32(3, 4)]),
       ("reduce_max1", kernel("reduce_max", axes=(1,)), [f32(3, 4)]),
       ("reduce_min0", kernel("reduce_min", axes=(0,)), [f32(3, 4)]),
       ("reduce_prod1", kernel("reduce_prod", axes=(1,)), [f32(3, 4)]),
       ("argmax0", kernel("argmax", axis=0), [f32(3, 4)]),
       ("argmin1", kernel("argmin", axis=1), [f32(3, 4)]),
       ("broadcast_to", kernel("broadcast_to", shape=(2, 3, 4)), [f32(3, 1)]),
       ("reshape", kernel("reshape", shape=(2, 6)), [f32(3, 4)]),
       ("transpose", kernel("transpose", perm=(2, 0, 1)), [f32(2, 3, 4)]),
       ("slice", kernel("slice", start=(1, 0), limit=(5, 4), step=(2, 3)), [f32(5, 4)]),
       ("pad", kernel("pad", lo=(1, 0), hi=(0, 2), interior=(1, 0)), [f32(3, 4)]),
       ("rev", kernel("rev", axes=(1,)), [f32(3, 4)]),
       ("concatenate0", kernel("concatenate", axis=0), [f32(2, 4), f32(3, 4)]),
       ("concatenate1", kernel("concatenate", axis=1), [f32(3, 2), f32(3, 4)]),
       ("take0", kernel("take", axis=0), [f32(5, 4), index(5, 2, 3)]),
       ("take1", kernel("take", axis=1), [f32(2, 5, 3), index(5, 4)]),
       ("scatter_add0", kernel("scatter_add", axis=0, size=5), [f32(4, 3), index(5, 4)]),
       ("scatter_add1", kernel("scatter_add", axis=1, size=5), [f32(2, 2, 3, 4),
                                                                  index(5, 2, 3)]),
       ("matmul", kernel("matmul"), [f32(3, 4), f32(4, 2)]),
       ("matmul_lead", kernel("matmul"), [f32(2, 3, 4), f32(2, 4, 5)])])


def axis_configs(specs):
    """in_axes to try: 0, 1, -1 for all, and each argument unbatched in turn."""
    n = len(specs)
    out = [(0,) * n, (-1,) * n]
    if all(len(s[1]) >= 1 for s in specs):
        out.append((1,) * n)
    if n > 1:
        out += [tuple(None if j == i else (1 if i % 2 else 0) for j in range(n))
                for i in range(n)]
    return out


def batched_args(specs, axes):
    args = []
    for s, ax in zip(specs, axes):
        if ax is None:
            args.append(sample(s, s[1]))
        else:
            full = sample(s, (B,) + s[1])
            args.append(np.moveaxis(full, 0, ax))
    return args


def loop(fun, args, axes):
    outs = [fun(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(B)]
    return np.stack(outs)


def check(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name,fun,specs", CASES, ids=[c[0] for c in CASES])
def test_every_builtin_kernel_against_a_loop(name, fun, specs):
    for axes in axis_configs(specs):
        args = batched_args(specs, axes)
        want = loop(fun, args, axes)
        f = vmap(fun, in_axes=axes)
        check(f(*args), want)
        check(tracer.jit(f, backend="numpy")(*args), want)
        if axes in ((0,) * len(specs), axis_configs(specs)[-1]):
            check(tracer.jit(f, backend="llvm")(*args), want)


def test_builtin_kernels_all_have_rules_or_are_elementwise():
    for k in BUILTIN_KERNELS:
        assert batching.has_batching_rule(k) or families.family(k) in FAMILY_RULES, k


def test_graph_has_batched_kernels_not_a_loop():
    W = np.ones((4, 2), np.float32)
    g = tracer.make_graph(vmap(lambda x: tnp.tanh(x @ W)))(np.ones((5, 4), np.float32))
    kernels = [n.kernel for n in g.nodes]
    assert "matmul" in kernels and "scan" not in kernels
    assert kernels.count("matmul") == 1


def test_out_of_bounds_batched_index_is_an_error_not_a_neighbour():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    idx = np.array([[0], [3]])       # example 1 asks for index 3 of a length-3 axis
    with pytest.raises(TracerError):
        vmap(lambda a, i: run_kernel("take", [a, i], {"axis": 0}))(x, idx)


# ---- the API ------------------------------------------------------------------------------

def test_pytree_in_axes_kwargs_and_out_axes():
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((3, 4)).astype(np.float32)

    def f(d, c, scale=1.0):
        return {"s": (d["a"] + d["b"]) * scale, "c": c}
    scale = np.arange(1, 5, dtype=np.float32)           # a keyword: mapped over axis 0
    out = vmap(f, in_axes=({"a": 0, "b": 1}, None), out_axes={"s": 1, "c": None})(
        {"a": x, "b": y}, 7.0, scale=scale)
    np.testing.assert_allclose(out["s"], ((x + y.T) * scale[:, None]).T, rtol=1e-6)
    assert out["c"] == 7.0


def test_keyword_arguments_are_mapped_over_axis_0_as_jax():
    """jax.vmap(f)(x, y=y) maps y too (x * y: [0, 11, 24] for x = [0, 1, 2], y = [10, 11,
    12]); an unmapped y broadcast silently gave a 3 x 3 outer product instead."""
    x, y = np.arange(3.0), np.arange(3.0) + 10
    np.testing.assert_array_equal(vmap(lambda x, y=0.0: x * y)(x, y=y), [0.0, 11.0, 24.0])
    np.testing.assert_array_equal(tracer.jit(vmap(lambda x, *, w: x + w["a"].sum()))(
        x, w={"a": np.ones((3, 2))}), x + 2)
    with pytest.raises(ShapeError, match=r"kwargs\['y'\].*mapped over axis 0"):
        vmap(lambda x, y=0.0: x * y)(x, y=0.5)          # a scalar has no axis 0 (as jax)


def test_unbatched_output_is_broadcast_and_axis_size():
    out = vmap(lambda x: tnp.ones(2, np.float32), axis_size=3, in_axes=None)(1.0)
    assert out.shape == (3, 2)


def test_unmapped_arguments_reach_fun_as_they_are():
    """As jax.vmap's: an argument with in_axes None that is not an array is not traced,
    so it may be a function, and Python may branch on a number; a mapped one must be an
    array. An unmapped array is traced: a NumPy array indexed by a traced index could
    not take it (jax's arrays can)."""
    xs = np.arange(3.0)
    np.testing.assert_array_equal(vmap(lambda f, x: f(x), in_axes=(None, 0))(abs, -xs), xs)
    branchy = vmap(lambda a, x: x * 2 if a > 0 else x, in_axes=(None, 0))
    np.testing.assert_array_equal(branchy(1.0, xs), xs * 2)
    np.testing.assert_array_equal(branchy(-1, xs), xs)
    table = np.arange(10.0) * 3
    lookup = vmap(lambda t, i: t[i], in_axes=(None, 0))
    np.testing.assert_array_equal(lookup(table, np.array([1, 4])), [3.0, 12.0])
    with pytest.raises(ArgumentError, match="of type <class 'builtin_function_or_method'> is "
                                            "not a valid JAX type"):
        vmap(lambda f, x: f(x))(abs, xs)


def test_errors_name_arguments_and_sizes():
    with pytest.raises(ShapeError, match=r"size 3: axis 0 of argument a of type float64\[3\]"
                       r";\n.*size 4: axis 0 of argument b .*\n.*vmap\(<lambda>\)"):
        vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(ShapeError, match="rank should be at least 3, but is only 2"):
        vmap(lambda a: a, in_axes=2)(np.ones((3, 4)))
    with pytest.raises(ArgumentError, match="in_axes"):
        vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ArgumentError, match="no argument of vmap.* is mapped"):
        vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ArgumentError, match="out_axes for output 0, got axis spec None"):
        vmap(lambda a: a, out_axes=None)(np.ones(3))


# ---- composition --------------------------------------------------------------------------

def _f(w, x):
    return tnp.sum(tnp.tanh(x @ w) ** 2)


W = RNG.standard_normal((3, 2)).astype(np.float32)
X = RNG.standard_normal((4, 3)).astype(np.float32)
T = RNG.standard_normal((3, 2)).astype(np.float32)


def _per_example_grads():
    return np.stack([tracer.grad(_f)(W, x) for x in X])


@pytest.mark.parametrize("wrap", ["plain", "jit_outside", "jit_inside"])
def test_vmap_of_grad(wrap):
    g = tracer.grad(_f)
    if wrap == "jit_inside":
        g = tracer.jit(g, backend="numpy")
    f = vmap(g, in_axes=(None, 0))
    if wrap == "jit_outside":
        f = tracer.jit(f)
    np.testing.assert_allclose(f(W, X), _per_example_grads(), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_and_jit_of_grad_of_vmap():
    def total(w):
        return tnp.sum(vmap(_f, in_axes=(None, 0))(w, X))
    want = sum(tracer.grad(_f)(W, x) for x in X)
    np.testing.assert_allclose(tracer.grad(total)(W), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tracer.jit(tracer.grad(total))(W), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tracer.grad(tracer.jit(total))(W), want, rtol=1e-5,
                               atol=1e-6)


def test_vmap_of_jvp_and_jvp_of_vmap():
    ws = np.stack([W, 2 * W])
    got = vmap(lambda w: tracer.jvp(lambda v: _f(v, X[0]), (w,), (T,))[1])(ws)
    want = [tracer.jvp(lambda v: _f(v, X[0]), (w,), (T,))[1] for w in ws]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    out, tan = tracer.jvp(lambda w: vmap(_f, in_axes=(None, 0))(w, X), (W,), (T,))
    want = [tracer.jvp(lambda w: _f(w, x), (W,), (T,))[1] for x in X]
    np.testing.assert_allclose(tan, want, rtol=1e-5)


def test_vmap_of_vjp_and_nested_vmap():
    def f(x):
        out, pull = tracer.vjp(lambda v: tnp.sin(v) * 2, x)
        return pull(tnp.ones_like(out))[0]
    np.testing.assert_allclose(vmap(f)(X), 2 * np.cos(X), rtol=1e-6)
    out, pull = tracer.vjp(vmap(lambda v: tnp.sin(v) * 2), X)
    np.testing.assert_allclose(pull(np.ones_like(X))[0], 2 * np.cos(X), rtol=1e-6)
    outer = vmap(vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    np.testing.assert_allclose(outer(X[0], X[1]), X[1][:, None] * X[0][None, :], rtol=1e-6)


def test_custom_vjp_stays_differentiable_under_vmap():
    @tracer.custom_vjp
    def f(x):
        return tnp.sin(x)
    f.defvjp(lambda x: (tnp.sin(x), x), lambda x, g: (g * 10.0,))   # marked gradient
    g = vmap(tracer.grad(lambda x: tnp.sum(f(x))))(X)
    np.testing.assert_allclose(g, np.full_like(X, 10.0))
    g = tracer.grad(lambda x: tnp.sum(vmap(f)(x)))(X)
    np.testing.assert_allclose(g, np.full_like(X, 10.0))
    np.testing.assert_allclose(vmap(f)(X), np.sin(X), rtol=1e-6)


# ---- registry, families, fallback ---------------------------------------------------------

@pytest.fixture(autouse=True)
def _forget_user_kernels():
    """The user kernels below leave the registry as they found it (later tests, such as
    ONNX coverage, walk every registered kernel)."""
    yield
    for name in ("v_cumsum", "v_twice", "v_sq", "v_bad"):
        registry.forget_kernel(name)


def _user_kernel(name):
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", lambda x: np.cumsum(x, axis=-1))
    registry.register_kernel(name, "llvm", lambda x: np.cumsum(x, axis=-1))


def test_fallback_loops_with_one_warning():
    _user_kernel("v_cumsum")
    f = vmap(lambda x: run_kernel("v_cumsum", [x]), in_axes=1)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match=r"'v_cumsum'.*register_batching_rule"):
        np.testing.assert_allclose(f(x), np.cumsum(x.T, axis=-1), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tracer.make_graph(f)(x)
    assert "scan" in [n.kernel for n in g.nodes]


def test_registered_rule_overrides_and_rebuilds_jit_entries():
    _user_kernel("v_twice")
    x = np.ones((2, 3), np.float32)
    batching.register_batching_rule("v_twice", lambda xs, ds, a: (
        run_kernel("v_twice", xs, a), ds[0]))
    f = tracer.jit(vmap(lambda x: run_kernel("v_twice", [x])), backend="numpy")
    np.testing.assert_allclose(f(x), np.cumsum(x, -1))
    batching.register_batching_rule("v_twice", lambda xs, ds, a: (
        2 * run_kernel("v_twice", xs, a), ds[0]))       # a (wrong) marked rule
    np.testing.assert_allclose(f(x), 2 * np.cumsum(x, -1))
    batching.unregister_batching_rule("v_twice")
    assert not batching.has_batching_rule("v_twice")
    with pytest.raises(KernelNotFoundError, match="v_twice"):
        batching.get_batching_rule("v_twice")


def test_user_elementwise_kernel_is_batched_by_its_family():
    registry.register_shape_rule("v_sq", lambda x: x)
    registry.register_kernel("v_sq", "numpy", lambda x: x * x)
    families.declare_family("v_sq", "elementwise")
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(vmap(lambda v: run_kernel("v_sq", [v]))(x), x * x)
    with pytest.raises(ArgumentError, match="unknown family"):
        families.declare_family("v_sq", "elemwise")


def test_bad_rule_result_is_a_clear_error():
    _user_kernel("v_bad")
    batching.register_batching_rule("v_bad", lambda xs, ds, a: (xs[0][0], 0))
    with pytest.raises(TracerError, match="batching rule of 'v_bad' returned shape"):
        vmap(lambda x: run_kernel("v_bad", [x]))(np.ones((2, 3), np.float32))


def test_cond_on_a_batched_predicate_under_vmap_and_grad():
    x = np.linspace(-1, 1, 6).astype(np.float32)
    f = lambda v: tracer.lax.cond(v > 0, lambda a: a * 2, lambda a: a - 1, v)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a rule, not the loop fallback
        np.testing.assert_allclose(vmap(f)(x), np.where(x > 0, 2 * x, x - 1))
        np.testing.assert_allclose(vmap(tracer.grad(f))(x), np.where(x > 0, 2.0, 1.0))


def test_axis_and_output_errors_use_jaxs_words():
    """JAX's own tests match these messages (batching_test's testNegativeAxes and
    testNonJaxTypedOutput); the errors are ValueError and TypeError as there."""
    x = np.arange(60.0).reshape(3, 4, 5)
    with pytest.raises(ValueError, match=r"vmap was requested to map its argument along axis "
                       r"-4, which implies that its rank should be at least 4, but is only "
                       r"3 \(its shape is \(3, 4, 5\)\)"):
        tracer.vmap(tnp.sum, in_axes=-4)(x)
    with pytest.raises(ValueError, match="axis -4 is out of bounds"):
        tracer.vmap(lambda y: y, out_axes=-4)(x)
    with pytest.raises(TypeError, match="Output from batched function 'hello' of type str "
                       "is not a valid JAX type"):
        tracer.vmap(lambda y: "hello")(np.arange(5))


@pytest.mark.parametrize("run", ["eager", "numpy", "llvm"])
def test_out_of_bounds_batched_index_is_named_as_written(run):
    """A batched take (and scatter_add, its gradient) indexes one flat (batch * n) axis;
    each index is checked against its own example's axis first, so the error names the
    index the user wrote and that axis' size, not a flat position or a sentinel."""
    x = np.arange(12.0).reshape(3, 4)
    rows = np.arange(30.0).reshape(3, 2, 5)
    i = np.array([1, 5, 2])
    take = vmap(lambda r, j: tnp.take(r, j))
    along = vmap(lambda r, j: tnp.take(r, j, axis=1))          # (2, 5) rows, axis 1
    add = vmap(lambda r, j: r.at[j].add(1.0))
    if run != "eager":
        take, along, add = (tracer.jit(g, backend=run) for g in (take, along, add))
    with pytest.raises(tracer.OutOfBoundsError, match="index 5 is out of bounds for axis 0 of size 4"):
        take(x, i)
    with pytest.raises(tracer.OutOfBoundsError, match="index 5 is out of bounds for axis 1 of size 5"):
        along(rows, i)
    with pytest.raises(tracer.OutOfBoundsError, match="index 5 is out of bounds for axis 0 of size 4"):
        add(x, i)
    np.testing.assert_array_equal(take(x, np.array([1, 3, 0])), [1.0, 7.0, 8.0])

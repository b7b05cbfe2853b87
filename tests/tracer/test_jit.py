"""jit(backend="numpy") and make_graph: one trace per signature (shapes, dtypes, weak
types, static values, pytree structure), static arguments, pytrees, caching, lowering."""
import collections
import functools
import gc
import importlib
import warnings
import weakref

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering.settings import Settings
from ir import ArgumentError, Graph

jit_module = importlib.import_module("tracer.jit")     # `tracer.jit` is the function


def counted(fun, **jit_kw):
    """(jitted fun, list whose length is the number of traces so far)."""
    traces = []

    def f(*args):
        traces.append(1)          # runs only while tracing
        return fun(*args)
    return tracer.jit(f, backend="numpy", **jit_kw), traces


def test_traces_once_per_shape_and_dtype():
    f, traces = counted(lambda x: x * 2)
    x = np.ones(3, np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), 2 * x)
    assert len(traces) == 1
    f(np.zeros(3, np.float32))               # other values, same signature: cache hit
    assert len(traces) == 1
    f(np.ones(4, np.float32))                # other shape
    f(np.ones(3, np.float64))                # other dtype
    f(np.ones((3, 1), np.float32))           # other rank
    assert len(traces) == 4
    f(np.ones(4, np.float32)), f(np.ones(3, np.float64))
    assert len(traces) == 4


def test_python_scalars_are_weak_and_keyed_apart_from_numpy_scalars():
    f, traces = counted(lambda x, s: x * s)
    x = np.ones(2, np.float32)
    assert f(x, 2.0).dtype == np.float32                      # weak Python float
    assert f(x, 3.0).dtype == np.float32 and len(traces) == 1
    assert f(x, np.float64(2.0)).dtype == np.float64          # strong NumPy scalar
    assert f(x, np.array(2.0)).dtype == np.float64            # the same signature
    assert len(traces) == 2
    assert f(x, 2).dtype == np.float32                        # weak Python int
    assert len(traces) == 3
    assert tracer.jit(lambda i: i + 2.5, backend="numpy")(np.int32(1)).dtype == np.float64


def test_pytree_structure_is_part_of_the_signature():
    f, traces = counted(lambda t: t[0] + t[1])
    a = np.ones(2)
    f((a, a)), f((a, a)), f([a, a]), f([a, a])
    assert len(traces) == 2
    g, traces = counted(lambda d: d["x"] * d.get("y", 1.0))
    g({"x": a}), g({"x": a, "y": a}), g({"y": a, "x": a})
    assert len(traces) == 2


def test_pytrees_in_arguments_and_results():
    Point = collections.namedtuple("Point", "x y")

    def f(tree, p):
        (a, b), d, none = tree
        return {"sum": a + b + d["k"][0], "list": [p.x * 2, None, (p.y,)], "none": none}
    a, b = np.arange(3.0), np.ones(3)
    args = (((a, b), {"k": [a]}, None), Point(np.float32(2), np.zeros(2)))
    want, got = f(*args), tracer.jit(f, backend="numpy")(*args)
    assert got.keys() == want.keys() and got["none"] is None and got["list"][1] is None
    np.testing.assert_array_equal(got["sum"], want["sum"])
    np.testing.assert_array_equal(got["list"][0], want["list"][0])
    assert isinstance(got["list"][2], tuple) and isinstance(got["list"], list)
    out = tracer.jit(lambda p: Point(p.y, p.x), backend="numpy")(Point(a, b))
    assert type(out) is Point and out.x is not None
    np.testing.assert_array_equal(out.x, b)


def test_static_argnums_accept_hashable_lists_and_arrays():
    def f(x, n, axes, scale):
        out = x
        for _ in range(n):
            out = out * scale[0]
        return tnp.sum(out, axis=tuple(axes))
    j, traces = counted(f, static_argnums=(1, 2, 3))
    x = np.ones((2, 3))
    np.testing.assert_allclose(j(x, 2, [0], np.array([3.0])), np.sum(x * 9, axis=0))
    j(x, 2, [0], np.array([3.0]))
    assert len(traces) == 1
    j(x, 3, [0], np.array([3.0]))              # another static int
    j(x, 2, [1], np.array([3.0]))              # another static list
    j(x, 2, [0], np.array([4.0]))              # another static array value
    j(x, 2, (0,), np.array([3.0]))             # a tuple is not the list
    assert len(traces) == 5
    j(x, 2, [1], np.array([3.0]))
    assert len(traces) == 5


def test_static_argnums_forms():
    for nums in (1, (1,), [1], -1, (-1, 1)):
        j, traces = counted(lambda x, n: x * n, static_argnums=nums)
        assert j(np.ones(2), 3)[0] == 3 and j(np.ones(2), 4)[0] == 4
        assert len(traces) == 2
    with pytest.raises(ArgumentError, match="static_argnums=.*only 1 positional"):
        tracer.jit(lambda x: x, static_argnums=1, backend="numpy")(np.ones(2))
    with pytest.raises(ArgumentError, match="static_argnums must be an int"):
        tracer.jit(lambda x: x, static_argnums="x")
    with pytest.raises(ArgumentError, match=r"Non-hashable static arguments are not supported: "
                                            r"jit\(<lambda>\) argument 1 is a set; pass a tuple"):
        tracer.jit(lambda x, s: x, static_argnums=1, backend="numpy")(np.ones(2), {1})


def test_non_array_dynamic_argument_suggests_static_argnums():
    with pytest.raises(ArgumentError, match="path mode: .*'fast' of type <class 'str'> is not "
                                            "a valid JAX type. .* must be static: list it in "
                                            "static_argnums or static_argnames"):
        tracer.jit(lambda x, mode: x, backend="numpy")(np.ones(2), "fast")
    assert tracer.jit(lambda x, mode: x * (2 if mode == "fast" else 3), static_argnums=1,
                      backend="numpy")(np.ones(2), "fast")[0] == 2


def test_reregistering_a_kernel_retraces_only_what_used_it():
    f, f_traces = counted(lambda x: tnp.exp(x))
    g, g_traces = counted(lambda x: tnp.sin(x))
    x = np.zeros(2)
    f(x), g(x)
    original = registry.get_kernel("exp", "numpy")
    registry.register_kernel("exp", "numpy", lambda v: np.full_like(v, 7.0))
    try:
        np.testing.assert_array_equal(f(x), [7.0, 7.0])
        g(x)
        assert (len(f_traces), len(g_traces)) == (2, 1)
    finally:
        registry.register_kernel("exp", "numpy", original)
    np.testing.assert_array_equal(f(x), [1.0, 1.0])


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_the_gradient_of_a_jitted_function_is_compiled_once(backend, caplog):
    """grad(jit(f)) runs as jit(grad(f)): one compile of the gradient (not of f), reused
    by later calls, sharing f's static arguments; an enclosing trace still inlines f."""
    @functools.partial(tracer.jit, static_argnums=1, backend=backend)
    def f(x, n):
        return tnp.sum(tnp.sin(x) ** n)
    x = np.arange(3.0)
    with caplog.at_level("DEBUG", logger="tracer.compile"):
        np.testing.assert_allclose(tracer.grad(f)(x, 2), np.sin(2 * x))
        np.testing.assert_allclose(tracer.grad(f)(x + 1, 2), np.sin(2 * x + 2))
        value, g = tracer.value_and_grad(f)(x, 3)
    compiled = [r.message for r in caplog.records if r.message.startswith("Compiling")]
    assert len(compiled) == 2 and all("grad_f" in m for m in compiled), compiled
    np.testing.assert_allclose(g, 3 * np.sin(x) ** 2 * np.cos(x))
    assert value == pytest.approx(np.sum(np.sin(x) ** 3))
    grads = tracer.grad(tracer.jit(lambda a, b: tnp.sum(a * b)), argnums=[0, 1])(x, x + 1)
    np.testing.assert_allclose(grads[0], x + 1)             # argnums as a list (unhashable)
    np.testing.assert_allclose(grads[1], x)
    np.testing.assert_allclose(tracer.vmap(tracer.grad(f), in_axes=(0, None))(
        x[:, None], 2), np.sin(2 * x)[:, None])
    assert tracer.grad(tracer.grad(lambda v: f(v[None], 3)))(0.5) == pytest.approx(
        6 * np.sin(0.5) * np.cos(0.5) ** 2 - 3 * np.sin(0.5) ** 3)


@pytest.mark.parametrize("jacobian", [tracer.jacfwd, tracer.jacrev, tracer.hessian])
def test_the_jacobians_of_a_jitted_function_are_compiled_once(jacobian, caplog):
    f = tracer.jit(lambda x: tnp.sin(x) * tnp.sum(x))
    x = np.arange(3.0)
    with caplog.at_level("DEBUG", logger="tracer.compile"):
        got = [jacobian(f)(x + k) for k in range(2)]
    compiled = [r.message for r in caplog.records if r.message.startswith("Compiling")]
    assert len(compiled) == 1 and jacobian.__name__ in compiled[0], compiled
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, jacobian(f.fun)(x + k), rtol=1e-12)


def test_lower_gives_the_optimized_graph_and_text():
    f = tracer.jit(lambda x: tnp.exp(x) + tnp.exp(x) * np.float32(2), backend="numpy")
    lowered = f.lower(np.ones(3, np.float32))
    assert isinstance(lowered.graph, Graph) and lowered.backend == "numpy"
    assert [n.kernel for n in lowered.graph.nodes].count("exp") == 1
    assert lowered.as_text() == str(lowered.graph)
    lowered.graph.verify()


def test_make_graph_traces_each_call_and_supports_static_argnums():
    def f(x, n):
        return tnp.sum(x ** n)
    g = tracer.make_graph(f, static_argnums=1)(np.ones(3), 3)
    assert isinstance(g, Graph) and "pow" not in g.kernels() and "mul" in g.kernels()
    assert [str(a) for a in g.in_avals] == ["f64[3]"] and g.out_avals[0].shape == ()
    assert str(tracer.make_graph(f, static_argnums=1)(np.ones(3), 3)) == str(g)


def test_jit_composes_with_itself_and_closures_over_traced_values():
    inner, inner_traces = counted(lambda x: x * 2)
    outer = tracer.jit(lambda x: inner(x) + inner(x + 1), backend="numpy")
    np.testing.assert_array_equal(outer(np.ones(2)), [6.0, 6.0])

    def f(x):
        return tracer.jit(lambda y: y * x, backend="numpy")(np.ones(2))   # closes over x
    np.testing.assert_array_equal(tracer.jit(f, backend="numpy")(np.float64(3)), [3.0, 3.0])
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(inner(x) ** 2))(np.ones(2)),
                               [8.0, 8.0])


def test_leaked_tracers_are_reported_wherever_they_are_used():
    leaked = []
    tracer.jit(lambda x: leaked.append(x) or x, backend="numpy")(np.ones(2))
    uses = [tracer.jit(lambda y: y + 1.0), tracer.jit(lambda y: y + 1.0, backend="numpy"),
            lambda y: y + 1.0, tracer.grad(tnp.sum),
            lambda y: tracer.jit(lambda z: z + y, backend="numpy")(np.ones(2))]
    for use in uses:
        with pytest.raises(tracer.UnexpectedTracerError,
                           match=r"^Encountered an unexpected tracer\. A leaked tracer: a "
                                 r"traced value f64\[2\] escaped.*Return it from the function"):
            use(leaked[0])


def test_the_signature_cache_evicts_an_entry_not_used_lately(monkeypatch):
    monkeypatch.setattr(jit_module, "CACHE_SIZE", 2)
    f, traces = counted(lambda x: x * 2)
    a, b, c = np.ones(1), np.ones(2), np.ones(3)
    f(a)
    program_b = weakref.ref(f.lower(b))
    f(a)                                     # a was used since b was built
    f(c)                                     # evicts b
    gc.collect()
    assert program_b() is None               # its program was freed
    f(a), f(c)
    assert len(traces) == 3 and len(f._cache) == 2
    f(b)                                     # traced again
    assert len(traces) == 4 and len(f._cache) == 2


def test_the_cache_size_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("TRACER_JIT_CACHE_SIZE", raising=False)
    assert Settings.jit_cache_size.read() == 128
    monkeypatch.setenv("TRACER_JIT_CACHE_SIZE", "7")
    assert Settings.jit_cache_size.read() == 7
    for bad in ("0", "-3", "many"):
        monkeypatch.setenv("TRACER_JIT_CACHE_SIZE", bad)
        with pytest.raises(ArgumentError, match="TRACER_JIT_CACHE_SIZE must be an integer of "
                                                "at least 1, got"):
            Settings.jit_cache_size.read()


def test_constants_are_private_copies():
    c = np.arange(3.0)
    f = tracer.jit(lambda x: (x + c, c * 1), backend="numpy")
    out1, const1 = f(np.zeros(3))
    c[0] = 100.0                       # mutating the captured array after tracing...
    const1 += 1                        # ...or a returned constant...
    out2, const2 = f(np.zeros(3))      # ...changes nothing cached
    np.testing.assert_array_equal(out2, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(const2, [0.0, 1.0, 2.0])


def test_jit_accepts_callables_without_a_name():
    f = tracer.jit(functools.partial(lambda a, b: a - b, 10), backend="numpy")
    assert f(np.float64(3)) == 7
    assert "partial" in repr(f)
    with pytest.raises(ArgumentError, match="jit"):
        f(np.ones(2), "x")


@pytest.fixture
def two_output_kernel():
    registry.register_shape_rule("test_minmax", lambda x: (x, x))
    registry.register_kernel("test_minmax", "numpy",
                             lambda x: (np.minimum(x, 0), np.maximum(x, 0)))
    yield
    registry.unregister_kernel("test_minmax", "numpy")
    registry.unregister_shape_rule("test_minmax")


def test_run_kernel_runs_concrete_inputs_and_emits_nodes_for_traced_ones(two_output_kernel):
    x = np.arange(6.0).reshape(2, 3) - 2

    def f(v):
        lo, _ = tracer.run_kernel("test_minmax", [v])
        return tracer.run_kernel("reduce_sum", [tracer.run_kernel("add", [lo, x])],
                                 {"axes": (1,)})
    want = np.sum(np.minimum(x, 0) + x, axis=1)
    np.testing.assert_array_equal(f(x), want)                               # eager
    lo, hi = tracer.run_kernel("test_minmax", [x])                          # a tuple
    np.testing.assert_array_equal(hi, np.maximum(x, 0))
    np.testing.assert_array_equal(tracer.jit(f, backend="numpy")(x), want)
    g = tracer.make_graph(f)(x)
    assert [n.kernel for n in g.nodes] == ["test_minmax", "add", "reduce_sum"]
    assert g.nodes[2].attrs == {"axes": (1,)} and len(g.nodes[0].outputs) == 2
    assert len(g.constvars) == 1                 # the concrete operand became a constant


def test_plain_array_calls_and_other_calls_keep_apart():
    f, traces = counted(lambda x, y: x * y)
    a = np.arange(3, dtype=np.float32)

    class Sub(np.ndarray):
        pass
    assert f(a, a).dtype == np.float32 and len(traces) == 1
    assert f(a, 2.0).dtype == np.float32 and len(traces) == 2            # weak scalar
    assert f(a, np.float64(2)).dtype == np.float64 and len(traces) == 3  # numpy scalar
    np.testing.assert_array_equal(f(a, a.view(Sub)), a * a)              # subclass
    f(a, a), f(a, 2.0)
    assert len(traces) == 4
    g = tracer.jit(lambda x, y: (x + y, {"d": x - y}))                  # llvm backend
    s, d = g(np.arange(12.0)[::2], np.ones(6))                           # a strided input
    np.testing.assert_array_equal(s, np.arange(0.0, 12.0, 2) + 1)
    np.testing.assert_array_equal(d["d"], np.arange(0.0, 12.0, 2) - 1)


def test_jit_of_one_function_shares_its_cache_across_jit_objects():
    """`jit(f)(x)` written inside a loop traces once (JAX's global cache); other options,
    another function or a non-weakrefable callable get caches of their own, and the cache
    goes with the function."""
    traces = []

    def f(x, n=1):
        traces.append(1)
        return x * n

    x = np.arange(3.0)
    for _ in range(4):
        np.testing.assert_array_equal(tracer.jit(f)(x), x)
    assert len(traces) == 1 and tracer.jit(f).cache_info().hits == 3
    tracer.jit(f, static_argnums=1)(x, 2)
    tracer.jit(f, backend="numpy")(x)
    assert len(traces) == 3

    class Slotted:
        __slots__ = ()

        def __call__(self, x):
            traces.append(1)
            return x + 1
    c = Slotted()
    tracer.jit(c)(x)
    tracer.jit(c)(x)
    assert len(traces) == 5
    shared = importlib.import_module("tracer.jit_cache").Shared._all
    keys = [k for k in shared if k[0] == id(f)]
    assert len(keys) == 3
    del f
    gc.collect()
    assert not any(k in shared for k in keys)


def test_a_jitted_function_called_inside_a_trace_and_at_top_level_traces_once():
    """Called on traced values inside another jit and on arrays of the same types at top
    level, a jitted function takes one cache entry (JAX's jax#7155)."""
    counts = collections.Counter()

    @tracer.jit
    def inner(s):
        counts["inner"] += 1
        return 2 * s

    @tracer.jit
    def outer(x):
        counts["outer"] += 1
        y = x
        for _ in range(10):
            y = inner(y)
        return x + y

    s = np.arange(5, dtype=np.uint32)
    np.testing.assert_array_equal(outer(s), s * 1025)
    outer(s)
    np.testing.assert_array_equal(inner(s), 2 * s)
    assert counts == {"inner": 1, "outer": 1}
    inner(1.0)                          # a Python scalar is weakly typed: its own entry
    assert counts["inner"] == 2


def test_donated_arguments_no_result_can_take_are_named_in_a_warning():
    """JAX's warning: a donated argument whose shape and dtype no result has is not
    reused; each result takes at most one donated argument."""
    x, y = np.ones(2, np.float32), np.arange(2, dtype=np.int32)
    f = tracer.jit(lambda x, y: x.sum() + y.sum(), donate_argnums=0)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: "
                                         r"float32\[2\]\. ") as caught:
        f(x, y)
    assert caught[0].filename == __file__
    g = tracer.jit(lambda a, b: a * 2, donate_argnames=("a", "b"))
    with pytest.warns(UserWarning, match=r"not usable: float32\[2\]\. "):
        np.testing.assert_array_equal(g(x.copy(), x.copy()), 2 * x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tracer.jit(lambda a: a * 2, donate_argnums=0)(x.copy())


def test_repr_is_jax_s_and_never_raises():
    def my_function():
        return
    assert repr(tracer.jit(my_function)) == f"<PjitFunction of {my_function!r}>"

    class Unprintable:
        def __call__(self):
            return 0

        def __repr__(self):
            raise ValueError("invalid repr")
    jitted = tracer.jit(Unprintable())
    assert repr(jitted) == "<PjitFunction>"
    del jitted.__wrapped__
    assert repr(jitted) == "<PjitFunction>"

"""tracer.debug.print, tracer.debug.callback and tracer.pure_callback, as JAX's: eagerly
they run; under jit (either backend) they run when the program runs, every call, with
the call's values; inside scan/fori_loop/while_loop/cond once per iteration or branch
taken; under grad/jvp on the primal values, once; under vmap as JAX's rules say; a
callback's exception reaches the caller naming the callback."""
import threading

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import GradientError, KernelError
from tracer import lax
from tracer.callbacks import CallbackError

BACKENDS = ("numpy", "llvm")
X = np.arange(3, dtype=np.float32)


@pytest.fixture(autouse=True)
def compile_now(monkeypatch):
    """Native code from the first call (no interpreted calls while it compiles)."""
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "0")


def spec(x):
    return tracer.ShapeDtypeStruct(x.shape, x.dtype)


def test_eagerly_they_just_run(capsys):
    seen = []
    tracer.debug.print("x = {x}, {}", 7, x=X)
    tracer.debug.callback(lambda a, b=None: seen.append((a, b)), X, b=2)
    out = tracer.pure_callback(np.sin, spec(X), X)
    assert capsys.readouterr().out == "x = [0. 1. 2.], 7\n"
    assert seen[0][0].tolist() == [0, 1, 2] and int(seen[0][1]) == 2
    np.testing.assert_allclose(out, np.sin(X))


@pytest.mark.parametrize("backend", BACKENDS)
def test_under_jit_they_run_at_every_call_with_its_values(backend, capsys):
    seen = []

    def f(x):
        tracer.debug.print("x = {x}", x=x)
        y = tracer.pure_callback(lambda a: np.cos(a), spec(x), x)
        tracer.debug.callback(lambda a, b: seen.append((a, b)), x, y)
        tracer.debug.print("constant {}", 5)        # no traced argument: still each call
        return y * 2
    g = tracer.jit(f, backend=backend)
    assert capsys.readouterr().out == ""                   # nothing while tracing
    for x in (X, X + 1):
        np.testing.assert_allclose(g(x), 2 * np.cos(x), rtol=1e-6)
        assert capsys.readouterr().out == f"x = {x}\nconstant 5\n"
    assert [a.tolist() for a, _ in seen] == [X.tolist(), (X + 1).tolist()]
    assert isinstance(seen[0][0], np.ndarray) and seen[0][0].dtype == np.float32
    np.testing.assert_allclose(seen[1][1], np.cos(X + 1), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_effects_are_kept_in_order_and_an_unused_pure_callback_is_dropped(backend):
    seen, pure = [], []

    def f(x):
        tracer.debug.callback(lambda: seen.append("first"))
        tracer.pure_callback(lambda a: pure.append(1) or a, spec(x), x)   # unused
        tracer.debug.callback(lambda a: seen.append("second"), x)
        tracer.debug.callback(lambda: seen.append("third"))
        return x + 1
    tracer.jit(f, backend=backend)(X)
    assert seen == ["first", "second", "third"] and pure == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_loops_and_branches_once_per_iteration_or_branch_taken(backend, capsys):
    def f(x):
        def body(c, xi):
            tracer.debug.print("scan {} {}", c, xi)
            y = tracer.pure_callback(lambda a: a * 2, spec(xi), xi)
            return c + y, y
        total, ys = lax.scan(body, np.float32(0), x)
        fori = lax.fori_loop(0, 2, lambda i, a: (tracer.debug.print("fori {}", i), a + 1)[1],
                             total)

        def wbody(c):
            tracer.debug.print("while {}", c)
            return c + 1
        w = lax.while_loop(lambda c: c < 2, wbody, np.int32(0))     # constant: still staged

        def yes(v):
            tracer.debug.print("yes {}", v)
            return v
        c = lax.cond(total > 5, yes, lambda v: (tracer.debug.print("no {}", v), -v)[1], total)
        return ys, fori, w, c
    ys, fori, w, c = tracer.jit(f, backend=backend)(X)
    np.testing.assert_allclose(ys, 2 * X)
    assert float(fori) == 8 and int(w) == 2 and float(c) == 6
    assert capsys.readouterr().out.split("\n") == [
        "scan 0.0 0.0", "scan 0.0 1.0", "scan 2.0 2.0", "fori 0", "fori 1", "while 0",
        "while 1", "yes 6.0", ""]


@pytest.mark.parametrize("backend", BACKENDS)
def test_under_grad_and_jvp_debug_callbacks_see_primals_once(backend):
    seen = []

    def f(x):
        tracer.debug.callback(lambda v: seen.append(v.tolist()), x)

        def body(c, xi):
            tracer.debug.callback(lambda v: seen.append(float(v)), xi)
            return c + tnp.sin(xi) * c, None
        return lax.scan(body, x[0] + 1, x)[0]
    g = tracer.jit(tracer.grad(f), backend=backend)(X)
    assert seen == [[0, 1, 2], 0.0, 1.0, 2.0]
    expect_grad = tracer.grad(lambda x: lax.scan(lambda c, xi: (c + tnp.sin(xi) * c, None),
                                                 x[0] + 1, x)[0])(X)
    np.testing.assert_allclose(g, expect_grad, rtol=1e-5)
    seen.clear()
    tracer.jvp(f, (X,), (np.ones(3, np.float32),))
    assert seen == [[0, 1, 2], 0.0, 1.0, 2.0]


def test_pure_callback_has_no_gradient():
    def f(x):
        return tnp.sum(tracer.pure_callback(np.sin, spec(x), x))
    with pytest.raises(GradientError, match=r"pure_callback\(sin\).*Pure callbacks do not "
                                            r"support JVP.*custom_vjp"):
        tracer.grad(f)(X)

    @tracer.custom_vjp
    def g(x):
        return tracer.pure_callback(np.sin, spec(x), x)
    g.defvjp(lambda x: (g(x), x),
             lambda x, ct: (ct * tracer.pure_callback(np.cos, spec(x), x),))
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(g(x)))(X), np.cos(X), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_under_vmap_debug_callback_runs_per_example_as_jax(backend):
    seen = []

    def f(x, y):
        tracer.debug.callback(lambda a, b: seen.append((a.tolist(), b.tolist())), x, y)
        return x * 2
    tracer.jit(tracer.vmap(f, in_axes=(1, None)), backend=backend)(
        np.arange(4.0).reshape(2, 2), np.float32(9))
    assert seen == [([0.0, 2.0], 9.0), ([1.0, 3.0], 9.0)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method, shapes", [("sequential", [(3,), (3,)]),
                                            ("expand_dims", [(2, 3), (1, 3)]),
                                            ("broadcast_all", [(2, 3), (2, 3)])])
def test_pure_callback_under_vmap_follows_vmap_method(backend, method, shapes):
    calls = []

    def host(a, b):
        calls.append(a.shape)
        calls.append(b.shape)
        return np.sin(a) + b

    def f(x, y):
        return tracer.pure_callback(host, spec(x), x, y, vmap_method=method)
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    out = tracer.jit(tracer.vmap(f, in_axes=(0, None)), backend=backend)(x, y)
    np.testing.assert_allclose(out, np.sin(x) + y, rtol=1e-6)
    assert calls == shapes * (2 if method == "sequential" else 1)


def test_pure_callback_under_vmap_without_vmap_method_raises_as_jax():
    def f(x):
        return tracer.pure_callback(np.sin, spec(x), x)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        tracer.vmap(f)(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("result, message", [
    (lambda a: a.astype(np.float64), r"Incorrect output dtype for return value 0: "
                                     r"Expected: float32, Actual: float64"),
    (lambda a: a[:2], r"Incorrect output shape for return value 0: Expected: \(3,\), "
                      r"Actual: \(2,\)"),
    (lambda a: (a, a), r"structure")])
def test_pure_callback_results_are_checked(backend, result, message):
    def bad_host(a):
        return result(a)

    def f(x):
        return tracer.pure_callback(bad_host, spec(x), x)
    with pytest.raises(CallbackError, match=r"pure_callback\(.*bad_host\).*" + message):
        tracer.jit(f, backend=backend)(X)
    with pytest.raises(CallbackError, match=message):
        f(X)                                            # eagerly too


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exception_in_a_callback_reaches_the_caller_naming_it(backend):
    ran = []

    def failing(i):
        ran.append(int(i))
        if i == 2:
            raise ValueError("boom")

    def f(x):
        return lax.fori_loop(0, 10, lambda i, a: (tracer.debug.callback(failing, i), a + 1)[1],
                             x)
    g = tracer.jit(f, backend=backend)
    with pytest.raises(CallbackError, match=r"debug_callback\(.*failing\) raised "
                                            r"ValueError: boom") as info:
        g(X)
    assert isinstance(info.value, KernelError) and isinstance(info.value, RuntimeError)
    assert isinstance(info.value.__cause__, ValueError)
    assert ran == [0, 1, 2]                              # the loop stopped there
    ran.clear()
    with pytest.raises(CallbackError):                   # and the program still works
        g(X)
    assert ran == [0, 1, 2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_each_get_their_own_callbacks_results(backend):
    results, errors = {}, []

    def worker(tag):
        try:
            g = tracer.jit(lambda x: tracer.pure_callback(
                lambda a: np.full_like(a, tag), spec(x), x) + 0, backend=backend)
            results[tag] = {float(g(X)[0]) for _ in range(100)}
        except Exception as e:          # pragma: no cover
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(float(t),)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == {0.0: {0.0}, 1.0: {1.0}, 2.0: {2.0}}


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="callable"):
        tracer.debug.callback(3, X)
    with pytest.raises(TypeError, match="format"):
        tracer.debug.print(X)
    with pytest.raises(ValueError, match="vmap_method"):
        tracer.pure_callback(np.sin, spec(X), X, vmap_method="bogus")
    with pytest.raises(TypeError, match="shape"):
        tracer.pure_callback(np.sin, 3, X)


def test_the_kernels_facts_live_with_their_ops_and_their_impls_in_lowering():
    import registry
    from registry import families
    for kernel in ("debug_callback", "pure_callback"):
        assert registry.get_shape_rule(kernel).__module__ == "tracer.callbacks"
        assert registry.get_kernel(kernel, "numpy").__module__ == "lowering.host_callbacks"
        assert type(registry.get_kernel(kernel, "llvm")).__module__ == \
            "lowering.llvm.callbacks"
    assert registry.has_effects("debug_callback") and not registry.has_effects("pure_callback")
    assert not families.differentiable("debug_callback")
    assert "effects" in str(registry.describe("debug_callback"))

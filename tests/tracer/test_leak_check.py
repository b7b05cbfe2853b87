"""tracer.checking_leaks (jax.checking_leaks): a traced value kept past its trace, in any
kind of trace, raises "Leaked trace" as the trace ends, naming where it was made and what
holds it; ordinary programs (returned values, tracer's own caches, custom rules) do not;
off, a leak is found only where the value is used; the switch is restored after errors."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax, leak_check
from tracer.errors import UnexpectedTracerError

X = np.arange(1.0, 4.0)
LEAKED = []


@pytest.fixture(autouse=True)
def forget():
    yield
    LEAKED.clear()


def leaky(x):
    y = tnp.sin(x)              # the leaked value is made on this line
    LEAKED.append(y)
    return y * 2


def _custom_jvp_leaky():
    f = tracer.custom_jvp(leaky)
    f.defjvp(lambda p, t: (f(*p), t[0]))
    return tracer.jit(f, backend="numpy")


def _custom_vjp_leaky():
    f = tracer.custom_vjp(lambda x: x * 2)
    f.defvjp(lambda x: (leaky(x), None), lambda _, g: (g * 2,))
    return tracer.grad(lambda x: tnp.sum(f(x)))


TRACES = {
    "jit": lambda: tracer.jit(leaky, backend="numpy")(X),
    "make_graph": lambda: tracer.make_graph(leaky)(X),
    "grad": lambda: tracer.grad(lambda x: tnp.sum(leaky(x)))(X),
    "vjp": lambda: tracer.vjp(leaky, X),
    "jvp": lambda: tracer.jvp(leaky, (X,), (X,)),
    "vmap": lambda: tracer.vmap(leaky)(X),
    "scan": lambda: lax.scan(lambda c, _: (leaky(c), None), X, None, length=2),
    "while_loop": lambda: lax.while_loop(lambda c: tnp.sum(c) < 100.0, leaky, X),
    "fori_loop": lambda: lax.fori_loop(0, 2, lambda i, c: leaky(c), X),
    "cond": lambda: tracer.jit(lambda x: lax.cond(x[0] > 0, leaky, tnp.cos, x),
                               backend="numpy")(X),
    "checkpoint": lambda: tracer.grad(lambda x: tnp.sum(tracer.checkpoint(leaky)(x)))(X),
    "custom_jvp": lambda: _custom_jvp_leaky()(X),
    "custom_vjp": lambda: _custom_vjp_leaky()(X),
}


@pytest.mark.parametrize("kind", TRACES)
def test_a_leak_is_caught_as_its_trace_ends_in_every_kind_of_trace(kind):
    with tracer.checking_leaks():
        with pytest.raises(Exception, match=r"^Leaked trace") as info:
            TRACES[kind]()
    text = str(info.value)
    assert "was created on line:\n  " in text and "(leaky)" in text
    assert "is referred to by <list" in text and "global 'LEAKED' of module" in text


def test_the_reference_chain_names_closures_and_attributes():
    class Holder:
        def __init__(self):
            self.dct = {}

    holder = Holder()

    def sketch(x):
        def foo():
            return x
        holder.dct["hi"] = [foo]
        return x

    with tracer.checking_leaks(), pytest.raises(Exception) as info:
        tracer.vmap(sketch)(X)
    text = str(info.value)
    assert "This Tracer with object id" in text and "was an argument" in text
    assert "(foo) closed-over variable x" in text
    assert "['hi']" in text and ".dct" in text


def test_a_leak_from_an_inner_jit_into_its_callers_list():
    def f(x):
        lst = []

        @tracer.jit
        def g(y):
            lst.append(y)
            return y
        return g(x)

    with tracer.checking_leaks(), pytest.raises(Exception, match="Leaked trace"):
        tracer.jit(f, backend="numpy")(X)


def test_ordinary_programs_are_not_leaks():
    def loss(w, x):
        h = tnp.tanh(x @ w["a"] + 1.0)
        return tnp.mean((h @ w["b"]) ** 2)

    w = {"a": np.ones((3, 4)) / 4, "b": np.ones((4, 2))}
    xs = np.ones((5, 3))
    t = tracer.custom_jvp(lambda y: y)
    t.defjvp(lambda p, tt: (p[0], tt[0]))   # (JAX's ..._avoids_false_positive_custom_jvp)
    with tracer.checking_leaks():
        step = tracer.jit(lambda w, x: tracer.tree_util.tree_map(
            lambda p, g: p - 0.1 * g, w, tracer.grad(loss)(w, x)), backend="numpy")
        w2 = step(step(w, xs), xs)
        tracer.vmap(tracer.grad(loss), in_axes=(None, 0))(w2, xs[:, None, :])
        tracer.jit(lambda y: t(y), backend="numpy")(3.0)
        tracer.jvp(lambda x: lax.scan(lambda c, _: (c, None), x, None, length=1)[0],
                   (3.0,), (1.0,))
        tracer.vmap(lambda x: lax.scan(lambda c, _: (c * x, None), x, None, length=2))(X)
        tracer.jit(tracer.checkpoint(lambda x: x + 1), backend="numpy")(X)
        tracer.jit(lambda x: tracer.vjp(tracer.checkpoint(
            lambda z: tracer.nn.relu(1.0 * z)), x)[0], backend="numpy")(1.0)
        tracer.jacfwd(tracer.jacrev(lambda x: tnp.sum(tnp.sin(x) * 2.0 + x ** 2)))(X)
        out = tracer.jit(lambda x: (x * 2.0, {"k": x + 2.0}), backend="numpy")(X)
    np.testing.assert_allclose(out[1]["k"], X + 2)


def test_off_a_leak_is_found_only_where_it_is_used():
    assert not leak_check.checking()
    tracer.jit(leaky, backend="numpy")(X)       # no error at the trace's end
    with pytest.raises(UnexpectedTracerError, match="escaped the function"):
        tracer.jit(lambda x: x + LEAKED[0], backend="numpy")(X)


def test_the_switch_is_restored_after_an_error():
    with pytest.raises(ValueError):
        with tracer.checking_leaks():
            assert leak_check.checking()
            raise ValueError("boom")
    assert not leak_check.checking()
    leak_check.set_checking(True)
    try:
        with tracer.checking_leaks():
            pass
        assert leak_check.checking()
    finally:
        leak_check.set_checking(False)


def test_a_failing_trace_reports_its_own_error_not_a_leak():
    def bad(x):
        LEAKED.append(x)
        raise KeyError("mine")
    with tracer.checking_leaks(), pytest.raises(KeyError, match="mine"):
        tracer.jit(bad, backend="numpy")(X)


def test_a_value_escaping_a_checkpoint_is_caught_where_it_is_used():
    """JAX's test_escaped_tracer_remat: there `seq[0] += 1` inside the checkpointed g
    makes a value of g's trace; here it adds to the jit trace's value in the jit trace
    (ops run in the innermost trace among their inputs), so nothing leaks and the result
    is right. A value made from g's own argument does leak, and its use raises."""
    def jax_form():
        seq = [tnp.zeros([])]

        def g():
            seq[0] += 1
            return seq[0]
        tracer.checkpoint(g)()
        tracer.checkpoint(lambda: g())()
        return seq[0]
    assert float(tracer.jit(jax_form, backend="numpy")()) == 2.0

    def leaking(x):
        seq = [x]

        def g(y):
            seq[0] = seq[0] * y
            return seq[0]
        tracer.checkpoint(g)(x)
        return tracer.checkpoint(lambda y: g(y))(x)
    with pytest.raises(UnexpectedTracerError, match=r"\(g\)"):
        tracer.jit(leaking, backend="numpy")(2.0)

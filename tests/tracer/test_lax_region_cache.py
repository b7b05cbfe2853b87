"""A function given to lax.cond/switch/while_loop is traced once per input types and trace context
(tracer/lax/_regions.py: cached_region), as JAX's control flow caches traced functions;
what would make a kept graph wrong is never kept, and a re-registered kernel retraces."""
import numpy as np

import registry
import tracer
import tracer.lax as lax
import tracer.numpy as tnp


def counted(fun):
    calls = []

    def f(*args):
        calls.append(1)
        return fun(*args)
    return f, calls


def test_a_branch_is_traced_once_per_types_and_trace_context():
    g, calls = counted(lambda x: tnp.dot(x, x))
    x = np.ones((2, 2), np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(lax.cond(True, g, g, x), x @ x)
    assert len(calls) == 1
    lax.switch(1, [g, g, g], x)
    assert len(calls) == 1
    lax.cond(True, g, g, np.ones((3, 3), np.float32))          # new types: traced again
    assert len(calls) == 2
    with tracer.default_matmul_precision("float32"):           # a new trace context too
        lax.cond(True, g, g, x)
    assert len(calls) == 3
    lax.cond(True, g, g, x)
    assert len(calls) == 3


def test_a_while_loop_traces_its_functions_once_per_types():
    body, body_calls = counted(lambda v: v * 2.0)
    cond, cond_calls = counted(lambda v: v < 100.0)
    for _ in range(3):
        assert lax.while_loop(cond, body, 1.0) == 128.0
    assert (len(body_calls), len(cond_calls)) == (1, 1)


def test_a_branch_closing_over_a_traced_value_is_traced_at_each_trace():
    @tracer.jit
    def f(x, y):
        return lax.cond(True, lambda v: v + y, lambda v: v - y, x)
    assert f(1.0, 2.0) == 3.0 and f(1.0, 5.0) == 6.0

    def outer(y):
        def branch(v):
            return v * y                # closes over the vmap's traced y
        return lax.cond(True, branch, branch, 1.0)
    np.testing.assert_array_equal(tracer.vmap(outer)(np.arange(3.0)), [0.0, 1.0, 2.0])


def test_a_branch_reading_the_axis_size_is_traced_at_each_size():
    def branch(x):
        return x * lax.axis_size("i")

    def f(x):
        return lax.cond(True, branch, branch, x)
    assert tracer.vmap(f, axis_name="i")(np.ones(2)).tolist() == [2.0, 2.0]
    assert tracer.vmap(f, axis_name="i")(np.ones(3)).tolist() == [3.0, 3.0, 3.0]


def test_re_registering_a_kernel_retraces_the_branches_that_emitted_it():
    g, calls = counted(lambda x: tnp.exp(x))
    x = np.zeros(2)
    lax.cond(True, g, g, x)
    original = registry.get_kernel("exp", "numpy")
    registry.register_kernel("exp", "numpy", lambda v: np.full_like(v, 7.0))
    try:
        lax.cond(True, g, g, x)
        assert len(calls) == 2
    finally:
        registry.register_kernel("exp", "numpy", original)
    np.testing.assert_array_equal(lax.cond(True, g, g, x), [1.0, 1.0])


def test_functions_without_weak_references_are_traced_each_time():
    class Branch:
        __slots__ = ("calls",)

        def __init__(self):
            self.calls = 0

        def __call__(self, x):
            self.calls += 1
            return x + 1
    b = Branch()
    assert lax.cond(True, b, b, 1.0) == 2.0 and lax.cond(True, b, b, 1.0) == 2.0
    assert b.calls == 2

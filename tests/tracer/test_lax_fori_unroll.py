"""fori_loop's unroll= keyword, as jax.lax.fori_loop: a hint passed to scan when the
bounds are static; with traced bounds only the no-op values are accepted."""
import numpy as np
import pytest

import tracer
from tracer import lax


def f(x, unroll=2):
    return lax.fori_loop(0, 5, lambda i, v: v * 2 + i, x, unroll=unroll)


@pytest.mark.parametrize("unroll", [None, False, 1, 2, True])
@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_unroll_keeps_the_result(unroll, backend):
    run = (lambda x: f(x, unroll)) if backend is None else tracer.jit(
        lambda x: f(x, unroll), backend=backend)
    assert float(run(1.0)) == 58.0                   # 2 ** 5 + 26


def test_unroll_reaches_scan_and_differentiates():
    assert "unroll=2" in str(tracer.make_graph(f)(1.0))
    assert float(tracer.grad(f)(1.0)) == 32.0
    np.testing.assert_array_equal(tracer.vmap(f)(np.array([1.0, 2.0])), [58.0, 90.0])


def test_unroll_with_traced_bounds():
    g = tracer.jit(lambda n, x, u: lax.fori_loop(0, n, lambda i, v: v * 2, x, unroll=u),
                   static_argnums=2)
    assert float(g(3, 1.0, 1)) == 8.0
    with pytest.raises(ValueError, match="unroll=3"):
        g(3, 1.0, 3)

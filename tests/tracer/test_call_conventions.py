"""jit's call conventions: keyword arguments, static_argnames, methods (donate_argnums:
tests/lowering/test_memory_plan.py);
grad with keyword arguments."""
import dataclasses

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError


def counted(fun, **jit_kwargs):
    traces = []

    def wrapped(*args, **kwargs):
        traces.append(1)
        return fun(*args, **kwargs)
    wrapped.__signature__ = __import__("inspect").signature(fun)
    return tracer.jit(wrapped, **jit_kwargs), traces


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_keyword_arguments_are_traced_like_positional_ones(backend):
    f, traces = counted(lambda x, scale=1.0, *, shift: x * scale + shift, backend=backend)
    x = np.arange(3.0)
    np.testing.assert_allclose(f(x, shift=np.ones(3)), x + 1)
    np.testing.assert_allclose(f(x, 2.0, shift=np.zeros(3)), x * 2)
    np.testing.assert_allclose(f(x, scale=3.0, shift=np.zeros(3)), x * 3)
    np.testing.assert_allclose(f(x, scale=4.0, shift=np.zeros(3)), x * 4)   # cached
    assert len(traces) == 3


def test_static_argnames_cover_keyword_and_positional_uses():
    f, traces = counted(lambda x, mode="add": x + 1 if mode == "add" else x * 2,
                        static_argnames="mode")
    x = np.arange(3.0)
    np.testing.assert_allclose(f(x, mode="mul"), x * 2)
    np.testing.assert_allclose(f(x, "mul"), x * 2)          # positional: still static
    np.testing.assert_allclose(f(x), x + 1)
    assert len(traces) == 3
    g = tracer.jit(lambda x, n: x * n, static_argnums=1)
    np.testing.assert_allclose(g(x, n=3), x * 3)            # by name: still static
    with pytest.raises(ArgumentError, match="static_argnames must be"):
        tracer.jit(lambda x: x, static_argnames=(1,))
    with pytest.raises(ArgumentError, match="takes only 1 positional"):
        tracer.jit(lambda x: x, static_argnums=2)


@dataclasses.dataclass
class Scaled:
    w: object


tracer.tree_util.register_dataclass(Scaled)


class Plain:
    def __init__(self, k):
        self.k = k

    @tracer.jit
    def apply(self, x, *, power=1):
        return x ** power * self.k


def test_jit_on_methods_binds_self():
    Scaled.apply = tracer.jit(lambda self, x: x * self.w)
    s = Scaled(np.full(3, 2.0))
    x = np.arange(3.0)
    np.testing.assert_allclose(s.apply(x), x * 2)
    s.w = np.full(3, 5.0)                             # a pytree self is an argument
    np.testing.assert_allclose(s.apply(x), x * 5)
    a, b = Plain(2.0), Plain(3.0)                     # a plain self is static
    np.testing.assert_allclose(a.apply(x), x * 2)
    np.testing.assert_allclose(b.apply(x, power=2), x ** 2 * 3)
    assert Plain.apply.cache_info().misses == 2


def test_grad_passes_keyword_arguments_undifferentiated():
    def loss(w, x, *, scale):
        return tnp.sum(w * x) * scale
    w, x = np.ones(3), np.arange(3.0)
    np.testing.assert_allclose(tracer.grad(loss)(w, x, scale=2.0), 2 * x)
    v, g = tracer.value_and_grad(loss)(w, x, scale=np.float64(3.0))
    assert v == 9.0 and np.allclose(g, 3 * x)
    np.testing.assert_allclose(tracer.jit(tracer.grad(loss))(w, x, scale=2.0), 2 * x)

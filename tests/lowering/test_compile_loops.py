"""Compile time of loops: a math function called inside a loop body calls the shared,
precompiled library (lowering.llvm.mathlib_shared) instead of an inlined copy, which LLVM
would unroll over the body's small static trip count into several vectorized copies
(W10's 1,000-step loop: a quarter of its LLVM time). Outside loops a few calls stay
inlined."""
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import target
from tracer import lax

X = np.linspace(-2, 2, 64, dtype=np.float32)
INLINED = "define internal float @tracer.tanh.f32("
SHARED = re.compile(r"^declare <\d+ x float> @tracer\.tanh\.f32\.v\d+\(", re.M)


def _step(v):
    return tnp.tanh(v) * 1.5 + 0.25


def _reference(n):
    v = X.astype(np.float64)
    for _ in range(n):
        v = np.tanh(v) * 1.5 + 0.25
    return v


LOOPS = {
    "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, v: _step(v), x),
    "scan": lambda x: lax.scan(lambda c, _: (_step(c), None), x, None, length=3)[0],
    "while_loop": lambda x: lax.while_loop(lambda c: c[0] < 3,
                                           lambda c: (c[0] + 1, _step(c[1])), (0, x))[1],
}


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_math_in_a_loop_body_calls_the_shared_library(kind):
    f = tracer.jit(LOOPS[kind])
    np.testing.assert_allclose(f(X), _reference(3), rtol=1e-5, atol=1e-5)
    text = f.lower(X).as_text()
    assert INLINED not in text and SHARED.search(text)
    optimized = str(target._optimize(text))
    assert re.search(r"call [^\n]*<\d+ x float> @tracer\.tanh\.f32\.v\d+\(", optimized)


def test_the_same_math_outside_a_loop_stays_inlined():
    f = tracer.jit(_step)
    np.testing.assert_allclose(f(X), _reference(1), rtol=1e-5, atol=1e-5)
    text = f.lower(X).as_text()
    assert INLINED in text and not SHARED.search(text)

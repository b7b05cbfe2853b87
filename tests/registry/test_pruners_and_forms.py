"""dce's pruners and autodiff's differentiable forms are versioned tables: re-registering
one after a jit call makes the next call rebuild and use the new one."""
import numpy as np

import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import ArgumentError
from registry.families import PRUNERS
from tracer import autodiff, lax


def _loop(x):
    """A scan whose stacked ys nothing reads: dce prunes it with scan's pruner."""
    carry, _ = lax.scan(lambda c, v: (c + tnp.sin(v), c * v), x[0], x)
    return carry


def _counting(table, kernel, register):
    """Re-register `kernel`'s entry of `table` as a wrapper that counts its uses; returns
    (counts, restore)."""
    old, calls = table.get(kernel), []

    def counted(*args):
        calls.append(args)
        return old(*args)
    register(kernel, counted)
    return calls, lambda: register(kernel, old)


def test_a_new_pruner_is_used_by_the_next_jitted_call():
    f = tracer.jit(_loop, backend="numpy")
    x = np.linspace(0.1, 1, 4).astype(np.float32)
    want = f(x)
    calls, restore = _counting(PRUNERS, "scan", registry.register_pruner)
    try:
        np.testing.assert_allclose(f(x), want)
        assert calls, "the jit entry built with the old pruner was reused"
    finally:
        restore()


def test_a_new_differentiable_form_is_used_by_the_next_jitted_call():
    f = tracer.jit(tracer.grad(lambda x: tnp.sum(_loop(x))), backend="numpy")
    x = np.linspace(0.1, 1, 4).astype(np.float32)
    want = f(x)
    calls, restore = _counting(autodiff.FORMS, "scan",
                                autodiff.register_differentiable_form)
    try:
        np.testing.assert_allclose(f(x), want)
        assert calls, "the jit entry built with the old form was reused"
    finally:
        restore()


def test_bad_registrations_name_the_call():
    with pytest.raises(ArgumentError, match="register_pruner"):
        registry.register_pruner("scan", None)
    with pytest.raises(ArgumentError, match="register_differentiable_form"):
        autodiff.register_differentiable_form("scan", "not a function")

"""JAX's top-level names beside the transforms: disable_jit (this thread's jitted functions
run their Python inside the block, other threads' keep running compiled, and jit is as
before afterwards, with no retrace), device_put, device_get, jacobian, custom_gradient
and linear_transpose."""
import threading

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp


def counting():
    seen = []

    @tracer.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2
    return f, seen


def test_inside_the_block_the_python_runs_on_values():
    f, seen = counting()
    x = np.ones(3)
    f(x)
    with tracer.disable_jit():
        np.testing.assert_array_equal(f(x), 2 * x)
        with tracer.disable_jit(False):
            f(x)                                  # compiled again: no Python
        f(x)
    f(x)
    assert seen == ["Tracer", "ndarray", "ndarray"]
    assert f.cache_info().misses == 1             # nothing was retraced


def test_other_threads_keep_their_compiled_code():
    f, seen = counting()
    x = np.ones(2)
    f(x)
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        for _ in range(3):
            f(x)
        done.set()
    t = threading.Thread(target=other)
    t.start()
    with tracer.disable_jit():
        inside.set()
        done.wait(10)
        f(x)
    t.join()
    assert seen == ["Tracer", "ndarray"]


def test_device_put_copies_and_device_get_reads():
    x = np.arange(3.0)
    put = tracer.device_put({"a": x, "b": [1.5]})
    assert not np.shares_memory(put["a"], x) and put["b"][0] == np.float64(1.5)
    assert tracer.device_put(x, may_alias=True) is x
    class CpuDevice:
        platform = "cpu"

    class GpuDevice:
        platform = "gpu"
    put = tracer.device_put({"a": x, "b": x}, {"a": CpuDevice(), "b": None})
    assert put["a"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="Received invalid value 'cpu'"):
        tracer.device_put(x, "cpu")                             # as JAX: a device object
    with pytest.raises(ValueError, match="one CPU device"):
        tracer.device_put(x, device=GpuDevice())
    with pytest.raises(ValueError, match=r"Mismatch details \(2 found\)"):
        tracer.device_put({"a": x, "b": x}, device={"a": [None, None], "b": (None, None)})
    with pytest.raises(ValueError, match="may_alias and donate cannot be True"):
        tracer.device_put(x, may_alias=True, donate=True)
    got = tracer.device_get((np.float32(2), x, 2))
    assert isinstance(got[0], np.ndarray) and got[1] is x and got[2] == 2
    assert tracer.jit(lambda v: tracer.device_put(v) + 1)(x).tolist() == [1, 2, 3]


def test_jacobian_and_custom_gradient_are_jax_s_names():
    np.testing.assert_array_equal(tracer.jacobian(tnp.sin)(np.zeros(2)), np.eye(2))

    @tracer.custom_gradient
    def g(x):
        return tnp.sin(x), lambda dy: dy * 3.0
    assert tracer.grad(g)(1.0) == 3.0 and g(0.0) == 0.0


# ---- linear_transpose --------------------------------------------------------------------

def test_linear_transpose_of_linear_maps():
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(tracer.linear_transpose(lambda v: w @ v, np.zeros(2))(
        np.array([1.0, -1.0]))[0], w.T @ [1, -1])
    abstract = tracer.ShapeDtypeStruct((3,), np.float32)
    (z,) = tracer.linear_transpose(lambda x: 2 * x, abstract)(np.arange(3, dtype=np.float32))
    assert z.dtype == np.float32 and z.tolist() == [0, 2, 4]
    assert tracer.linear_transpose(lambda x: 2 * x, 1)(3) == (6,)            # int -> int
    assert tracer.linear_transpose(lambda x: x[0], [1.0, 2.0])(3.0) == ([3.0, 0.0],)
    f = tracer.jit(lambda x: (2 * x, x > 0))
    assert tracer.linear_transpose(lambda x: f(x)[0], 1.0)(1.0) == (2.0,)


def test_linear_transpose_passes_through_jit_and_checks_its_cotangent():
    t = tracer.jit(lambda f, x: tracer.linear_transpose(f, x), static_argnums=0)(
        lambda x: 2.0 * x, 1.0)
    assert tracer.jit(lambda f, x: f(x))(t, 3.0) == (6.0,)
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        tracer.linear_transpose(lambda x: [x, x], 1.0)(1.0)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        tracer.linear_transpose(lambda x: tnp.stack([x, x]), 1.0)(1.0)


def test_linear_transpose_refuses_what_has_no_transpose():
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        tracer.linear_transpose(lambda x: 2.0 * x, 1)
    with pytest.raises(TypeError, match="not linear in its arguments"):
        tracer.linear_transpose(lambda x: x * x, 1.0)
    with pytest.raises(TypeError, match="not linear in its arguments"):
        tracer.linear_transpose(lambda x: tnp.where(x > 0, x, 0.0), np.ones(2))


def test_static_argnums_and_argnames_both_given_are_taken_as_written():
    """api_test's test_jit_with_mismatched_static_argnames: given both, neither is
    completed from the other through the signature (they may disagree), as in JAX."""
    seen = []

    def f(x, y):
        seen.append((isinstance(x, tracer.Tracer), isinstance(y, tracer.Tracer)))
        return 1
    mixed = tracer.jit(f, static_argnums=(1,), static_argnames="x")
    mixed(2, "foo")
    mixed(1, y=3)
    mixed(x="foo", y=3)
    assert seen == [(True, False), (True, True), (False, True)]

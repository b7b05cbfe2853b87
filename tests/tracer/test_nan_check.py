"""tracer.debug_nans / tracer.debug_infs (jax_debug_nans, jax_debug_infs): a NaN (Inf)
result of an eager op, a jitted call (either backend) or an eager transform raises
FloatingPointError in JAX's words, a jitted call naming the first node that made it and
the user's line; off, results pass as they are and jit's cached path is not held; the
switches are restored after errors."""
import inspect
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import jit_disabled, nan_check

X = np.array([-1.0, 1.0])


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # NumPy's own about log(-1)
        yield


def f(x):
    y = x * 2.0
    z = tnp.log(y)              # the first NaN (or -Inf at 0) is made on this line
    return z + 1.0


def line_of(text):
    lines, start = inspect.getsourcelines(f)
    return start + next(i for i, s in enumerate(lines) if text in s)


def test_an_eager_op_names_its_kernel_and_line():
    with tracer.debug_nans(True):
        with pytest.raises(FloatingPointError,
                           match=rf"^invalid value \(nan\) encountered in log \(at "
                                 rf".*test_nan_check.py:{line_of('tnp.log')} \(f\)"):
            f(X)
        tnp.log(np.array([0.0]))        # an Inf is not a NaN


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_a_jitted_call_names_the_first_node_that_made_it(backend):
    g = tracer.jit(f, backend=backend)
    with tracer.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            g(X)
    text = str(info.value)
    assert text.startswith("invalid value (nan) encountered in jit(f)")
    assert "'log' created at " in text and f"test_nan_check.py:{line_of('tnp.log')} (f)" in text
    with tracer.debug_infs():
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered "
                                                     r"in jit\(f\).*'log'"):
            g(np.array([0.0]))
        np.testing.assert_allclose(g(np.array([0.5])), 1.0)


def test_a_nan_constant_is_found_in_the_node_it_enters():
    g = tracer.jit(lambda x: x * 3.0 + tnp.nan, backend="numpy")
    with tracer.debug_nans(True), pytest.raises(FloatingPointError, match="'add'"):
        g(1.0)


def test_an_eager_transform_checks_the_nodes_it_runs():
    with tracer.debug_infs(True), pytest.raises(FloatingPointError, match=r"\(inf\).*'div'"):
        tracer.grad(lambda x: tnp.sum(tnp.sqrt(x)))(np.array([0.0, 1.0]))


def test_off_values_pass_and_the_cached_call_path_is_free():
    g = tracer.jit(f, backend="numpy")
    assert np.isnan(g(X)[0])
    with tracer.debug_nans(True):
        assert jit_disabled.OPEN[0] == 1        # calls take the checking path
        with tracer.debug_infs(True):
            assert jit_disabled.OPEN[0] == 1
    assert jit_disabled.OPEN[0] == 0
    assert np.isnan(g(X)[0]) and np.isnan(f(X)[0])
    assert g(np.arange(2)).dtype.kind == "f"


def test_switches_are_restored_after_an_error():
    with pytest.raises(FloatingPointError):
        with tracer.debug_nans(True), tracer.debug_infs(True):
            tracer.jit(f, backend="numpy")(X)
    assert not nan_check.checking("nan") and not nan_check.checking("inf")
    assert jit_disabled.OPEN[0] == 0
    with pytest.raises(ValueError, match="'nan' or 'inf'"):
        nan_check.set_checking("NaN", True)

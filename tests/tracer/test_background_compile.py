"""Time to first result (tracer.background_compile): a large graph compiles on its own thread while
its first calls run through the NumPy interpreter; then the cache entry runs the compiled
program. A compile held back by an Event makes every step observable, with no timing."""
import threading
import traceback

import numpy as np
import pytest

import registry
import tracer
from ir.errors import ArgumentError, CodegenError
from tracer import background_compile as programs

from compile_fakes import Sevens, chain


def want(x):
    return chain(x, np)


@pytest.fixture
def held(monkeypatch):
    """A backend whose compile waits for `release`; graphs of >= 10 nodes compile in the
    background."""
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "10")
    gate = {"release": threading.Event(), "error": None}

    def compile_graph(graph):
        assert gate["release"].wait(10)
        if gate["error"]:
            raise type(gate["error"])(*gate["error"].args)     # a new one each compile
        return Sevens(graph)
    registry.register_backend("held", compile=compile_graph)
    yield gate
    gate["release"].set()
    registry.unregister_backend("held")


X = np.linspace(-1, 1, 5)


def test_first_calls_interpret_while_compiling_then_the_entry_runs_native_code(held):
    f = tracer.jit(chain, backend="held")
    for _ in range(3):                                   # compile still held back
        np.testing.assert_allclose(f(X), want(X), rtol=1e-12)
    held["release"].set()
    assert isinstance(f.lower(X).program, Sevens)               # lower() waits for the compile
    np.testing.assert_array_equal(f(X), 7.0)
    np.testing.assert_array_equal(f(X), 7.0)            # the hot path, switched for good


def test_small_graphs_and_a_zero_threshold_compile_before_the_first_call(held, monkeypatch):
    held["release"].set()
    np.testing.assert_array_equal(tracer.jit(lambda x: x + 1, backend="held")(X), 7.0)
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "0")
    np.testing.assert_array_equal(tracer.jit(chain, backend="held")(X), 7.0)


def test_a_failed_background_compile_raises_on_the_calls_after_it(held):
    held["error"] = CodegenError("no code today")
    f = tracer.jit(chain, backend="held")
    np.testing.assert_allclose(f(X), want(X), rtol=1e-12)
    held["release"].set()
    for call in (lambda: f.lower(X), lambda: f(X)):
        with pytest.raises(CodegenError, match="no code today"):
            call()


def test_a_failed_background_compile_is_not_kept(held):
    """Each call after the failure compiles for itself: a fresh error whose traceback does
    not grow call by call, and native code once the failure has passed."""
    held["error"] = CodegenError("no code today")
    f = tracer.jit(chain, backend="held")
    f(X)
    held["release"].set()
    with pytest.raises(CodegenError):
        f.lower(X)                          # waits for the background compile
    errors = []
    for _ in range(10):
        with pytest.raises(CodegenError, match="no code today") as caught:
            f(X)
        errors.append(caught.value)
    assert len({id(e) for e in errors}) == len(errors)
    assert len({len(list(traceback.walk_tb(e.__traceback__))) for e in errors}) == 1
    held["error"] = None
    np.testing.assert_array_equal(f(X), 7.0)
    assert isinstance(f.lower(X).program, Sevens)


def test_llvm_results_before_and_after_the_switch(monkeypatch):
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "10")
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    f = tracer.jit(chain)
    first = f(x)
    text = f.lower(x).as_text()                        # waits: a native module
    assert "define" in text
    for got in (first, f(x)):
        np.testing.assert_allclose(got, want(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_the_threshold_setting_is_checked(monkeypatch):
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "many")
    with pytest.raises(ArgumentError, match="TRACER_BACKGROUND_COMPILE must be a non-neg.*'many'"):
        tracer.jit(chain)(X)


def test_size_counts_the_nodes_of_regions():
    g = tracer.make_graph(lambda x: tracer.lax.fori_loop(0, 3, lambda i, v: chain(v), x))(X)
    assert programs.size(g) > len(g.nodes) + 16

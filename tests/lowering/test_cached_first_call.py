"""A graph whose native code a cache already holds costs no compile: jit's first call
loads it at once instead of interpreting while a background thread 'compiles' it."""
import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import program
from tracer import background_compile


def chain(salt):
    def f(x):
        for k in range(40):
            x = tnp.tanh(x * (1.0 + salt + k / 64)) + 0.25
        return x
    return f


X = np.linspace(-1.0, 1.0, 64).astype(np.float32)


def test_prepare_counts_no_lines_for_code_a_cache_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    graph = tracer.make_graph(chain(0.125))(X)
    finish, seconds = program.prepare(graph)
    assert seconds > 0                              # nothing holds it yet
    finish()
    assert program.prepare(graph)[1] == 0           # loaded: no compile left


def test_a_cached_graph_over_the_threshold_is_not_compiled_in_the_background(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "10")
    monkeypatch.setattr(background_compile, "idle_cores", lambda: 4)
    f = chain(0.375)
    np.asarray(tracer.jit(f)(X))
    tracer.jit(f).lower(X)                          # compiled (in the background or not)

    def no_background(*args):
        raise AssertionError("a cached graph started a background compile")
    monkeypatch.setattr(background_compile, "Compiling", no_background)
    np.testing.assert_allclose(tracer.jit(f)(X), tracer.jit(f, backend="numpy")(X),
                               rtol=1e-5)

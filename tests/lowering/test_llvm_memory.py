"""Native code is freed once nothing uses it, and every in-memory cache of the llvm
backend is bounded: a process that sees many shapes does not grow without limit."""
import gc
import weakref

import numpy as np
import pytest

import lowering.llvm
import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError
from lowering.llvm import caches, compile_graph, graph_cache, target
from lowering.settings import Settings

pytestmark = pytest.mark.filterwarnings("ignore:jit.*different signatures")


@pytest.fixture
def small(monkeypatch):
    """The code, graph and eager caches bounded to 8 entries."""
    for module, name in ((target, "_recent"), (graph_cache, "_memory"),
                         (lowering.llvm, "_eager_cache")):
        monkeypatch.setattr(module, name, caches.Lru(8))
    gc.collect()


def test_native_code_of_a_deleted_function_is_freed(small):
    before = len(target._live)
    f = tracer.jit(lambda x: x[::-1] * 2.0 + 1.0)     # code of its own per length (a flat
    for n in range(1, 301):                             # loop's length is not in its code)
        x = np.linspace(0, 1, n)
        np.testing.assert_allclose(f(x), x[::-1] * 2.0 + 1.0, rtol=1e-14)
    engines = [weakref.ref(loaded.engine) for loaded in target._live.values()]
    assert len(engines) > before + 16 and len(graph_cache._memory) <= 8
    del f
    gc.collect()
    assert len(target._live) <= before + 16         # the most recent (code and eager)
    assert sum(e() is not None for e in engines) <= before + 16     # engines freed
    g = tracer.jit(lambda x: tnp.sin(x) * 3.0)       # compiling and loading still works
    x = np.linspace(0, 1, 301)
    np.testing.assert_allclose(g(x), np.sin(x) * 3.0, rtol=1e-14)


def test_a_live_program_keeps_its_code_and_shares_it(monkeypatch):
    monkeypatch.setattr(target, "_recent", caches.Lru(0))
    monkeypatch.setattr(graph_cache, "_memory", caches.Lru(0))
    x = np.linspace(0, 1, 7)
    graph = tracer.make_graph(lambda x: tnp.exp(x) * 0.25 - 1.0)
    first = compile_graph(graph(x))
    gc.collect()
    second = compile_graph(graph(x))
    assert second.loaded is first.loaded
    key = first.loaded.key
    del first, second
    gc.collect()
    assert key not in target._live
    program = compile_graph(graph(x))
    run = program.run
    del program
    gc.collect()
    np.testing.assert_allclose(run([x])[0], np.exp(x) * 0.25 - 1.0, rtol=1e-14)


def test_eager_program_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(lowering.llvm, "_eager_cache", caches.Lru(4))
    for n in range(1, 11):
        x = np.arange(float(n))
        np.testing.assert_array_equal(lowering.llvm.run_eager("add", [x, x], {}), x + x)
    assert len(lowering.llvm._eager_cache) == 4


def test_cache_size_settings(monkeypatch):
    monkeypatch.setenv("TRACER_CODE_CACHE_SIZE", "12")
    assert Settings.code_cache_size.read() == 12
    monkeypatch.setenv("TRACER_CODE_CACHE_SIZE", "12K")
    with pytest.raises(ArgumentError, match="TRACER_CODE_CACHE_SIZE must be a non-neg"):
        Settings.code_cache_size.read()
    monkeypatch.delenv("TRACER_CODE_CACHE_SIZE")
    assert Settings.code_cache_size.read() == 256


def test_lru_forgets_the_least_recently_used():
    lru = caches.Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c"), len(lru)) == (1, None, 3, 2)

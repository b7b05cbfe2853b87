"""Compile caches: in memory by module text, on disk across processes (keyed by text,
llvmlite version and host CPU), and invalidation when a kernel is re-registered."""
import re

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering.llvm import ScalarKernel, compile_graph, target
from fresh import run_script


def test_same_module_text_compiles_once_in_a_process():
    graph = tracer.make_graph(lambda x: tnp.cos(x) * 3.5 + 0.75)(np.ones(6))
    first = compile_graph(graph)
    before = dict(target.stats)
    second = compile_graph(graph)
    assert second.loaded is first.loaded
    assert target.stats["compiled"] == before["compiled"]
    assert target.stats["memory_hits"] == before["memory_hits"] + 1


SCRIPT = """
import numpy as np, tracer, tracer.numpy as tnp
from lowering.llvm import target
f = tracer.jit(lambda x: tnp.tanh(x) * 2.0 + tnp.sum(x @ x.T))
out = f(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4))
print(target.stats["compiled"], target.stats["disk_hits"], float(out.sum()))
"""


def _run(cache, **env):
    compiled, hits, value = run_script(SCRIPT, cache=cache, **env).split()
    return int(compiled), int(hits), float(value)


def test_second_process_loads_from_disk_and_compiles_nothing(tmp_path):
    c1, h1, v1 = _run(tmp_path)
    assert c1 >= 1 and h1 == 0
    objects = list(tmp_path.glob("*.o"))
    assert len(objects) == c1
    key = objects[0].stem
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    c2, h2, v2 = _run(tmp_path)
    assert (c2, h2, v2) == (0, c1, v1)
    objects[0].write_bytes(b"garbage")              # a damaged file is only a miss
    c3, h3, v3 = _run(tmp_path)
    assert (c3, v3) == (1, v1)


def test_disk_cache_can_be_disabled(tmp_path):
    c, h, _ = _run(tmp_path, TRACER_DISK_CACHE="0")
    assert c >= 1 and h == 0 and list(tmp_path.iterdir()) == []


def test_cache_key_covers_text_llvmlite_version_and_cpu(monkeypatch):
    key = target.cache_key("x")
    assert target.cache_key("y") != key
    monkeypatch.setattr(target, "FEATURES", target.FEATURES + ",+madeup")
    assert target.cache_key("x") != key
    monkeypatch.setattr(target, "CPU", "other-cpu")
    assert target.cache_key("x") != key


@pytest.fixture
def scaled():
    name = "test_cache_scaled"
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", lambda x: x * 2)
    yield name
    for backend in ("llvm", "numpy"):
        if registry.has_kernel(name, backend):
            registry.unregister_kernel(name, backend)
    registry.unregister_shape_rule(name)


def test_reregistering_a_kernel_recompiles_what_used_it(scaled):
    def body(factor):
        return ScalarKernel(lambda ctx, x: ctx.b.fmul(x, ctx.const(factor)))
    registry.register_kernel(scaled, "llvm", body(2.0))
    f = tracer.jit(lambda x: tracer.run_kernel(scaled, [x]) + 1.0)
    other = tracer.jit(lambda x: x * 5.0)
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x), x * 2 + 1)
    other(x)
    text, other_prog = f.lower(x).as_text(), other.lower(x)
    registry.register_kernel(scaled, "llvm", body(3.0))
    np.testing.assert_array_equal(f(x), x * 3 + 1)
    assert f.lower(x).as_text() != text
    assert other.lower(x) is other_prog            # untouched entries are kept
    registry.unregister_kernel(scaled, "llvm")      # now the numpy kernel (x * 2) runs
    with pytest.warns(UserWarning, match=scaled):
        np.testing.assert_array_equal(f(x), x * 2 + 1)

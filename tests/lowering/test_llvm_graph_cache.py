"""The graph-keyed cache: a warm process (or a recompile in the same process) skips code
generation, gets the same program, and never reuses code made for another graph, another
kernel impl or other code-generation settings."""

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering.llvm import ScalarKernel, compile_graph, graph_cache, target
from lowering.settings import settings
from fresh import run_script


def graph_of(f, *args):
    return tracer.make_graph(f)(*args)


def chain(x):
    for i in range(4):
        x = tnp.tanh(x * (1.0 + i)) + x * 0.5
    return x, tnp.sum(x), 2.0          # a fused loop, a reduction, a literal output


X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def test_recompiling_an_equal_graph_skips_codegen_and_gives_the_same_program():
    first = compile_graph(graph_of(chain, X))
    hits = graph_cache.stats["memory_hits"]
    second = compile_graph(graph_of(chain, X))       # traced again: new objects, same key
    assert graph_cache.stats["memory_hits"] == hits + 1
    assert second.as_text() == first.as_text()
    assert str(second.graph) == str(first.graph)     # the fused groups are rebuilt
    for a, b in zip(first.run([X]), second.run([X])):
        np.testing.assert_array_equal(a, b)
    x = X.astype(np.float64)
    for _ in range(4):
        x = np.tanh(x * (1.0 + _)) + x * 0.5
    out = second.run([X])
    np.testing.assert_allclose(out[0], x, rtol=1e-5, atol=1e-6)
    assert out[2] == 2.0


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "uint8", "int16"])
def test_a_cached_program_gives_results_of_the_graph_dtype(dtype):
    """The cache stores buffer dtypes by name: bfloat16's .str ('<V2') read back as raw
    bytes, so the second compile of a bfloat16 graph returned void arrays."""
    x = np.arange(6).astype(tnp.dtype(dtype))
    first, second = (compile_graph(graph_of(lambda v: v + v, x)).run([x])[0]
                     for _ in range(2))
    assert first.dtype == second.dtype == x.dtype
    np.testing.assert_array_equal(second, x + x)


def looped(scale):
    """A fori_loop whose body holds an array constant (baked into the region's code)."""
    c = np.linspace(0, 1, 4, dtype=np.float32) * scale
    return lambda x: tracer.lax.fori_loop(0, 3, lambda i, v: tnp.tanh(v) * c + x, x)


def test_control_flow_programs_are_cached_and_keyed_by_their_regions_constants():
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    first = compile_graph(graph_of(looped(1.0), x))
    hits = graph_cache.stats["memory_hits"]
    again = compile_graph(graph_of(looped(1.0), x))
    assert graph_cache.stats["memory_hits"] == hits + 1
    np.testing.assert_array_equal(again.run([x])[0], first.run([x])[0])
    assert key(looped(1.0), x) != key(looped(2.0), x)   # only a region's constant differs
    other = compile_graph(graph_of(looped(2.0), x)).run([x])[0]
    want = x.copy()
    for _ in range(3):
        want = np.tanh(want) * np.linspace(0, 2, 4, dtype=np.float32) + x
    np.testing.assert_allclose(other, want, rtol=1e-6)


def test_convolution_and_pooling_graphs_are_cached():
    """tracer.lax's own llvm impls (conv, reduce_window, tile_scatter) are built-ins: the
    CNN's graphs used to be recompiled from scratch in every process."""
    x = np.linspace(-1, 1, 2 * 6 * 6 * 3, dtype=np.float32).reshape(2, 6, 6, 3)
    w = np.linspace(-1, 1, 3 * 3 * 3 * 4, dtype=np.float32).reshape(3, 3, 3, 4)

    def f(x, w):
        y = tracer.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return tracer.nn.max_pool(y, (2, 2), (2, 2))

    def loss(x, w):
        return tnp.sum(f(x, w))

    for fn in (f, tracer.grad(loss, argnums=1)):
        first = compile_graph(graph_of(fn, x, w))
        hits = graph_cache.stats["memory_hits"]
        again = compile_graph(graph_of(fn, x, w))
        assert graph_cache.stats["memory_hits"] == hits + 1
        np.testing.assert_array_equal(again.run([x, w])[0], first.run([x, w])[0])


def affine(x):
    return x * 2.0 + 1.0


def key(f, x, source=None):
    """The key of f's graph, every node's source set to `source` (it is part of the key)."""
    g = graph_of(f, x)
    for n in g.nodes:
        n.source = source
    return graph_cache.key_of(g)


def test_key_covers_structure_values_types_source_and_settings(monkeypatch):
    base = key(affine, X)
    assert base is not None and base == key(lambda x: x * 2.0 + 1.0, X)
    others = [key(lambda x: x * 3.0 + 1.0, X),                  # a literal's value
              key(lambda x: x * np.float32(2.0) + 1.0, X),      # ... its dtype (no: same)
              key(lambda x: x * 2.0 - 1.0, X),                  # a kernel
              key(affine, X.astype(np.float64)),                # the input dtype
              key(affine, X.T),                                 # the input shape
              key(lambda x: tnp.sum(x, axis=0), X),             # attrs
              key(lambda x: tnp.sum(x, axis=1), X),
              key(affine, X, source="elsewhere.py:1 (f)")]      # where it was traced
    assert others[1] == base                  # a weak 2.0 becomes an f32 literal anyway
    del others[1]
    assert None not in others and base not in others and len(set(others)) == len(others)
    monkeypatch.setattr(settings, "parallel_ns", 0)
    assert key(affine, X) != base
    monkeypatch.undo()
    monkeypatch.setenv("TRACER_NUM_THREADS", "7")
    assert key(affine, X) != base


@pytest.fixture
def overridden():
    """Temporarily replaces the built-in llvm impl of `exp`."""
    builtin = registry.get_kernel("exp", "llvm")
    yield
    registry.register_kernel("exp", "llvm", builtin)


def test_graphs_using_a_user_llvm_impl_are_not_cached(overridden):
    g = graph_of(lambda x: tnp.exp(x) + 1.0, X)
    assert graph_cache.key_of(g) is not None
    registry.register_kernel("exp", "llvm", ScalarKernel(lambda ctx, x: ctx.b.fadd(x, x)))
    assert graph_cache.key_of(g) is None
    np.testing.assert_array_equal(compile_graph(g).run([X])[0], X + X + 1.0)
    registry.register_kernel("exp", "llvm", registry.get_kernel("log", "llvm"))
    assert graph_cache.key_of(g) is None               # a built-in impl, of another kernel


SCRIPT = """
import sys, numpy as np, registry, tracer, tracer.numpy as tnp
from lowering.llvm import ScalarKernel, codegen, graph_cache, target
made = []
class Counting(codegen.ModuleBuilder):
    def __init__(self):
        made.append(1)
        super().__init__()
codegen.ModuleBuilder = Counting
factor = float(sys.argv[1])
registry.register_shape_rule("test_gc_scaled", lambda x: x)
registry.register_kernel("test_gc_scaled", "llvm",
                         ScalarKernel(lambda ctx, x: ctx.b.fmul(x, ctx.const(factor))))
x = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
f = tracer.jit(lambda x: (tnp.tanh(x) * 2.0 + tnp.sum(x @ x.T), x * 0.5))
g = tracer.jit(lambda x: tracer.run_kernel("test_gc_scaled", [x]) + 1.0)
(a, b), c = f(x), g(x)
print(len(made), graph_cache.stats["disk_hits"], target.stats["compiled"], float(a.sum()),
      float(b.sum()), float(c.sum()), hash(f.lower(x).as_text()), hash(str(f.lower(x).graph)))
"""


def _run(cache, factor, **env):
    made, hits, compiled, a, b, c, text, shown = run_script(
        SCRIPT, factor, cache=cache, PYTHONHASHSEED="0", **env).split()
    return int(made), int(hits), int(compiled), float(a), float(b), float(c), text, shown


def test_a_warm_process_skips_codegen_and_a_changed_user_kernel_is_recompiled(tmp_path):
    made, hits, compiled, a, b, c, text, shown = _run(tmp_path, 2.0)
    # f (cached by graph), g (not), the float32 matmul library x @ x.T calls and the
    # segments' runner
    assert made == 2 and hits == 0 and compiled == 4
    assert len(list(tmp_path.glob("*.g"))) == 1
    expect = float((np.linspace(0, 1, 12, dtype=np.float32) * 2 + 1).sum())
    assert c == pytest.approx(expect)
    # a fresh process with the same builtin-only graph: no codegen for f, no compile at all
    made2, hits2, compiled2, a2, b2, c2, text2, shown2 = _run(tmp_path, 2.0)
    assert (made2, hits2, compiled2) == (1, 1, 0)
    assert (a2, b2, c2, text2, shown2) == (a, b, c, text, shown)
    # the user's llvm body changes between processes: g must run the new body
    made3, hits3, compiled3, a3, _, c3, _, _ = _run(tmp_path, 3.0)
    assert (made3, hits3, compiled3, a3) == (1, 1, 1, a)
    expect = float((np.linspace(0, 1, 12, dtype=np.float32) * 3 + 1).sum())
    assert c3 == pytest.approx(expect)
    # a damaged entry is a miss, never an error
    for path in tmp_path.glob("*.g"):
        path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    made4, hits4, _, a4, *_ = _run(tmp_path, 2.0)
    assert (made4, hits4, a4) == (2, 0, a)


def test_parallel_steps_survive_the_cache(monkeypatch):
    monkeypatch.setattr(settings, "parallel_ns", 0)
    monkeypatch.setenv("TRACER_NUM_THREADS", "3")
    x = np.arange(3000, dtype=np.float64).reshape(30, 100) / 3000
    f = lambda x: (tnp.exp(x) * 2.0, tnp.sum(tnp.sin(x), axis=1))    # noqa: E731
    first = compile_graph(graph_of(f, x))
    second = compile_graph(graph_of(f, x))
    assert "parallel" in second.steps and second.steps == first.steps
    for a, b in zip(first.run([x]), second.run([x])):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(second.run([x])[1], np.sin(x).sum(1), rtol=1e-12)


def test_disabled_disk_cache_writes_no_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    compile_graph(graph_of(lambda x: tnp.cos(x) * 1.25, X))
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("TRACER_DISK_CACHE", "1")
    compile_graph(graph_of(lambda x: tnp.cos(x) * 1.5, X))
    assert len(list(tmp_path.glob("*.g"))) == 1 and target.disk_cache_dir() == str(tmp_path)

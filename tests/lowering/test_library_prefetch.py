"""The matmul libraries a graph needs start compiling before it is partitioned: a float32
library missing from the caches (~0.5 s of CPU) was the last thing a deep MLP's first call
waited for, and it began only when codegen reached the first matmul."""
import numpy as np

import tracer
import tracer.numpy as tnp
from tracer import lax
from lowering.llvm import linalg, matmul_shared, program, target


def _declared(fun, *args):
    return linalg.library_declarations(program.optimize(tracer.make_graph(fun)(*args)))


def test_a_graphs_matmuls_name_their_libraries_regions_included():
    x, w = np.ones((4, 8), np.float32), np.ones((8, 8), np.float64)

    def f(x, w):
        return lax.fori_loop(0, 3, lambda i, v: tnp.tanh(v @ w), x.astype(np.float64)), x @ x.T
    names = matmul_shared.libraries(_declared(f, x, w))
    assert sorted(names) == sorted({matmul_shared.symbol(dt).rsplit(".", 1)[0]
                                    for dt in (np.float32, np.float64)})


def test_no_library_for_a_graph_without_native_matmuls():
    x = np.ones((4, 8), np.float32)
    assert _declared(lambda x: tnp.sin(x).sum(), x) == ""
    assert _declared(lambda x: x @ np.ones((8, 0), np.float32), x) == ""     # empty result


def test_compiling_a_graph_prefetches_before_partitioning(monkeypatch):
    seen = []
    monkeypatch.setattr(target, "prefetch", lambda text: seen.append(text))
    monkeypatch.setattr(program.schedule, "partition",
                        lambda g: (seen.append("partition"), (_ for _ in ()).throw(
                            RuntimeError("stop")))[1])
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    try:
        program.compile_graph(tracer.make_graph(lambda a: a @ a + 1)(x))
    except RuntimeError:
        pass
    assert seen and "partition" in seen
    assert matmul_shared.libraries(seen[0]) == [matmul_shared.symbol(np.float32).rsplit(".", 1)[0]]

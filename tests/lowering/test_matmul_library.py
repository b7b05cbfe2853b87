"""Matmul compiled once: every matmul node calls one library per dtype, whatever the
storage of its operands (lowering.llvm.matmul_shared), which takes its sizes at run time, is compiled
once per process and served from the disk cache to the next one; results stay those of
NumPy for every shape class (vectors, size 1, empty, odd sizes around the register tiles,
batches, transposes) and dtype."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import matmul, matmul_shared, target
from fresh import run_script

BF16 = np.dtype(ml_dtypes.bfloat16)


def _linked_matmuls():
    return {name for name in target._linked if name.startswith("tracer.mm.")}


def test_one_library_function_serves_every_matmul_node():
    """Three matmuls of three shapes: the module defines no matmul kernel of its own, it
    declares the library's two functions once and calls them."""
    def mlp(x, w1, w2, w3):
        return tnp.tanh(tnp.tanh(x @ w1) @ w2) @ w3
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((9, 7), (7, 40), (40, 33), (33, 5))]
    f = tracer.jit(mlp)
    text = f.lower(*args).as_text()
    lib = matmul_shared.symbol(np.float32)
    assert matmul_shared.libraries(text) == [lib.rsplit(".", 1)[0]]
    assert text.count(f'@"{lib}"(') == 4 and text.count(f'@"{lib}_pack"(') == 4   # 1 declare, 3 calls
    assert "define" not in "".join(line for line in text.splitlines() if "_pack" in line)
    ref = np.tanh(np.tanh(args[0] @ args[1]) @ args[2]) @ args[3]
    np.testing.assert_allclose(f(*args), ref, rtol=1e-5, atol=1e-5)
    assert lib.rsplit(".", 1)[0] in _linked_matmuls()


def test_one_library_serves_every_storage_of_the_operands():
    """Four shapes in all four storage orders (A, B as themselves or stored transposed,
    the transposes folded into the matmul) link one float32 library, not one per pair
    of transposes, node or shape; float64 nodes of the same module add one more."""
    rng = np.random.default_rng(1)
    for m, k, n in [(3, 5, 7), (15, 33, 31), (29, 65, 33), (2, 300, 3)]:
        a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n)))
        f = tracer.jit(lambda a, b, at, bt: (a @ b, at.T @ b, a @ bt.T, at.T @ bt.T,
                                             at.astype(np.float64).T @ bt.astype(np.float64).T))
        args = (a, b, a.T.copy(), b.T.copy())
        text = f.lower(*args).as_text()
        assert matmul_shared.libraries(text) == [
            matmul_shared.libraries(f'declare void @"{matmul_shared.symbol(dt, 1, 1)}"(')[0]
            for dt in (np.float32, np.float64)]
        assert "transpose" not in text and all(f'.{s}"(' in text for s in ("nn", "nt", "tn", "tt"))
        *out, wide = f(*args)
        for got in out:
            np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(wide, a.astype(np.float64) @ b, rtol=1e-12, atol=1e-12)
    assert {n.split(".")[3] for n in _linked_matmuls()
            if n.startswith(f"tracer.mm.{matmul_shared._SOURCE}.")} >= {"float32", "float64"}


SCRIPT = """
import sys, numpy as np, tracer
from lowering.llvm import target
m = int(sys.argv[1])
a, b = np.ones((m, 19), np.float32), np.ones((19, 23), np.float32)
assert (tracer.jit(lambda a, b: a @ b * 2.0)(a, b) == 38.0).all()
print(target.stats["compiled"], target.stats["disk_hits"])
"""


def test_library_compiled_once_then_served_by_the_disk_cache(tmp_path):
    """A first process compiles the library, its graph and the segments' runner; a second
    one, with another graph, compiles only that graph and loads the rest from disk."""
    assert run_script(SCRIPT, 11, cache=tmp_path).split() == ["3", "0"]
    assert run_script(SCRIPT, 12, cache=tmp_path).split() == ["1", "2"]


def _tiles(dtype):
    _, vl, mr, nv = matmul.tile_geometry(dtype)
    return mr, vl * nv, matmul.KC_BYTES // {2: 4}.get(np.dtype(dtype).itemsize, np.dtype(dtype).itemsize)


def _shapes(dtype):
    """(a shape, b shape) pairs: vectors (a 0-d result), size 1, empty dims, odd sizes
    around the register tile and the K block, broadcast batches."""
    mr, nr, kc = _tiles(dtype)
    return [((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)), ((1, 1), (1, 1)), ((0, 3), (3, 4)),
            ((3, 0), (0, 4)), ((3, 4), (4, 0)), ((mr + 1, 3), (3, nr - 1)),
            ((mr - 1, kc + 3), (kc + 3, nr + 1)), ((2, 3, 2 * mr + 5, 7), (7, 2 * nr + 3)),
            ((3, 1, 6, 5), (1, 2, 5, 9))]


def _operands(rng, dtype, shape):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9 if np.dtype(dtype).kind == "i" else 0, 9, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16, np.int32,
                                   np.int64, np.uint8], ids=lambda d: np.dtype(d).name)
def test_results_match_numpy_across_shapes(dtype):
    rng = np.random.default_rng(2)
    pairs = [(_operands(rng, dtype, sa), _operands(rng, dtype, sb)) for sa, sb in _shapes(dtype)]
    outs = tracer.jit(lambda pairs: [a @ b for a, b in pairs])(pairs)
    for (a, b), got in zip(pairs, outs):
        assert got.dtype == dtype and got.shape == np.matmul(a, b).shape
        if np.dtype(dtype).kind in "iu":
            np.testing.assert_array_equal(got, np.matmul(a, b))   # wrapping, as NumPy's
            continue
        wide = np.matmul(a.astype(np.float64), b.astype(np.float64))
        bound = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
        eps = float(ml_dtypes.finfo(dtype).eps)
        assert np.all(np.abs(got.astype(np.float64) - wide) <= 4 * eps * bound + eps * np.abs(wide))

"""The matmul library's LLVM cost: the k loop of a register tile of several rows, and the
row function's loops, stay loops (LLVM's unrolling doubled the library's optimized code
for no speed: a tile of R rows already has R x NV independent multiply-adds an
iteration); the one-row tiles and the packing of B may unroll."""
import re

import numpy as np
import pytest

from lowering.llvm import matmul, matmul_shared, target
from lowering.llvm.cpu import CURRENT


def _optimized_bodies(dtype):
    """{function name suffix: its optimized body} of the matmul library for `dtype`."""
    name = matmul_shared.symbol(dtype).rsplit(".", 1)[0]
    mod = target._optimize(matmul_shared.library(name, CURRENT.isa)[2]())
    try:
        text = str(mod)
    finally:
        mod.close()
    return {re.search(r'@"?[\w.]+\.(\w+)"?\(', body).group(1): body
            for body in text.split("\ndefine ")[1:]}


def _fmas_per_block(body):
    """The multiply-adds of each basic block of `body` that has any."""
    return {block.count("@llvm.fma.") for block in re.split(r"\n[\w.]+:", body)} - {0}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiles_of_several_rows_keep_their_k_loop(dtype):
    _, vl, mr, nv = matmul.tile_geometry(dtype)
    bodies = _optimized_bodies(dtype)
    for rows in (mr, 4):
        for width, vectors in [(f"e{v}", v) for v in range(1, nv + 1)]:
            for mode in ("", "i"):
                # one block of the k loop: one multiply-add per accumulator, not copies
                assert _fmas_per_block(bodies[f"{rows}{mode}x{width}"]) == {rows * vectors}, \
                    f"{rows}{mode}x{width}"


def test_full_panels_and_the_last_share_their_tiles():
    """A full panel runs the tile of NV vectors with its width given at run time (NR), the
    one the last, narrower panel of NV vectors runs: a fixed-width copy of each tile made
    the float32 library 1.4x longer (4,377 against 3,094 lines of IR)."""
    _, vl, mr, nv = matmul.tile_geometry(np.float32)
    names = set(_optimized_bodies(np.float32))
    assert not {n for n in names if re.fullmatch(rf"\d+i?x{vl * nv}", n)}
    assert {f"{mr}x" + f"e{nv}", f"{mr}ix" + f"e{nv}"} <= names


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_the_library_asks_for_llvms_o2_and_slp_only_where_it_widens(dtype):
    """Its tiles are vector code already: O3 took 0.42 s of CPU to optimize the float32
    library into 5,446 lines, O2 0.27 s into 3,821, running alike. SLP is kept for the
    dtypes computed wider than stored (float16, bfloat16), whose code it changes. A module
    that does not ask gets O3 with SLP."""
    from lowering.llvm import compile_worker
    name = matmul_shared.symbol(dtype).rsplit(".", 1)[0]
    text = matmul_shared.library(name, CURRENT.isa)[2]()
    assert compile_worker.tuning(text) == (2, dtype == np.float16)
    assert compile_worker.tuning("define void @f() {\n  ret void\n}\n") == (3, True)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_slp_makes_nothing_of_the_library_of_a_dtype_it_does_not_widen(dtype):
    """Why the library turns SLP off: with it, LLVM optimized the float32 library 0.08 s
    longer (int8's 0.5 s) into the same IR, on AVX-512 and AVX2."""
    from lowering.llvm import compile_worker
    name = matmul_shared.symbol(dtype).rsplit(".", 1)[0]
    text = matmul_shared.library(name, CURRENT.isa)[2]()
    assert "no-slp" in text.splitlines()[0]
    slp = text.replace(" no-slp", "", 1)
    optimized = []
    for t in (text, slp):
        mod = compile_worker.optimize(t, None, target._TM, target.TRIPLE, target.DATA_LAYOUT)
        optimized.append(str(mod))
        mod.close()
    assert optimized[0] == optimized[1]

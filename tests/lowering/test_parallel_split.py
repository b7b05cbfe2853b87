"""How a parallel step is split (lowering/llvm/program.py, schedule.py): pieces start on
the call's grain (a matmul's register tile rows, on either ISA), and a kernel's prepare
step and its work items are phases of one step (how the pool runs phases:
test_pool.py)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tracer
from lowering.llvm import matmul, program, schedule
from lowering.settings import settings as tracer_settings


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 50_000), threads=st.integers(1, 5), grain=st.sampled_from([6, 14, 16]))
def test_pieces_start_on_the_grain_and_are_near_equal(n, threads, grain):
    b = program._pieces(n, threads, grain)
    assert b[0] == 0 and b[-1] == n and all(x < y for x, y in zip(b, b[1:]))
    assert all(x % grain == 0 for x in b[:-1])
    if n >= grain * program.CHUNKS * threads:
        sizes = np.diff(b)
        assert len(sizes) == program.CHUNKS * threads
        assert np.abs(sizes - n / len(sizes)).max() <= grain


def _launch(a, b, fn=lambda a, b: a @ b):
    g = program.optimize(tracer.make_graph(fn)(a, b))
    sched = schedule.Schedule(schedule.partition(g), 2, 0)
    step, = sched.steps
    return step


@pytest.mark.parametrize("vector_bytes", [32, 64], ids=["avx2-tiles", "avx512-tiles"])
def test_matmul_rows_split_on_whole_register_tiles(monkeypatch, vector_bytes):
    monkeypatch.setattr(tracer_settings, "vector_bytes", vector_bytes)
    mr = {32: 6, 64: 14}[vector_bytes]
    assert matmul.tile_rows(np.float32) == mr
    step = _launch(np.ones((256, 64), np.float32), np.ones((64, 32), np.float32))
    assert step.kind == "parallel" and step.calls[0].launch.grain == mr
    packs = matmul.pack_plan(1, 64, 32, np.float32)[1]
    assert step.program_step({})[1] == (("g0.prep", step.calls[0].buffers, packs, 1),
                                      ("g0", step.calls[0].buffers, 256, mr))
    # a batch whose rows do not line up with the tiles keeps the default grain
    odd = _launch(np.ones((4, mr + 1, 8), np.float32), np.ones((4, 8, 8), np.float32))
    assert odd.calls[0].launch.grain is None
    whole = _launch(np.ones((4, 2 * mr, 8), np.float32), np.ones((4, 8, 8), np.float32))
    assert whole.calls[0].launch.grain == mr


def test_a_big_matmul_packs_b_on_every_thread():
    """B's pack is a phase of its own, split across the threads as the rows are: a 1024 x
    1024 float32 B took ~1 ms to pack on one thread while the other waited."""
    a = np.ones((512, 1024), np.float32)
    for transposed in (False, True):
        step = _launch(a, a, lambda a, b: a @ b.T) if transposed else _launch(a, a.T.copy())
        assert step.calls[0].group.node.attrs.get("transpose_b", False) == transposed
        (prep, _, items, grain), rows = step.program_step({})[1]
        assert prep == "g0.prep" and grain == 1 and items >= 2 * step.threads
        assert len(program._pieces(items, step.threads, grain)) - 1 >= step.threads

"""How a parallel step is split (lowering/llvm/program.py, schedule.py): pieces start on
the call's grain (a matmul's register tile rows, on either ISA), a kernel's prepare step
and its work items run as phases of one split (every prepare piece done before any work
piece starts), a failing piece's code is returned and the pieces after it skipped, and
threads wait for each other's pieces in native code."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tracer
from lowering.llvm import matmul, program, schedule


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


def _launch(a, b):
    g = program.optimize(tracer.make_graph(lambda a, b: a @ b)(a, b))
    sched = schedule.Schedule(schedule.partition(g), 2, 0, schedule.SEGMENT_SIZE)
    step, = sched.steps
    return step


@pytest.mark.parametrize("vector_bytes", [32, 64], ids=["avx2-tiles", "avx512-tiles"])
def test_matmul_rows_split_on_whole_register_tiles(monkeypatch, vector_bytes):
    monkeypatch.setattr(matmul, "_vector_bytes", lambda: vector_bytes)
    mr = {32: 6, 64: 14}[vector_bytes]
    assert matmul.tile_rows(np.float32) == mr
    step = _launch(np.ones((256, 64), np.float32), np.ones((64, 32), np.float32))
    assert step.kind == "parallel" and step.calls[0].launch.grain == mr
    assert step.program_step()[1] == (("g0.prep", step.calls[0].buffers, 1, None),
                                      ("g0", step.calls[0].buffers, 256, mr))
    # a batch whose rows do not line up with the tiles keeps the default grain
    odd = _launch(np.ones((4, mr + 1, 8), np.float32), np.ones((4, 8, 8), np.float32))
    assert odd.calls[0].launch.grain is None
    whole = _launch(np.ones((4, 2 * mr, 8), np.float32), np.ones((4, 8, 8), np.float32))
    assert whole.calls[0].launch.grain == mr


def _recorder(log, phase, delay=0.0, fail_at=None):
    def fn(lo, hi):
        log.append((phase, "start", lo, time.perf_counter()))
        time.sleep(delay)
        log.append((phase, "end", lo, time.perf_counter()))
        return 7 if lo == fail_at else 0
    return fn


def _spin(address):     # a Python stand-in: never spins, so the Condition path runs too
    return False


@pytest.mark.parametrize("spin", [_spin, None], ids=["condition", "native-spin"])
def test_phases_run_in_order_across_threads(spin):
    spin = spin or program._spinner()
    log = []
    phases = [(_recorder(log, 0, 0.002), [], [0, 10, 20, 30, 40]),
              (_recorder(log, 1, 0.001), [], [0, 5, 10, 15])]
    with ThreadPoolExecutor(1) as pool:
        assert program._Split(phases, spin).run(pool, 1) == 0
    ends0 = [t for p, what, _, t in log if p == 0 and what == "end"]
    starts1 = [t for p, what, _, t in log if p == 1 and what == "start"]
    assert len(ends0) == 4 and len(starts1) == 3 and max(ends0) <= min(starts1)


def test_a_failing_piece_skips_the_rest():
    log = []
    phases = [(_recorder(log, 0, fail_at=0), [], [0, 1]), (_recorder(log, 1), [], [0, 5, 10])]
    with ThreadPoolExecutor(1) as pool:
        assert program._Split(phases, program._spinner()).run(pool, 1) == 7
    assert [p for p, what, _, _ in log if what == "start"] == [0]


def test_native_spin_sees_the_word_change():
    spin = program._spinner()
    word = np.ones(1, np.int64)
    t = time.perf_counter()
    assert not spin(word.ctypes.data)                 # gives up after about SPIN_NS
    assert time.perf_counter() - t < 50 * program.SPIN_NS * 1e-9
    threading.Timer(0.00005, lambda: word.__setitem__(0, 0)).start()
    for _ in range(2000):       # the timer thread needs the GIL, which spin() releases
        if spin(word.ctypes.data):
            break
    assert word[0] == 0 and spin(word.ctypes.data)

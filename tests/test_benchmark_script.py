"""examples/benchmark.py: target verdicts from a row's times, page faults counted per call,
and the script runs (and says which ISA it compiled for) without JAX, which is not a
dependency."""
import mmap
import os
import sys

from fresh import ROOT, run_script

sys.path.insert(0, os.path.join(ROOT, "examples"))
import benchmark  # noqa: E402


def test_verdicts():
    t = {"tracer llvm": 1.0, "numpy": 12.0, "jax.jit": 2.5}
    assert benchmark.verdict("W1", t) == "met"
    assert benchmark.verdict("W1", dict(t, numpy=5.0)) == "missed (<= 0.1x numpy)"
    assert benchmark.verdict("W5", dict(t, **{"jax.jit": 0.9})) == "missed (<= 1x jax)"
    assert benchmark.verdict("W2", {"tracer llvm": 1.0}) == "-"      # no jax: cannot judge
    assert benchmark.verdict("W3", dict(t, floor=0.89)) == "missed (>= 90% of bandwidth)"
    assert benchmark.verdict("W3", dict(t, floor=0.91)) == "met"


def test_runs_without_jax():
    out = run_script("import runpy, sys; sys.modules['jax'] = None; sys.path.insert(0, 'examples'); "
                     "sys.argv = ['benchmark.py', '--only', 'W6', '--rounds', '1']; "
                     "runpy.run_path('examples/benchmark.py', run_name='__main__')",
                     TRACER_CPU="avx2", TRACER_NUM_THREADS="2")
    assert "compiled for haswell (avx2) via TRACER_CPU=avx2" in out
    assert "jax not installed" in out
    row = next(line for line in out.splitlines() if line.startswith("| W6 |"))
    # W6's verdict needs no jax; whether it is met depends on the machine's load, not here
    assert row.split(" | ")[5] == "-" and row.endswith(("| met |", "| missed (<= 5 us) |"))
    assert "| 1 thread | 2 threads |" in out


def _fresh_pages(n):
    """Touch n pages of new memory (an anonymous mapping, unmapped again)."""
    with mmap.mmap(-1, n * mmap.PAGESIZE) as m:
        m[::mmap.PAGESIZE] = b"x" * n


def test_page_faults_per_call_are_counted_and_noted(capsys):
    from bench_timing import time_interleaved
    faults = {}
    time_interleaved({"numpy": lambda: _fresh_pages(2000), "tracer llvm": lambda: 0}, (), 3,
                     budget=0.001, faults=faults)
    assert faults["numpy"] >= 2000 > 100 > faults["tracer llvm"]
    benchmark._faults_row(faults)
    benchmark._faults_row({"numpy": 10.0})
    assert capsys.readouterr().out.splitlines() == [
        f"|    | page faults per call: numpy {faults['numpy']:.0f} | " + " |" * 8]


def test_real_workload_figures():
    """bench_real.measure: the first call apart, the steady step from the run's second
    half, and the peak RSS growth of the run only (an earlier peak is not counted)."""
    import time

    import numpy as np
    from bench_real import measure

    def run(i):
        if i == 0:
            block = np.ones(64 << 18, np.float32)       # 64 MiB, touched, freed after
            time.sleep(0.05)
            del block
        time.sleep(0.002)
        return i + 1, float(i)
    earlier = np.ones(128 << 18, np.float32)            # a 128 MiB peak before the run
    del earlier
    r = measure(run, 0, 12)
    assert r["first"] >= 0.05 > 0.02 > r["steady"] and r["wall"] >= r["first"] + 0.02
    assert 60 << 20 <= r["rss"] < 100 << 20
    assert r["losses"] == [float(i) for i in range(10)]


def test_real_workload_rows():
    """Ratios to jax.jit and the verdict: every figure <= 1x jax and losses within 1e-3."""
    from bench_real import rows
    from real_workloads import WORKLOADS
    jax_r = {"steady": 0.01, "first": 2.0, "wall": 3.0, "rss": 2 << 20, "losses": [2.0, 1.0]}
    fast = dict(jax_r, steady=0.005, losses=[2.0, 1.0001])
    slow = dict(fast, first=4.0)
    off = dict(fast, losses=[2.0, 1.01])
    lines = rows(WORKLOADS[0], [{"tracer": fast, "tracer, compile first": slow,
                                 "jax.jit": jax_r, "other": off}])
    assert lines[0].startswith("| W17 | tracer | 5.0 ms | 2.00 s | 3.00 s | 2 MiB | "
                               "0.50x / 1.00x / 1.00x / 1.00x | 1.0e-04 | met |")
    assert lines[1].endswith("| missed |") and "2.00x" in lines[1]
    assert lines[2].startswith("| W17 | jax.jit |") and lines[2].endswith("| - | - | - |")
    assert lines[3].endswith("| 1.0e-02 | missed |")
    assert rows(WORKLOADS[0], [{"tracer": fast}])[0].endswith("| - | - | - |")   # no jax


def test_real_workload_rows_over_rounds():
    """With rounds, each figure is its median and each ratio the median of the rounds'
    ratios: a round where the host ran everything 1.5x slower moves neither."""
    from bench_real import rows
    from real_workloads import WORKLOADS
    jax_r = {"steady": 0.01, "first": 2.0, "wall": 3.0, "rss": 2 << 20, "losses": [2.0, 1.0]}
    ours = dict(jax_r, steady=0.009)
    slow_host = {k: (v * 1.5 if k in ("steady", "first", "wall") else v) for k, v in
                 jax_r.items()}
    rounds = [{"tracer": ours, "jax.jit": jax_r},
              {"tracer": dict(ours, steady=0.0135, first=3.0, wall=4.5), "jax.jit": slow_host},
              {"tracer": dict(ours, steady=0.008), "jax.jit": jax_r}]
    lines = rows(WORKLOADS[0], rounds)
    assert lines[0].startswith("| W17 | tracer | 9.0 ms | 2.00 s | 3.00 s | 2 MiB | "
                               "0.90x / 1.00x / 1.00x / 1.00x |"), lines[0]
    assert lines[1].startswith("| W17 | jax.jit | 10.0 ms |"), lines[1]


def test_real_workloads_agree_with_jax():
    """The real workloads' models are one definition: tracer (numpy backend: no compile
    wait) and jax.jit give the same losses for the transformer LM trained with Adam."""
    import functools

    import numpy as np
    import pytest
    pytest.importorskip("jax")
    import real_workloads as rw
    import tracer
    losses = {}
    for lib in (rw.tracer_lib(), rw.jax_lib()):
        if lib.name == "tracer":
            lib.jit = functools.partial(tracer.jit, backend="numpy")
        run, state = rw.transformer_setup(lib, np.random.default_rng(0), d=8, heads=2,
                                          layers=1, context=8, batch=2)
        for _ in range(3):
            state, value = run(state)
            losses.setdefault(lib.name, []).append(float(value))
    np.testing.assert_allclose(losses["tracer"], losses["jax"], rtol=1e-4)
    assert losses["tracer"][2] < losses["tracer"][0]


def test_matmul_versions_run_every_storage_on_one_and_two_threads(tmp_path):
    """examples/bench_matmul_versions.py against this same checkout: every storage, both
    thread counts, odd shapes (a product that differs from NumPy's exits non-zero)."""
    out = run_script("import runpy, sys; sys.argv = ['bench_matmul_versions.py', '--against', "
                     "'.', '--shapes', '13x70x40,6x5x3', '--storages', 'nn,nt,tn,tt', "
                     "'--reps', '2']; runpy.run_path('examples/bench_matmul_versions.py', "
                     "run_name='__main__')", cache=tmp_path, timeout=300)
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith(("| 13x", "| 6x"))]
    assert sorted((r[1], r[2]) for r in rows) == sorted(
        [(s, t) for s in ("nn", "nt", "tn", "tt") for t in "12"] * 2)


def test_matmul_versions_refuse_a_wrong_product():
    import numpy as np
    import pytest

    import bench_matmul_versions

    class Wrong:
        def bind(self, storage, index, a, b, c, threads, helper):
            return lambda: c.fill(1)
    with pytest.raises(SystemExit, match="differs from NumPy"):
        bench_matmul_versions.compare([Wrong(), Wrong()], "nn", 0, (4, 5, 3),
                                      np.dtype(np.float32), 1, 2, None)

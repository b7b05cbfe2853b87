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
    assert row.split(" | ")[5] == "-" and row.endswith("| met |")
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

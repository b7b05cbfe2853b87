"""Memory per compile: llvmlite leaks ~85 KiB per optimizer run, so compiles past a
process's first few run in worker processes that are replaced now and then
(lowering.llvm.compile_worker), and a program that compiles function after function,
dropping each, stays flat. examples/bench_compile_memory.py runs 5,000 compiles."""
import ctypes
import os

import pytest

from fresh import run_script
from ir.errors import CodegenError
from lowering.llvm import target

FLAT = r"""
import gc, os, sys
import numpy as np, tracer
from lowering.llvm import target

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def compiles(n, scale):
    for size in range(2, n + 2):    # a new function and constant: no code is reused (the
        f = tracer.jit(lambda x: x * (scale + size / 64) + 1.0)     # size alone is not
        f(np.ones(size, np.float32))                                # in the code)

warm, measured = int(sys.argv[1]), int(sys.argv[2])
compiles(warm, 2.0)             # this process's own compiles, caches filled
gc.collect()
before, done = rss(), target.stats["compiled"]
for k in range(measured // 30):
    compiles(30, 3.0 + k)
gc.collect()
print(rss() - before, target.stats["compiled"] - done)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads RSS from /proc")
def test_rss_is_flat_over_compiles_of_dropped_functions():
    """150 compiles leaked ~11 MiB in this process when all ran here."""
    out = run_script(FLAT, target.IN_PROCESS + 16, 150, TRACER_DISK_CACHE="0",
                     TRACER_CODE_CACHE_SIZE="8", TRACER_JIT_CACHE_SIZE="8")
    grown, compiled = out.split()
    assert int(compiled) == 150
    assert float(grown) < 3.0, f"RSS grew {grown} MiB over 150 compiles"


def module(value):
    return f"define i64 @f() {{\n  ret i64 {value}\n}}\n"


@pytest.fixture
def workers(monkeypatch):
    """Every compile in a worker, each worker replaced after two (none idle at first)."""
    while target._workers:
        target._workers.pop().close()
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    monkeypatch.setattr(target, "IN_PROCESS", 0)
    monkeypatch.setattr(target, "RECYCLE", 2)


def test_workers_compile_and_are_replaced(workers):
    for value in range(910_001, 910_006):
        assert target.load(module(value)).function("f", ctypes.c_int64)() == value
    assert len(target._workers) <= 1 and all(w.compiles < 2 for w in target._workers)


def test_a_module_llvm_rejects_is_a_codegen_error(workers):
    with pytest.raises(CodegenError, match="LLVM rejected the generated module"):
        target.load("define i64 @f() {\n  ret i32 0\n}\n")
    assert target.load(module(910_007)).function("f", ctypes.c_int64)() == 910_007


def test_a_worker_that_dies_is_a_codegen_error_not_a_hang(workers):
    target.load(module(910_008))
    [worker] = target._workers
    worker._proc.kill()
    worker._proc.wait()
    with pytest.raises(CodegenError, match="LLVM compile process ended"):
        target.load(module(910_009))
    assert target.load(module(910_010)).function("f", ctypes.c_int64)() == 910_010


def test_a_forked_child_compiles_with_workers_of_its_own(workers):
    """The parent's idle worker answers the parent only: the child starts its own."""
    target.load(module(910_011))
    [parents] = target._workers
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            ok = not target._workers and target.load(module(910_012)).function(
                "f", ctypes.c_int64)() == 910_012
        finally:
            os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert target.load(module(910_013)).function("f", ctypes.c_int64)() == 910_013
    assert parents.compiles == 2


def test_where_no_worker_can_start_compiles_stay_here(workers, monkeypatch):
    monkeypatch.setattr(target.compile_worker.sys, "executable", "/bin/false")
    monkeypatch.setattr(target, "_workers", [])
    assert target.load(module(910_014)).function("f", ctypes.c_int64)() == 910_014
    assert target.IN_PROCESS == float("inf") and not target._workers

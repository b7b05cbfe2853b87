"""A program with parallel steps starts loading the thread pool's module (lowering.llvm.pool)
before its own module: with an empty disk cache the pool's compile ran after the program's,
on its first call's critical path."""
from fresh import run_script

SCRIPT = r"""
import threading, time
import numpy as np
import tracer, tracer.numpy as tnp
from lowering.llvm import pool, target

spans, began = [], time.perf_counter()
load = target.load

def timed(text, *args, **kwargs):
    start = time.perf_counter() - began
    try:
        return load(text, *args, **kwargs)
    finally:
        spans.append((threading.current_thread().name, start, time.perf_counter() - began,
                      isinstance(text, str) and "@worker(" in text))

target.load = timed
x = np.ones((512, 512), np.float32)
f = tracer.jit(lambda a: tnp.tanh(a @ a))
assert np.allclose(f(x), np.tanh(x @ x), rtol=1e-4)     # one parallel step
(_, pool_start, _, _), = [s for s in spans if s[3]]
program_end = max(end for _, _, end, is_pool in spans if not is_pool)
print(pool_start < program_end, [s[0] for s in spans if s[3]])
"""


def test_the_pool_loads_beside_the_first_program(tmp_path):
    out = run_script(SCRIPT, TRACER_DISK_CACHE="0", TRACER_NUM_THREADS="2",
                     TRACER_BACKGROUND_COMPILE="0")
    assert out.split()[0] == "True", out
    assert "tracer-compile-pool" in out

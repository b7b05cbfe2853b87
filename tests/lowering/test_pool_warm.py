"""A program starts loading the modules its steps run on -- the thread pool's
(lowering.llvm.pool) for parallel steps, the segment runner (lowering.llvm.entries) --
before its own module, on a thread of its own that compiles them in this process: with an
empty disk cache they compiled after the program's, on its first call's critical path."""
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
                      isinstance(text, str) and ("@worker(" in text or "@run(ptr" in text)))

target.load = timed
x = np.ones((512, 512), np.float32)
f = tracer.jit(lambda a: (tnp.tanh(a @ a), a[:3] + 1.0))
assert f.lower(x).steps == ["parallel", "segment"], f.lower(x).steps
got = f(x)
assert np.allclose(got[0], np.tanh(x @ x), rtol=1e-4) and np.array_equal(got[1], x[:3] + 1)
runtime = [s for s in spans if s[3]]
program_end = max(end for _, _, end, is_runtime in spans if not is_runtime)
print(len(runtime) == 2 and all(start < program_end for _, start, _, _ in runtime),
      sorted({s[0] for s in runtime}), len(target._workers))
"""


def test_the_pool_and_the_runner_load_beside_the_first_program(tmp_path):
    out = run_script(SCRIPT, TRACER_DISK_CACHE="0", TRACER_NUM_THREADS="2",
                     TRACER_BACKGROUND_COMPILE="0")
    assert out.split()[0] == "True", out
    assert "['tracer-compile-runtime']" in out, out
    assert out.split()[-1] == "1", out      # no compile worker started for them (jit's one)

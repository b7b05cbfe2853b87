"""jit warms the llvm backend when it decorates a function (lowering.llvm.program.warm):
once per process it compiles the thread pool's module, whose compile leaves a compile
worker process idle, or just starts a worker, so that the first compile that needs one
(a matmul library's) does not wait ~0.1 s for one to start."""
from fresh import run_script

SCRIPT = """
import threading
import tracer
from lowering.llvm import pool, program, target
from lowering.settings import settings
tracer.jit(lambda x: x, backend="numpy")
assert not program._warmed and not target._workers          # numpy compiles nothing
f = tracer.jit(lambda x: x + 1)
assert program._warmed
for t in threading.enumerate():    # the pool's module: compiled by a worker, left idle
    if t.name == "tracer-compile-pool":
        t.join()
assert (pool._made.cache_info().currsize == 1) == (settings.num_threads > 1)
assert len(target._workers) == 1, target._workers
worker = target._workers[0]
tracer.jit(lambda x: x * 2)         # once per process
assert target._workers == [worker]
print(f(1.0))
"""


def test_jit_leaves_an_idle_compile_worker_once_per_process(tmp_path):
    for threads in ("1", "2"):
        out = run_script(SCRIPT, cache=tmp_path / threads, TRACER_NUM_THREADS=threads)
        assert out.strip() == "2.0"

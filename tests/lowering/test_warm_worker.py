"""jit warms the llvm backend when it decorates a function (lowering.llvm.warm.worker):
once per process it starts a compile worker process, so that the first compile that needs
one (a matmul library's) does not wait ~0.1 s for one to start. It compiles nothing."""
from fresh import run_script

SCRIPT = """
import tracer
from lowering.llvm import pool, target, warm
tracer.jit(lambda x: x, backend="numpy")
assert not warm._warmed and not target._workers          # numpy compiles nothing
f = tracer.jit(lambda x: x + 1)
assert warm._warmed
assert len(target._workers) == 1 and target.stats["compiled"] == 0
assert not pool._made.cache_info().currsize
worker = target._workers[0]
tracer.jit(lambda x: x * 2)         # once per process
assert target._workers == [worker]
print(f(1.0))
"""


def test_jit_leaves_an_idle_compile_worker_once_per_process(tmp_path):
    assert run_script(SCRIPT, cache=tmp_path).strip() == "2.0"

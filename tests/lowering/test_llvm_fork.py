"""Forking while another thread compiles: the child must still be able to compile and run
(multiprocessing's fork start method, a server's pre-fork workers). Run in a subprocess
whose children are killed after a timeout, so a deadlock fails the test instead of
hanging it."""
from fresh import run_script

SCRIPT = """
import os, sys, threading, time, traceback
import numpy as np
import tracer, tracer.numpy as tnp
from lowering.llvm import compile_graph
from lowering.settings import settings

x = np.linspace(-1, 1, 64)
stop, compiled = threading.Event(), [0]

def compile_forever():          # distinct literals: every module is a real compile
    k = 0
    while not stop.is_set():
        k += 1
        g = tracer.make_graph(lambda x: tnp.tanh(tnp.exp(x * (1.0 + k)) + k) * 0.5)(x)
        compile_graph(g).run([x])
        compiled[0] += 1

def child(i, parallel):
    if parallel:                # also run a step split across the thread pool
        settings.parallel_ns = 0
        os.environ["TRACER_NUM_THREADS"] = "2"
    f = tracer.jit(lambda x: tnp.sin(x) * (1000.0 + i) + tnp.sum(x))
    ok = np.allclose(f(x), np.sin(x) * (1000.0 + i) + x.sum())
    if parallel and "parallel" not in f.lower(x).steps:
        ok = False
    return 0 if ok else 3

worker = threading.Thread(target=compile_forever, daemon=True)
worker.start()
while not compiled[0]:
    time.sleep(0.001)
settings.parallel_ns, os.environ["TRACER_NUM_THREADS"] = 0, "2"
compile_graph(tracer.make_graph(lambda x: tnp.exp(x) * 3.0)(x)).run([x])   # pools exist
settings.parallel_ns, os.environ["TRACER_NUM_THREADS"] = 500_000, "1"
for i in range(6):
    time.sleep(0.003 * i)       # fork at different points of the worker's compile
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            code = child(i, parallel=i % 2)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + 10
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            print(f"child {i} hung (killed after 10 s)")
            sys.exit(1)
        time.sleep(0.01)
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"child {i} exited with {os.waitstatus_to_exitcode(status)}")
        sys.exit(1)
stop.set()
worker.join()
print("ok", compiled[0])
"""


def _run(script, tmp_path):
    assert run_script(script, cache=tmp_path, timeout=150,
                      TRACER_NUM_THREADS="1").startswith("ok")


def test_a_child_forked_while_another_thread_compiles_can_compile(tmp_path):
    _run(SCRIPT, tmp_path)


POOLS = """
import os, threading
import numpy as np
import tracer, tracer.numpy as tnp
from lowering.settings import settings

settings.parallel_ns, os.environ["TRACER_NUM_THREADS"] = 0, "2"
f = tracer.jit(lambda x: tnp.exp(x) * 3.0)
x = np.linspace(0, 1, 4096)
assert "parallel" in f.lower(x).steps
f(x)
pid = os.fork()
if pid == 0:
    code = 3
    try:
        ok = all(np.allclose(f(x), np.exp(x) * 3.0) for _ in range(50))
        names = [t.name for t in threading.enumerate()]
        if ok and "tracer-llvm-0" in names:         # a worker of its own
            code = 0
    finally:
        os._exit(code)
status = os.waitpid(pid, 0)[1]
print("ok" if os.waitstatus_to_exitcode(status) == 0 else f"child: {status}")
"""


def test_a_forked_child_gets_pool_workers_that_run(tmp_path):
    _run(POOLS, tmp_path)

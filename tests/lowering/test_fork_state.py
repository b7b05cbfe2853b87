"""Every piece of process-wide state has an at-fork rule: a child forked while other
threads trace, compile, hold a lock or run steps gets its garbage collector back, compiles
what its parent was compiling for itself, and finds every lock free. Each piece forks in a
fresh process whose child is killed after a timeout, so a regression fails instead of
hanging."""
import pytest

from fresh import run_script

SCRIPT = r"""
import gc, importlib, os, sys, threading, time, traceback
import numpy as np
import registry, tracer, tracer.numpy as tnp
from lowering import heap
from lowering.llvm import buffers, pool
from lowering.settings import settings
jit_module = importlib.import_module("tracer.jit")

X = np.linspace(-1, 1, 64)


def chain(x, n=12):
    for k in range(n):
        x = tnp.tanh(x * (1.0 + k * 1e-3))
    return x


def held(lock):
    '''A thread holds `lock` until the returned event is set (across the fork).'''
    holding, stop = threading.Event(), threading.Event()

    def hold():
        with lock:
            holding.set()
            stop.wait()
    threading.Thread(target=hold, daemon=True).start()
    holding.wait()
    return stop


def fork(child, timeout=20):
    '''Run child() in a forked child: its truth is the exit status; a hang is killed.'''
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            code = 0 if child() else 3
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "hung"
        time.sleep(0.01)


class Sevens:
    def __init__(self, graph):
        self.graph = graph

    def run(self, leaves):
        return [np.full(v.aval.shape, 7.0, v.aval.dtype) for v in self.graph.outvars]


def held_backend():
    '''A backend whose compile waits for state["release"] and notes its process.'''
    state = {"release": threading.Event(), "pids": []}

    def compile_graph(graph):
        state["pids"].append(os.getpid())
        state["release"].wait()
        return Sevens(graph)
    registry.register_backend("held", compile=compile_graph)
    os.environ["TRACER_BACKGROUND_COMPILE"] = "10"
    return state


def until_native(f):
    deadline = time.monotonic() + 10
    while not (f(X) == 7.0).all():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def heap_threshold():
    saved = gc.get_threshold()
    inside, stop = threading.Event(), threading.Event()

    def build():                    # another thread builds, and holds heap's lock
        with heap.building(), heap._lock:
            inside.set()
            stop.wait()
    mine = heap.building()          # so does the thread that forks
    mine.__enter__()
    threading.Thread(target=build, daemon=True).start()
    inside.wait()

    def child():
        raised = gc.get_threshold()[2] == heap._OUT_OF_REACH    # its own build goes on
        mine.__exit__(None, None, None)
        with heap.building():
            pass
        return raised and gc.get_threshold() == saved
    code = fork(child)
    stop.set()
    mine.__exit__(None, None, None)
    return code


def compile_thread():
    state = held_backend()
    f = tracer.jit(chain, backend="held")
    f(X)                            # interpreted; the compile waits for release

    def child():
        state["release"] = threading.Event()
        state["release"].set()
        return until_native(f) and isinstance(f.lower(X).program, Sevens) and \
            os.getpid() in state["pids"]
    return fork(child)


def compile_done():
    state = held_backend()
    f = tracer.jit(chain, backend="held")
    state["release"].set()
    assert isinstance(f.lower(X).program, Sevens)
    return fork(lambda: (f(X) == 7.0).all() and os.getpid() not in state["pids"])


def compile_llvm():
    os.environ["TRACER_BACKGROUND_COMPILE"] = "100"
    f = tracer.jit(lambda x: chain(x, 150))
    want = tracer.jit(lambda x: chain(x, 150), backend="numpy")(X)
    f(X)                            # interpreted while the llvm compile runs
    return fork(lambda: type(f.lower(X).program).__name__ == "Program" and np.allclose(f(X), want))


def jit_cache_lock():
    stop = held(jit_module._cache_lock)
    code = fork(lambda: (tracer.jit(lambda x: x + 1.0)(X) == X + 1.0).all())
    stop.set()
    return code


def buffers_lock():
    stop = held(buffers._kept_lock)
    big = np.linspace(0, 1, 1 << 16)

    def child():
        f = tracer.jit(lambda x: tnp.sin(x) @ tnp.cos(x) + x * 2.0)   # temporaries, output
        return all(np.allclose(f(big), np.sin(big) @ np.cos(big) + big * 2.0)
                   for _ in range(3))
    code = fork(child)
    stop.set()
    return code


def pool_loading():
    settings.parallel_ns, os.environ["TRACER_NUM_THREADS"] = 0, "2"
    stop = held(pool._loading)      # as pool.warm's thread holds it while the module loads
    x = np.linspace(0, 1, 4096)
    code = fork(lambda: np.allclose(tracer.jit(lambda x: tnp.exp(x) * 5.0)(x), np.exp(x) * 5.0))
    stop.set()
    return code


def thread_pool():
    settings.parallel_ns, os.environ["TRACER_NUM_THREADS"] = 0, "2"
    f = tracer.jit(lambda x: tnp.exp(x) * 3.0)
    x = np.linspace(0, 1, 4096)
    f(x)                            # the parent's pool and its workers exist
    stop = held(pool._lock)

    def child():
        g = tracer.jit(lambda x: tnp.exp(x) * 4.0)
        ok = "parallel" in g.lower(x).steps and np.allclose(g(x), np.exp(x) * 4.0)
        return ok and "tracer-llvm-0" in [t.name for t in threading.enumerate()]
    code = fork(child)
    stop.set()
    return code


def table_locks():
    from registry import versioned
    from tracer import pytree
    stops = [held(versioned._lock), held(pytree._lock)]

    def child():
        class Pair:
            pass
        tracer.tree_util.register_pytree_node(Pair, lambda p: ((p.a,), None),
                                              lambda aux, c: Pair())
        registry.register_kernel("fork_probe", "numpy", lambda x: x + 1.0)
        return (tracer.run_kernel("fork_probe", [X]) == X + 1.0).all()
    code = fork(child)
    for stop in stops:
        stop.set()
    return code


for piece in sys.argv[1:]:         # each in a process of its own, forked after the imports
    code = fork(lambda: globals()[piece]() == 0, timeout=60)
    print(piece, "ok" if code == 0 else f"child: {code}", flush=True)
"""
PIECES = ["heap_threshold", "compile_thread", "compile_done", "compile_llvm", "jit_cache_lock",
          "buffers_lock", "pool_loading", "thread_pool", "table_locks"]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    out = run_script(SCRIPT, *PIECES, cache=tmp_path_factory.mktemp("cache"), timeout=240,
                     TRACER_NUM_THREADS="1")
    return dict(line.split(" ", 1) for line in out.splitlines())


@pytest.mark.parametrize("piece", PIECES)
def test_a_forked_child_resets_process_state(piece, outcomes):
    assert outcomes[piece] == "ok"

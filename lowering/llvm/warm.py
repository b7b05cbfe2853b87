"""What a process loads ahead of its first calls, on other threads or processes, so that
the first call does not wait for it: a compile worker process when jit first decorates a
function, and the modules that steps run on (the segment runner, the thread pool's)
beside the first codegen that needs them."""
import contextlib
import threading

from lowering.llvm import entries, pool, target

_warmed = []        # [True] once worker() has run in this process
_runtime = set()    # the kinds of step whose modules runtime() has started loading


def worker():
    """Once per process, when jit decorates a function: start a compile worker process,
    so that the first compile needing one (a library's, on a daemon thread) does not wait
    for it to start: from W18's process, 30-46 ms to fork and exec, then 85 ms for Python
    and llvmlite to load, ahead of its matmul library."""
    if not _warmed:
        _warmed.append(True)
        target.warm_worker()


def runtime(kinds):
    """Load the modules that steps of `kinds` run on -- the segment runner
    (entries.runner) and the thread pool's (pool.library) -- on a thread beside codegen,
    once per process, so that a first call does not wait for them after its own module
    (W18's runner compiled after its matmul library, on the critical path). Not a daemon
    thread: that one would hand LLVM work to a compile worker process (target), and
    starting a second one beside the library's cost W18's first call ~0.3 s of CPU for a
    60-110 ms compile; the interpreter's exit waits for this one instead. Modules the
    disk cache holds load where they are first used: a thread for the runner cost W7's
    warm first call 4.4 ms (examples/bench_warm_start.py)."""
    loads = [load for kind, load, text in (
        ("segment", entries.runner, lambda: entries.RUNNER_IR),
        ("parallel", pool.library, pool.module_text))
        if kind in kinds and kind not in _runtime and not target.cached(text())]
    _runtime.update(kinds)
    if loads:
        threading.Thread(target=_quietly, args=(loads,), name="tracer-compile-runtime").start()


def _quietly(loads):
    for load in loads:
        with contextlib.suppress(Exception):    # its next caller loads it again, and raises
            load()

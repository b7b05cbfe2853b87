"""Holding off Python's full garbage collections while a graph is traced or compiled.

Tracing and compiling keep nearly every object they make alive until they finish, so the
heap grows the whole time, and CPython's full collections, each a scan of the whole heap
(~250 ns an object on the 2-vCPU host, 35-60 ms at 150-200K objects), came every time it
had grown by a quarter: 2 of them cost 70 ms of a 1,000-op chain's grad (650 ms), 3 cost
185 ms of a 2,000-op one (1.43 s), which made compile time grow faster than the graph.
`building()` raises the last generation's threshold out of reach while any thread is
inside it; young collections, which free the cycles a build drops (llvmlite's IR is one
web of references), still run. The threshold comes back when the last build ends, unless
someone changed it meanwhile. A forked child keeps only the builds of the thread that
forked (the others' threads are not in it), so its threshold comes back too.
"""
import contextlib
import gc
import os
import threading

from lowering import forks

_OUT_OF_REACH = 1 << 30
_lock = forks.lock()
_builds = 0                 # builds under way, in all threads
_saved = None
_mine = threading.local()   # builds under way in this thread (`depth`)


@contextlib.contextmanager
def building():
    global _builds, _saved
    with _lock:
        if _builds == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*_saved[:2], _OUT_OF_REACH)
        _builds += 1
        _mine.depth = getattr(_mine, "depth", 0) + 1
    try:
        yield
    finally:
        with _lock:
            _mine.depth -= 1
            _builds -= 1
            _restore()


def _restore():
    now = gc.get_threshold()
    if _builds == 0 and len(now) == 3 and now[2] == _OUT_OF_REACH:
        gc.set_threshold(*now[:2], _saved[2])


def _after_fork():
    global _builds
    _builds = getattr(_mine, "depth", 0)
    _restore()


os.register_at_fork(after_in_child=_after_fork)

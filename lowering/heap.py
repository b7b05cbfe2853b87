"""Holding off Python's full garbage collections while a graph is traced or compiled.

Tracing and compiling keep nearly every object they make alive until they finish, so the
heap grows the whole time, and CPython's full collections, each a scan of the whole heap
(~250 ns an object on the 2-vCPU host, 35-60 ms at 150-200K objects), came every time it
had grown by a quarter: 2 of them cost 70 ms of a 1,000-op chain's grad (650 ms), 3 cost
185 ms of a 2,000-op one (1.43 s), which made compile time grow faster than the graph.
`building()` raises the last generation's threshold out of reach while any thread is
inside it; young collections, which free the cycles a build drops (llvmlite's IR is one
web of references), still run. The threshold comes back when the last build ends, unless
someone changed it meanwhile.
"""
import contextlib
import gc
import threading

_OUT_OF_REACH = 1 << 30
_lock = threading.Lock()
_builds = 0
_saved = None


@contextlib.contextmanager
def building():
    global _builds, _saved
    with _lock:
        if _builds == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*_saved[:2], _OUT_OF_REACH)
        _builds += 1
    try:
        yield
    finally:
        with _lock:
            _builds -= 1
            now = gc.get_threshold()
            if _builds == 0 and len(now) == 3 and now[2] == _OUT_OF_REACH:
                gc.set_threshold(*now[:2], _saved[2])

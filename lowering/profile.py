"""Where compile time goes: named phases timed into the calling thread's current record.

A compile runs through several layers (tracing, passes, partition, code generation, LLVM's
optimizer, object emission, loading); each wraps its work in `phase(name)`. Whoever wants
the breakdown opens a record with `recording()` and reads it afterwards: the jit compile
log and the benchmark's `--profile-compile` do. With no record open a phase costs one
thread-local lookup, so the layers can always call it.
"""
import contextlib
import threading
import time

_local = threading.local()


@contextlib.contextmanager
def recording():
    """Collect the phases run by this thread inside the block: yields {phase: seconds}
    (a nested record also counts towards the enclosing one)."""
    record = {}
    stack = getattr(_local, "records", None)
    if stack is None:
        stack = _local.records = []
    stack.append(record)
    try:
        yield record
    finally:
        stack.pop()


@contextlib.contextmanager
def phase(name):
    """Time the block as phase `name` in every open record of this thread."""
    stack = getattr(_local, "records", None)
    if not stack:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        dt = time.perf_counter() - t0
        for record in stack:
            record[name] = record.get(name, 0.0) + dt


def note(name, value=1):
    """Count `value` under `name` in every open record (cache hits, node counts ...)."""
    for record in getattr(_local, "records", None) or ():
        record[name] = record.get(name, 0) + value

"""`disable_jit()`, as jax.disable_jit: inside the block, this thread's jitted functions
run as plain Python, eagerly, so that print and pdb see values (for debugging).

jit's hot path tests only that a cache entry's epoch is current, so opening a block bumps
the registry's epoch, and while any thread has a block open no entry is marked current
again: every call takes the slow path, which asks `disabled()` (a thread-local flag)."""
import contextlib
import threading

from lowering import forks
from registry.versioned import bump_epoch

OPEN = [0]                  # blocks open in any thread; read in place by jit
_here = threading.local()
_lock = forks.lock()


def disabled():
    """True inside this thread's innermost disable_jit(True) block."""
    return getattr(_here, "on", False)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the block, jitted functions run their Python (disable_jit(False) inside
    one turns jit back on)."""
    before = disabled()
    _here.on = bool(disable)
    with _lock:
        OPEN[0] += 1
    bump_epoch()
    try:
        yield
    finally:
        _here.on = before
        with _lock:
            OPEN[0] -= 1

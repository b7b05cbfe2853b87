"""`disable_jit()`, as jax.disable_jit: inside the block, this thread's jitted functions
run as plain Python, eagerly, so that print and pdb see values (for debugging).

jit's hot path tests only that a cache entry's epoch is current, so opening a block bumps
the registry's epoch, and while any thread has a block open no entry is marked current
again: every call takes the slow path, which asks `disabled()` (a thread-local flag, else
the process-wide one that `tracer.config.update("jax_disable_jit", True)` sets, which
counts as a block open for as long as it is on)."""
import contextlib
import threading

from lowering import forks
from registry.versioned import bump_epoch

OPEN = [0]                  # blocks open in any thread, jax_disable_jit and nan_check's
                            # check if on; read in place by jit
GLOBAL = [False]            # jax_disable_jit, process-wide
_UNSET = object()
_here = threading.local()
_lock = forks.lock()


def disabled():
    """True inside this thread's innermost disable_jit(True) block, or outside any block
    while jax_disable_jit is on."""
    return getattr(_here, "on", GLOBAL[0])


def set_global(disable):
    """jax_disable_jit: turn jit off (or back on) in every thread outside its blocks."""
    with _lock:
        OPEN[0] += disable - GLOBAL[0]
        GLOBAL[0] = disable
    bump_epoch()


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the block, jitted functions run their Python (disable_jit(False) inside
    one turns jit back on)."""
    before = getattr(_here, "on", _UNSET)
    _here.on = bool(disable)
    slow_path(True)
    try:
        yield
    finally:
        if before is _UNSET:
            del _here.on
        else:
            _here.on = before
        slow_path(False)


def slow_path(on):
    """Count (or, not `on`, uncount) one reason for every jitted call to take the slow
    path: an open block here, or tracer.nan_check's check being on."""
    with _lock:
        OPEN[0] += 1 if on else -1
    bump_epoch()

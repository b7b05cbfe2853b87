"""Where a call's buffers come from, so that calls do not page-fault on fresh memory.

A fresh np.empty of a few MB is mmapped by malloc and page-faults on every first touch,
on every call: conv1 then *2 took 1536 faults and 2.5 ms of CPU per call around 0.56 ms
of compute, and x * 2 over 16 MB 2.0 ms against 0.8 ms into memory already touched.
So a Program keeps two kinds of buffers between its calls:

- `Temps`: its temporaries (buffers no output is), as whole sets, each set views into
  one arena laid out by lowering.llvm.liveness (temporaries whose lifetimes do not
  overlap share bytes). A call takes a set and gives it back after its outputs are
  made; a call finding none (the first, or one overlapping another) makes one, so each
  running call has a set of its own.
- `Outputs`: its large outputs, each recycled once the caller has dropped it. A call
  takes the buffer its slot gave out last only if nothing but the slot refers to it
  (its reference count, calibrated below, and no weak reference) and the caller changed
  none of its metadata (`Outputs._taker`); else it allocates. Whoever still holds a
  result -- a variable, a list, a view, a memoryview, the next call's own argument --
  holds a reference, so a result the caller can reach is never handed out again:
  `params = step(params)` alternates between two buffers.

Memory: kept buffers live as long as their Program, at most KEEP_SETS sets of
temporaries each (more only helps more threads calling one function at once), and only
while all live Programs keep at most KEEP_BYTES in total (a jitted function caches up to
128 signatures; a Program without room allocates per call). Free-threaded Python (no
GIL) recycles no outputs: its reference counts are not read atomically.
"""
import sys
import weakref

import numpy as np

from lowering import forks
from lowering.llvm.schedule import ALIGN

KEEP_SETS = 2           # sets of temporaries a Program keeps between calls
KEEP_BYTES = 1 << 30    # bytes all live Programs may keep between calls
PAGE = 4096             # bytes apart that Temps.prefault touches the arena
RECYCLE_MIN = 1 << 18   # outputs at least this big are recycled (malloc mmaps from 128 KiB up)
_kept, _kept_lock = [0], forks.lock()  # bytes kept by all live Programs (a child's
                                        # kept buffers are its own copies: still kept)


def _charge(nbytes):
    """Reserve nbytes of the process's KEEP_BYTES; False if there is no room."""
    with _kept_lock:
        if _kept[0] + nbytes > KEEP_BYTES:
            return False
        _kept[0] += nbytes
        return True


def _release(charged):
    with _kept_lock:
        _kept[0] -= charged[0]


def nbytes(spec):
    """Bytes of a buffer spec (shape, dtype); 0 for a slot a Python step fills (dtype None)."""
    shape, dtype = spec
    return 0 if dtype is None else int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


class Temps:
    """A Program's temporaries (see module doc): (shape, dtype) `specs` at byte `offsets`
    of an arena of `size` bytes. `kept[0]`: how many sets it may keep."""

    def __init__(self, specs, offsets, size):
        self.specs, self.offsets, self.free, self.kept, self.charged = specs, offsets, [], [0], [0]
        self.nbytes = size
        weakref.finalize(self, _release, self.charged)

    def fresh(self, touch=False):
        """A new set, kept after its call if this Program and the process have room; its
        pages faulted in now if `touch`."""
        if self.kept[0] < KEEP_SETS and _charge(self.nbytes):
            self.charged[0] += self.nbytes
            self.kept[0] += 1
        raw = np.empty(self.nbytes + ALIGN, np.uint8)
        arena = raw[-raw.ctypes.data % ALIGN:][:self.nbytes]
        if touch:
            _touch(arena)
        return tuple([arena[o:o + nbytes((s, d))].view(d).reshape(s)
                      for (s, d), o in zip(self.specs, self.offsets)])

    def prefault(self):
        """Make the first call's set now, its pages touched, if it is to be kept (W18's 54
        MB arena: 13,824 page faults without huge pages), which a Program can do while
        LLVM compiles its code."""
        if self.nbytes and not self.free and self.kept[0] < KEEP_SETS:
            self.give(self.fresh(touch=True))

    def take(self):
        try:
            return self.free.pop()
        except IndexError:
            return self.fresh()

    def give(self, temps):
        if len(self.free) < self.kept[0]:
            self.free.append(temps)


def _touch(a):
    """Fault in the pages of contiguous array `a`."""
    a.reshape(-1).view(np.uint8)[::PAGE] = 0


def _count(last, j):
    """The reference count `Outputs.take` sees for an object only `last[j]` holds (the
    same statements, so that the interpreter counts alike)."""
    o = last[j]
    return sys.getrefcount(o)


def _calibrate():
    """FREE, the count of an unshared buffer, or None (no recycling) where one more
    holder does not show as one more count."""
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    last = [np.empty(1)]
    free = _count(last, 0)
    other = last[0]
    return free if _count(last, 0) == free + 1 and other is last[0] else None


FREE = _calibrate()


class Outputs:
    """A Program's recycled large outputs (see module doc), one slot each: `takers[j]()`
    is the buffer for slot j's next result."""

    def __init__(self, specs):
        self.specs, self.last, self.charged = specs, [None] * len(specs), [0]
        self.keep = [False] * len(specs)        # slot j's last buffer is charged, kept
        self.takers = [self._taker(j) for j in range(len(specs))]
        weakref.finalize(self, _release, self.charged)

    def prefault(self):
        """Make each slot's first buffer now, its pages touched (see Temps.prefault): the
        24 new weights of W18's step (96 MB) took 11,800 page faults in its first call."""
        for j, (shape, dtype) in enumerate(self.specs):
            size = nbytes(self.specs[j])
            if self.last[j] is None and FREE is not None and _charge(size):
                self.charged[0] += size
                self.keep[j] = True
                self.last[j] = o = np.empty(shape, dtype)
                _touch(o)

    def _taker(self, j):
        """Slot j's take. The last buffer is reused only if nothing but the slot refers
        to it (no weak reference either: a WeakValueDictionary entry or a finalizer must
        see a result die, not change) and the caller changed nothing NumPy lets one set
        in place (shape, strides, dtype, flags; `resize` changes the shape), so a reused
        result cannot be told from a fresh np.empty."""
        shape, dtype = self.specs[j]
        fresh = np.empty(shape, dtype)       # untouched (mmapped) pages: cheap
        flags, size = fresh.flags.num, nbytes(self.specs[j])
        strides = fresh.strides if 1 in shape else None   # else set by the contiguous flag
        last, keep, charged = self.last, self.keep, self.charged    # no cycle through self
        refs, weakrefs = sys.getrefcount, weakref.getweakrefcount
        del fresh

        def take():
            o = last[j]
            if (refs(o) == FREE and o.shape == shape and o.dtype is dtype and
                    o.flags.num == flags and not weakrefs(o) and
                    (strides is None or o.strides == strides)):
                return o
            o = np.empty(shape, dtype)
            if not keep[j] and FREE is not None and _charge(size):
                charged[0] += size
                keep[j] = True
            if keep[j]:
                last[j] = o
            return o
        return take

"""The thread pool that runs parallel steps, in native code from hand-off to the last piece.

A parallel step handed to Python threads cost 50-80 us per step (a worker woken through a
Condition, the GIL taken between pieces, each piece a ctypes call): steps shorter than
~0.5 ms did not pay to split. Here the caller makes ONE native call (`run`; ctypes
releases the GIL) that publishes the step in the pool's job slot, runs pieces itself and
returns when every piece is done. Workers are daemon Python threads parked in one native
call (`worker`) for good: they spin on the slot's job word for up to SPIN_NS, then sleep
in a futex on it (Linux; elsewhere they poll every 200 us). A spinning thread yields its
core every 64 polls: Linux wakes a worker on its waker's core, and a worker spinning there
kept the caller off it for the whole SPIN_NS (2-thread steps 5 us -> 200 us whenever the
other core was busy). Pieces are claimed by a compare-and-swap on one word holding (job
sequence << 32 | next piece), so a worker that arrives late, even one job late, finds
nothing left instead of being waited for. A caller closes the job word (next piece
2**32 - 1) before it writes a new job's fields, and the job's total is written with release
and read with acquire: a worker still in the last job that reads the new total cannot claim
a piece with the old job word.

A job's phases (a kernel's prepare step, then its work items) run in order: a piece of
phase p starts once every piece before it is done (the claiming thread waits in native
code). A piece's failure code is kept (the first nonzero one) and the pieces after it are
skipped. One job slot serves the process: a caller that finds it busy (another thread's
step) runs its pieces alone on a slot of its own, so concurrent callers never wait for
each other. A forked child gets a fresh slot and fresh workers.

Slot words (the module's global @slot): 0 job word, 8 pieces done, 16 step descriptor, 17
argv, 18 pieces, 19 helpers, 20 failure code, 21 busy, 22 workers asleep (claim and done
words on cache lines of their own). A step descriptor (`Step`) is int64 words: phases,
buffers, helpers, pieces, then per phase its entry, argv offset, bounds array, first
piece, pieces.
"""
import ctypes
import functools
import os
import threading
import time
from types import SimpleNamespace

import numpy as np

from lowering import forks
from lowering.llvm import entries, target

SPIN_NS = 200_000   # how long an idle worker spins before it sleeps: a sleeping thread
                    # wakes 15-30 us after the notify (measured in a 2-vCPU VM)
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
_FUTEX = {"x86_64": 202, "aarch64": 98}     # SYS_futex on Linux

_IR = """
declare i64 @syscall(i64, ...)
declare i32 @sched_yield()
{declare}
{array_data}
@slot = internal global [24 x i64] zeroinitializer, align 64

define void @reset() {{      ; a fresh slot: no job, not busy, nobody asleep
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %p = call ptr @word(ptr @slot, i64 %k)
  store atomic i64 0, ptr %p seq_cst, align 8
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, 24
  br i1 %more, label %loop, label %out
out:
  ret void
}}

define private ptr @word(ptr %slot, i64 %k) alwaysinline {{
  %p = getelementptr inbounds i64, ptr %slot, i64 %k
  ret ptr %p
}}

define private void @relax(i64 %i) alwaysinline {{   ; a spin-wait's i-th step
  {pause}
  %low = and i64 %i, 63
  %yield = icmp eq i64 %low, 63
  br i1 %yield, label %give, label %out
give:                       ; a thread this one keeps off its core (a woken worker lands on
  %y = call i32 @sched_yield()      ; its waker's) gets to run
  br label %out
out:
  ret void
}}

define void @idle(ptr %word, i64 %n) {{           ; n polls of a word: SPIN_NS calibration
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %v = load atomic volatile i64, ptr %word acquire, align 8
  call void @relax(i64 %i)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}}

define private void @await(ptr %word, i64 %target) {{   ; until *word >= target
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %again ]
  %v = load atomic i64, ptr %word acquire, align 8
  %ok = icmp sge i64 %v, %target
  br i1 %ok, label %out, label %again
again:
  %i1 = add i64 %i, 1
  call void @relax(i64 %i1)
  br label %loop
out:
  ret void
}}

define private void @work(ptr %slot, i64 %seq) {{     ; claim and run pieces of job seq
entry:
  %done = call ptr @word(ptr %slot, i64 8)
  %totalp = call ptr @word(ptr %slot, i64 18)
  %rcp = call ptr @word(ptr %slot, i64 20)
  br label %claim
claim:
  %w = load atomic i64, ptr %slot monotonic, align 8
  %s = lshr i64 %w, 32
  %mine = icmp eq i64 %s, %seq
  br i1 %mine, label %check, label %out
check:
  %g = and i64 %w, 4294967295
  %total = load atomic i64, ptr %totalp acquire, align 8   ; a new job's total comes after
  %left = icmp ult i64 %g, %total                            ; its job word was closed
  br i1 %left, label %cas, label %out
cas:
  %w1 = add i64 %w, 1
  %r = cmpxchg ptr %slot, i64 %w, i64 %w1 acq_rel monotonic
  %won = extractvalue {{ i64, i1 }} %r, 1
  br i1 %won, label %claimed, label %claim
claimed:                    ; the job's fields stay as they are until this piece is done
  %stepp = call ptr @word(ptr %slot, i64 16)
  %step = load ptr, ptr %stepp, align 8
  %argvp = call ptr @word(ptr %slot, i64 17)
  %argv = load ptr, ptr %argvp, align 8
  br label %scan
scan:
  %p = phi i64 [ 0, %claimed ], [ %p1, %scan ]
  %p5 = mul i64 %p, 5
  %base = add i64 %p5, 4
  %firstp = getelementptr inbounds i64, ptr %step, i64 %base
  %fp = getelementptr inbounds i64, ptr %firstp, i64 3
  %first = load i64, ptr %fp, align 8
  %np = getelementptr inbounds i64, ptr %firstp, i64 4
  %n = load i64, ptr %np, align 8
  %end = add i64 %first, %n
  %p1 = add i64 %p, 1
  %in = icmp ult i64 %g, %end
  br i1 %in, label %found, label %scan
found:
  call void @await(ptr %done, i64 %first)     ; the phases before are done
  %rc0 = load atomic i64, ptr %rcp monotonic, align 8
  %failed = icmp ne i64 %rc0, 0
  br i1 %failed, label %count, label %call
call:
  %fn = load ptr, ptr %firstp, align 8
  %offp = getelementptr inbounds i64, ptr %firstp, i64 1
  %off = load i64, ptr %offp, align 8
  %args = getelementptr inbounds i64, ptr %argv, i64 %off
  %bp = getelementptr inbounds i64, ptr %firstp, i64 2
  %bounds = load ptr, ptr %bp, align 8
  %k = sub i64 %g, %first
  %lop = getelementptr inbounds i64, ptr %bounds, i64 %k
  %lo = load i64, ptr %lop, align 8
  %hip = getelementptr inbounds i64, ptr %lop, i64 1
  %hi = load i64, ptr %hip, align 8
  %rc = call i64 %fn(ptr %args, i64 %lo, i64 %hi)
  %bad = icmp ne i64 %rc, 0
  br i1 %bad, label %record, label %count
record:
  %x = cmpxchg ptr %rcp, i64 0, i64 %rc monotonic monotonic
  br label %count
count:
  %old = atomicrmw add ptr %done, i64 1 release
  br label %claim
out:
  ret void
}}

define i64 @run(ptr %step, ptr %tuple) {{   ; a step, on the tuple's arrays
entry:
  %shared = getelementptr inbounds [24 x i64], ptr @slot, i64 0, i64 0
  %local = alloca [24 x i64], align 64
  %nobjsp = getelementptr inbounds i64, ptr %step, i64 1
  %nobjs = load i64, ptr %nobjsp, align 8
  %argv = alloca ptr, i64 %nobjs, align 8
  br label %fill
fill:
  %k = phi i64 [ 0, %entry ], [ %k1, %item ]
  %more = icmp ult i64 %k, %nobjs
  br i1 %more, label %item, label %take
item:
  %data = call ptr @array_data(ptr %tuple, i64 %k)
  %argk = getelementptr inbounds ptr, ptr %argv, i64 %k
  store ptr %data, ptr %argk, align 8
  %k1 = add i64 %k, 1
  br label %fill
take:
  %busy = call ptr @word(ptr %shared, i64 21)
  %x = cmpxchg ptr %busy, i64 0, i64 1 acquire monotonic
  %got = extractvalue {{ i64, i1 }} %x, 1
  br i1 %got, label %publish, label %alone
alone:                      ; the slot is another step's: run alone on a slot of our own
  store i64 0, ptr %local, align 64
  br label %publish
publish:                    ; close the job word (no piece left), then fill in the fields
  %slot = phi ptr [ %shared, %take ], [ %local, %alone ]
  %closed = atomicrmw or ptr %slot, i64 4294967295 acq_rel
  %stepw = call ptr @word(ptr %slot, i64 16)
  store ptr %step, ptr %stepw, align 8
  %argvw = call ptr @word(ptr %slot, i64 17)
  store ptr %argv, ptr %argvw, align 8
  %totalp = getelementptr inbounds i64, ptr %step, i64 3
  %total = load i64, ptr %totalp, align 8
  %totalw = call ptr @word(ptr %slot, i64 18)
  store atomic i64 %total, ptr %totalw release, align 8
  %helpersp = getelementptr inbounds i64, ptr %step, i64 2
  %helpers = load i64, ptr %helpersp, align 8
  %helpersw = call ptr @word(ptr %slot, i64 19)
  store atomic i64 %helpers, ptr %helpersw monotonic, align 8
  %rcw = call ptr @word(ptr %slot, i64 20)
  store atomic i64 0, ptr %rcw monotonic, align 8
  %done = call ptr @word(ptr %slot, i64 8)
  store atomic i64 0, ptr %done monotonic, align 8
  %s = lshr i64 %closed, 32
  %s1 = add i64 %s, 1
  %seq = and i64 %s1, 4294967295
  %w1 = shl i64 %seq, 32
  store atomic i64 %w1, ptr %slot seq_cst, align 8
  br i1 %got, label %wake, label %go
wake:
  %asleepp = call ptr @word(ptr %shared, i64 22)
  %asleep = load atomic i64, ptr %asleepp seq_cst, align 8
  %any = icmp ne i64 %asleep, 0
  br i1 %any, label %notify, label %go
notify:
  %hi = getelementptr inbounds i8, ptr %shared, i64 4
  {wake}
  br label %go
go:
  call void @work(ptr %slot, i64 %seq)
  call void @await(ptr %done, i64 %total)
  %rc = load atomic i64, ptr %rcw monotonic, align 8
  br i1 %got, label %release, label %out
release:
  store atomic i64 0, ptr %busy release, align 8
  br label %out
out:
  ret i64 %rc
}}

define void @worker(i64 %index, i64 %spins) {{     ; a worker thread's life
entry:
  %slot = getelementptr inbounds [24 x i64], ptr @slot, i64 0, i64 0
  %asleepp = call ptr @word(ptr %slot, i64 22)
  %helpersp = call ptr @word(ptr %slot, i64 19)
  %hi = getelementptr inbounds i8, ptr %slot, i64 4
  %w0 = load atomic i64, ptr %slot acquire, align 8
  %s0 = lshr i64 %w0, 32
  br label %restart
restart:
  %last = phi i64 [ %s0, %entry ], [ %s, %got ], [ %s, %join ], [ %last, %woke ]
  br label %poll
poll:
  %i = phi i64 [ 0, %restart ], [ %i1, %pause ]
  %w = load atomic i64, ptr %slot acquire, align 8
  %s = lshr i64 %w, 32
  %new = icmp ne i64 %s, %last
  br i1 %new, label %got, label %idle
idle:
  %i1 = add i64 %i, 1
  %long = icmp ugt i64 %i1, %spins
  br i1 %long, label %sleep, label %pause
pause:
  call void @relax(i64 %i1)
  br label %poll
sleep:
  %a = atomicrmw add ptr %asleepp, i64 1 seq_cst
  %w2 = load atomic i64, ptr %slot seq_cst, align 8
  %s2 = lshr i64 %w2, 32
  %same = icmp eq i64 %s2, %last
  br i1 %same, label %block, label %woke
block:
  %v = and i64 %last, 4294967295
  {block}
  br label %woke
woke:
  %b = atomicrmw sub ptr %asleepp, i64 1 seq_cst
  br label %restart
got:
  %helpers = load atomic i64, ptr %helpersp monotonic, align 8
  %mine = icmp ult i64 %index, %helpers
  br i1 %mine, label %join, label %restart
join:
  call void @work(ptr %slot, i64 %s)
  br label %restart
}}
"""


_loading = forks.lock()      # a child forked mid-load loads again


def library():
    """The pool's native functions (see _made), loaded by whichever thread asks first
    (warm.runtime starts it beside codegen)."""
    with _loading:
        return _made()


@functools.lru_cache(maxsize=None)
def module_text():
    """The pool's module, for the target's triple."""
    x86, arch = target.TRIPLE.startswith("x86"), target.TRIPLE.split("-")[0]
    futex = _FUTEX.get(arch) if "linux" in target.TRIPLE else None
    return _IR.format(
        declare=("declare void @llvm.x86.sse2.pause()\n" if x86 else "") +
        ("" if futex else "declare i32 @usleep(i32)"),
        pause="call void @llvm.x86.sse2.pause()" if x86 else "",
        array_data=entries.ARRAY_DATA_IR,
        wake=f"%r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %hi, i64 129, i64 {2**31 - 1})"
        if futex else "",
        block=f"%r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %hi, i64 128, i64 %v, ptr null)"
        if futex else "%r = call i32 @usleep(i32 200)")


@functools.lru_cache(maxsize=None)
def _made():
    """The pool's native functions (compiled once per process: the job slot is their
    module's global, never freed, so workers parked at interpreter exit read valid
    memory), and the spin count that lasts about SPIN_NS."""
    loaded = target.load(module_text())
    idle = loaded.function("idle", None, _P, _I64)
    word = np.zeros(1, np.int64)
    t = time.perf_counter()
    idle(word.ctypes.data, 10_000)
    spins = max(1, int(SPIN_NS * 1e-9 * 10_000 / (time.perf_counter() - t)))
    return SimpleNamespace(loaded=loaded, run=loaded.function("run", _I64, _P, _P),
                           reset=loaded.function("reset", None), spins=spins,
                           worker=loaded.function("worker", None, _I64, _I64))


class _Pool:
    """The process's job slot, reset, and its worker threads (started as steps need them)."""

    def __init__(self):
        library().reset()
        self.workers, self.lock = 0, threading.Lock()

    def start(self, n):
        lib = library()
        with self.lock:
            for k in range(self.workers, n):
                threading.Thread(target=lib.worker, args=(k, lib.spins), daemon=True,
                                 name=f"tracer-llvm-{k}").start()
            self.workers = max(self.workers, n)


_pool, _lock = None, forks.lock()


def _after_fork():
    """A forked child has none of the workers and maybe a step half done in the slot: the
    next step starts afresh."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_after_fork)


class Step:
    """A parallel step ready to run: `phases` [(entry address, buffer positions, piece
    bounds)], run in order on up to `threads` threads. `objects` lists the buffers the
    call passes, phase after phase; `run(arrays)` runs it on that tuple of arrays (they
    stay alive till it returns) and returns 0 or the first failure code."""

    def __init__(self, phases, threads):
        self.objects = tuple(k for _, pos, _ in phases for k in pos)
        self._bounds = [np.asarray(b, np.int64) for _, _, b in phases]
        counts = [len(b) - 1 for b in self._bounds]
        self.helpers = min(threads, max(counts)) - 1
        desc, offset, first = [len(phases), len(self.objects), self.helpers, sum(counts)], 0, 0
        for (address, pos, _), bounds, n in zip(phases, self._bounds, counts):
            desc += [address, offset, bounds.ctypes.data, first, n]
            offset, first = offset + len(pos), first + n
        self._desc = np.array(desc, np.int64)
        self._address, self._run = self._desc.ctypes.data, library().run

    def run(self, arrays):
        pool = _pool or _new_pool()
        if pool.workers < self.helpers:
            pool.start(self.helpers)
        return self._run(self._address, id(arrays))


def _new_pool():
    global _pool
    with _lock:
        _pool = _pool or _Pool()
        return _pool

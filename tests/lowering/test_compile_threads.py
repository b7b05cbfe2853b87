"""Compiles in different threads run at the same time (no process-wide lock around LLVM's
work), a module several threads ask for at once is compiled once, and a daemon thread's
compile runs in a worker process."""
import ctypes
import threading

import pytest

from lowering.llvm import target

WAIT = 30       # seconds before a test gives up on a thread (a deadlock fails, not hangs)


def module(value):
    return f"define i64 @f() {{\n  ret i64 {value}\n}}\n"


@pytest.fixture
def held(monkeypatch):
    """Modules whose text contains 'ret i64 <n>' with n in the returned set stop inside
    LLVM's optimizer until `release` is set; `entered` is set when one got there."""
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    monkeypatch.setattr(target, "IN_PROCESS", float("inf"))     # compiles stay in this process
    hold, entered, release = set(), threading.Event(), threading.Event()
    optimize = target._optimize

    def slow_optimize(text, *tools):
        if any(f"ret i64 {n}\n" in text for n in hold):
            entered.set()
            assert release.wait(WAIT)
        return optimize(text, *tools)
    monkeypatch.setattr(target, "_optimize", slow_optimize)
    yield hold, entered, release
    release.set()


def run(value):
    fn = target.load(module(value)).function("f", ctypes.c_int64)
    assert fn() == value


def start(fun, *args):
    t = threading.Thread(target=fun, args=args)     # (a daemon thread compiles elsewhere)
    t.start()
    return t


def test_a_compile_does_not_wait_for_another_threads_compile(held):
    hold, entered, release = held
    hold.add(900_001)
    slow = start(run, 900_001)
    assert entered.wait(WAIT)
    fast = start(run, 900_002)
    fast.join(WAIT)
    assert not fast.is_alive(), "a compile waited for another thread's compile"
    release.set()
    slow.join(WAIT)
    assert not slow.is_alive()


def test_threads_asking_for_one_module_at_once_compile_it_once(held):
    hold, entered, release = held
    hold.add(900_003)
    before = target.stats["compiled"]
    results = []
    first = start(lambda: results.append(target.load(module(900_003))))
    assert entered.wait(WAIT)
    second = start(lambda: results.append(target.load(module(900_003))))
    second.join(0.2)
    assert second.is_alive()            # waiting for the first thread's compile
    release.set()
    for t in (first, second):
        t.join(WAIT)
        assert not t.is_alive()
    assert target.stats["compiled"] == before + 1
    assert results[0] is results[1]


def test_a_daemon_threads_compile_runs_in_a_worker_process(held):
    """A daemon thread may still be inside LLVM when the interpreter exits and LLVM's
    static destructors run: it must never run the optimizer or emitter in this process."""
    hold, entered, release = held
    hold.add(900_004)
    worker = threading.Thread(target=run, args=(900_004,), daemon=True)
    worker.start()
    worker.join(WAIT)
    assert not worker.is_alive()
    assert not entered.is_set(), "a daemon thread optimized a module in this process"

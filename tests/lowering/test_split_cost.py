"""When a module is cut: by LLVM's estimated time (lowering.llvm.split.seconds) against
what a part adds (PART_S), not by a line count a model lands just under (a deep MLP's
step module of 4,999 lines, ~0.7 s of LLVM, compiled on one core of two), and only into
as many parts as the host has idle cores (lowering.host.idle_cores)."""
import ctypes
import math
import subprocess
import sys
import time

import pytest

from lowering import host
from lowering.llvm import split, target
from test_split_modules import module

_LINES = 9      # lines of function bodies an entry of module() adds


def _module_of(seconds):
    return module(math.ceil(seconds / split.LINE_S / _LINES))


def test_cut_in_two_when_each_half_pays_for_itself():
    text = _module_of(2 * split.PART_S * 1.05)
    assert text.count("\n") < 5000
    assert len(split.parts(text, 2)) == 2
    assert len(split.parts(text, 4)) == 2       # not more parts than pay


def test_not_cut_when_a_part_would_not_pay():
    text = _module_of(2 * split.PART_S * 0.9)
    assert split.parts(text, 2) == [text]


@pytest.mark.parametrize("load, cpus, idle", [(0.2, 2, 1), (1.6, 2, 0), (0.1, 1, 0),
                                              (1.0, 4, 3), (2.9, 4, 1)])
def test_idle_cores_beside_the_callers_thread(monkeypatch, load, cpus, idle):
    monkeypatch.setattr(host.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(host, "runnable", lambda: None)
    monkeypatch.setattr(host.os, "sched_getaffinity", lambda pid: set(range(cpus)),
                        raising=False)
    assert host.idle_cores() == idle and host.idle_core() is (idle > 0)


@pytest.mark.parametrize("average, now, idle", [(1.6, 1, 1), (1.6, 2, 0), (0.2, 3, 1),
                                                (2.9, 1, 3)])
def test_the_load_is_the_threads_runnable_now_when_fewer_than_the_average(
        monkeypatch, average, now, idle):
    """The 1-minute average still counts a program that has just finished: an idle 2-CPU
    host right after one read as busy. Fewer threads runnable now win; more do not (one
    reading is a moment, the average a minute)."""
    monkeypatch.setattr(host.os, "getloadavg", lambda: (average,) * 3)
    monkeypatch.setattr(host, "runnable", lambda: now)
    cpus = 4 if average > 2 else 2
    monkeypatch.setattr(host.os, "sched_getaffinity", lambda pid: set(range(cpus)),
                        raising=False)
    assert host.idle_cores() == idle


def test_runnable_threads_leave_out_our_own_child_processes(monkeypatch):
    """A busy child process (as a compile worker is) is our own short work: it is counted
    as ours, and what is ours does not make the host read as busy."""
    if host.runnable() is None:
        pytest.skip("no /proc/loadavg here")
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        assert host._own_running() >= 2        # the reader and the child
    finally:
        child.kill()
        child.wait()
    monkeypatch.setattr(host, "_own_running", lambda: 10_000)   # all of it ours
    assert host.runnable() == 1


@pytest.mark.parametrize("load, parts", [(0.0, 2), (3.0, 1)], ids=["idle", "busy"])
def test_parts_only_on_idle_cores(monkeypatch, tmp_path, load, parts):
    """On a busy host a part only takes a share of the caller's cores: no parts."""
    monkeypatch.setattr(host.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(host, "runnable", lambda: 1 + int(load))
    monkeypatch.setattr(host.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRACER_DISK_CACHE", raising=False)
    text = module(5400 // _LINES, tag=int(load * 1000) + 9_000_017)     # over the old 5,000
    loaded = target.load(text)
    assert loaded.function("e3", ctypes.c_int64)() == 3 + int(load * 1000) + 9_000_017
    assert len(target._unpack(target.caches.read(str(tmp_path), loaded.key + ".o"))) == parts

"""A process that ends while a compile worker compiles for it (jit's background compile
cut short by the exit) leaves the object in the disk cache: the worker finishes that one
compile, writes the entry the process would have written (whole, atomically) and ends;
the process's exit does not wait for it. The next run of the program compiles nothing."""
import os
import time

import pytest

from fresh import loops_module, run_script

TEXT = loops_module(80)

MODULE = r"""
text = sys.argv[2]
from lowering.llvm import split, target
split.PART_S = float(sys.argv[1])
target.idle_cores = lambda: 1       # whatever the host's load: both runs cut alike
"""

# the first process: compiles on a daemon thread (in a worker process), ends once the
# worker has the module; prints its key, its compile workers and whether it was cached
FIRST = "import os, sys, threading, time\n" + MODULE + r"""
from lowering.llvm import compile_worker, target
sent = threading.Semaphore(0)
compile = compile_worker.Worker.compile

def sending(self, *args):
    sent.release()
    return compile(self, *args)
compile_worker.Worker.compile = sending
threading.Thread(target=target.load, args=(text,), daemon=True).start()
parts = len(split.parts(text, 2))
for _ in range(parts):
    sent.acquire()
time.sleep(0.05)
children = set()
for task in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{task}/children") as f:
        children |= set(f.read().split())
print(target.cache_key(text), parts, target.cached(text), " ".join(children))
"""

# the second: loads the same module; prints how many compiles it ran
SECOND = "import sys\n" + MODULE + r"""
from lowering.llvm import target
compiles = []
compile = target._compile
target._compile = lambda *a: compiles.append(a) or compile(*a)
f = target.load(text).address("f7")
print(len(compiles), target.stats["disk_hits"])
"""


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("part_s", [1e3, 0.01], ids=["one part", "parts"])
def test_the_next_process_loads_what_a_worker_compiled_after_its_process_ended(
        tmp_path, part_s):
    key, parts, cached, *workers = run_script(FIRST, part_s, TEXT, cache=tmp_path).split()
    assert cached == "False" and workers, "the compile ended before the process did"
    assert parts == ("1" if part_s > 1 else "2")
    deadline = time.perf_counter() + 60
    while any(map(_alive, workers)) and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, workers)), "a worker outlived its compile"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]     # no partial entry
    compiles, hits = run_script(SECOND, part_s, TEXT, cache=tmp_path).split()
    assert compiles == "0", f"the second process compiled again ({key[:12]}, {parts} parts)"
    assert parts != "1" or hits == "1"


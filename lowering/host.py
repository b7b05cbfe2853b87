"""What the host offers this process now: the CPUs it may use, and how many of them are
idle. jit's background compiles, the llvm backend's library compiles beside a module and
the parts a long module is cut into all pay only with cores of their own (on a busy host
another thread only takes a share of the caller's cores), so all ask here."""
import contextlib
import math
import os
import time


def cores():
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        return os.cpu_count() or 1


def runnable():
    """Threads runnable right now on the host but for this process's own and its child
    processes' (compile workers: short work of ours, done soon), plus the caller's; None
    where /proc does not say."""
    try:
        with open("/proc/loadavg") as f:
            everyone = int(f.read().split()[3].split("/")[0])
        return 1 if everyone <= 1 else max(1, everyone - _own_running() + 1)
    except (OSError, ValueError, IndexError):
        return None


def _own_running():
    """This process's threads and its children's that are runnable now (the reader's
    included)."""
    running, children = 0, []
    for task in os.listdir("/proc/self/task"):
        running += _running(f"/proc/self/task/{task}/stat")
        with contextlib.suppress(OSError):
            with open(f"/proc/self/task/{task}/children") as f:
                children += f.read().split()
    for pid in children:
        with contextlib.suppress(OSError):         # (it may have exited meanwhile)
            running += sum(_running(f"/proc/{pid}/task/{t}/stat")
                           for t in os.listdir(f"/proc/{pid}/task"))
    return running


def _running(stat_path):
    try:
        with open(stat_path) as f:
            return f.read().rpartition(")")[2].split()[0] == "R"
    except (OSError, IndexError):
        return False


def load():
    """The host's load as runnable threads, the caller's included: the 1-minute load
    average, or the threads runnable now (but for our own work) if fewer. The average
    lags: for a minute after a user's previous program (or a benchmark's previous run) it
    still counts that work, and a 2-CPU host running only the caller read as busy, so
    W18's first call compiled its matmul library before its module instead of beside it
    (lowering 0.70 -> 1.35 s on a host idle but for a load average of ~1.5). Our own
    compile worker, busy with the thread pool's module at that moment, made the same
    mistake (W20's first call compiled first: 1.59 s against 0.63-0.90 s)."""
    average, now = os.getloadavg()[0], runnable()
    for _ in range(2):          # a moment's other thread (a kernel worker...) is not load:
        if now is None or now <= 1:     # only what runs at each of three readings
            break
        time.sleep(0.001)
        now = min(now, runnable() or now)
    return average if now is None else min(average, now)


def idle_cores():
    """How many cores work started now would have to itself beside the caller's thread:
    the CPUs this process may use less half of one, less the load (at least 1, the
    caller's thread), rounded up."""
    return max(0, math.ceil(cores() - 0.5 - max(load(), 1.0)))


def idle_core():
    """Whether work started now has a core of its own beside the caller's thread."""
    return idle_cores() >= 1

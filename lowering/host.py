"""What the host offers this process now: the CPUs it may use, and how many of them are
idle. jit's background compiles, the llvm backend's library compiles beside a module and
the parts a long module is cut into all pay only with cores of their own (on a busy host
another thread only takes a share of the caller's cores), so all ask here."""
import math
import os


def cores():
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        return os.cpu_count() or 1


def runnable():
    """Threads runnable right now on the host, the reader's included (/proc/loadavg), or
    None where that is not known."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def load():
    """The host's load as runnable threads, the caller's included: the 1-minute load
    average, or the threads runnable now if fewer. The average lags: for a minute after a
    user's previous program (or a benchmark's previous run) it still counts that work,
    and a 2-CPU host running only the caller read as busy, so W18's first call compiled
    its matmul library before its module instead of beside it (lowering 0.70 -> 1.35 s
    on a host idle but for a load average of ~1.5)."""
    average, now = os.getloadavg()[0], runnable()
    return average if now is None else min(average, now)


def idle_cores():
    """How many cores work started now would have to itself beside the caller's thread:
    the CPUs this process may use less half of one, less the load (at least 1, the
    caller's thread), rounded up."""
    return max(0, math.ceil(cores() - 0.5 - max(load(), 1.0)))


def idle_core():
    """Whether work started now has a core of its own beside the caller's thread."""
    return idle_cores() >= 1
